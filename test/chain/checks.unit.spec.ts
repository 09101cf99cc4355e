import { describe, expect, it } from 'vitest';
import { reconcileSwap } from '../../src/reconciler/checks.ts';
import { chainChecks, sameAddress } from '../../src/reconciler/chain-checks.ts';
import { classify } from '../../src/reconciler/inputs.ts';
import type { ChainEvidence, ChainObservation, ReconciliationInput } from '../../src/reconciler/types.ts';
import { Decimal } from '../../src/money/decimal.ts';
import {
  DEFAULT_CHAIN_POLICY,
  DEFAULT_RECONCILIATION_POLICY,
  type ChainPolicy,
} from '../../src/reconciler/policy.ts';
import { BASE_FINAL, BASE_REQUEST, BASE_CREATION, input, type Change } from '../reconciler/support.ts';

const PAYOUT = BASE_FINAL.payoutTransactionId!;
const PAYIN = BASE_FINAL.payinTransactionId!;
const USER = BASE_REQUEST.payoutAddress;
// 1.234147890123456789 ETH reported
const REPORTED = 1234147890123456789n;

function observation(change: Partial<ChainObservation> = {}): ChainObservation {
  return {
    role: 'payout',
    txid: PAYOUT,
    currency: 'ETH',
    chain: 'ethereum',
    family: 'evm',
    status: 'found',
    confirmations: 12,
    requiredConfirmations: 12,
    block: 100,
    asset: 'native',
    decimals: 18,
    transfers: [
      { asset: 'native', recipient: USER.toUpperCase().replace('0X', '0x'), amount: REPORTED.toString() },
    ],
    source: 'evm-rpc ethereum (ETH_RPC_URL)',
    proven: true,
    deadlinePassed: false,
    observedAt: '2026-11-22T13:00:00.000Z',
    detail: null,
    eventId: '0192f0a0-0000-7000-8000-000000000001',
    ...change,
  };
}

const payin = (change: Partial<ChainObservation> = {}) =>
  observation({
    role: 'payin',
    txid: PAYIN,
    currency: 'BTC',
    chain: 'bitcoin',
    family: 'utxo',
    requiredConfirmations: 2,
    confirmations: 3,
    decimals: 8,
    transfers: [{ asset: 'native', recipient: BASE_CREATION.payinAddress, amount: '5000000' }],
    ...change,
  });

function judged(
  observations: ChainObservation[],
  change: Change = {},
  evidence: Partial<ChainEvidence> = {},
  policy: ChainPolicy = DEFAULT_CHAIN_POLICY,
) {
  const i: ReconciliationInput = {
    ...input(change),
    chain: { sourced: ['ETH', 'BTC'], observations, ...evidence },
  };
  const checks = chainChecks(i, classify(i.final.status, i.final.final, i.final.statusClass), policy);
  return Object.fromEntries(checks.map((c) => [c.name, c]));
}

describe('chain checks (pure)', () => {
  it('a right payout and payin at depth: MATCHED, naming where it was seen', () => {
    const c = judged([observation(), payin()]);
    expect(c['chain.payout']!.verdict).toBe('MATCHED');
    expect(c['chain.payout']!.detail).toMatch(/found on ethereum in block 100, 12\/12/);
    expect(c['chain.payin']!.verdict).toBe('MATCHED');
    expect(c['chain.refund']!.verdict).toBe('NOT_APPLICABLE');
  });

  it('several transfers to the address in the asset are summed', () => {
    const half = (REPORTED / 2n).toString();
    const rest = (REPORTED - REPORTED / 2n).toString();
    const c = judged([
      observation({
        transfers: [
          { asset: 'native', recipient: USER, amount: half },
          { asset: 'native', recipient: '0x0000000000000000000000000000000000000001', amount: '5' },
          { asset: 'native', recipient: USER, amount: rest },
        ],
      }),
    ]);
    expect(c['chain.payout']!.verdict).toBe('MATCHED');
  });

  it('a short payout is a MISMATCH with the shortfall', () => {
    const c = judged([observation({ transfers: [{ asset: 'native', recipient: USER, amount: '1000' }] })]);
    expect(c['chain.payout']).toMatchObject({ verdict: 'MISMATCH', delta: `-${REPORTED - 1000n}` });
    expect(c['chain.payout']!.detail).toMatch(/less than the partner reported/);
  });

  it('a payout to another address is a MISMATCH naming where it went', () => {
    const other = '0x1111111111111111111111111111111111111111';
    const c = judged([
      observation({ transfers: [{ asset: 'native', recipient: other, amount: REPORTED.toString() }] }),
    ]);
    expect(c['chain.payout']!.verdict).toBe('MISMATCH');
    expect(c['chain.payout']!.detail).toContain(
      `does not pay the signed payout address: it pays ${REPORTED} native to ${other}`,
    );
  });

  it('a payout in another token is a MISMATCH', () => {
    const usdt = '0xdac17f958d2ee523a2206206994597c13d831ec7';
    const c = judged(
      [
        observation({
          asset: usdt,
          decimals: 6,
          transfers: [
            {
              asset: '0x2222222222222222222222222222222222222222',
              recipient: USER,
              amount: '99999999999999',
            },
          ],
        }),
      ],
      { final: { amount: '10' } },
    );
    expect(c['chain.payout']!.verdict).toBe('MISMATCH');
    expect(c['chain.payout']!.detail).toMatch(/another asset/);
  });

  it('a reverted payout paid nothing: MISMATCH', () => {
    const c = judged([observation({ status: 'reverted', transfers: [] })]);
    expect(c['chain.payout']!.verdict).toBe('MISMATCH');
    expect(c['chain.payout']!.detail).toMatch(/failed on the chain/);
  });

  it('not found: UNVERIFIABLE awaiting the chain before the deadline, MISMATCH after it', () => {
    const before = judged([
      observation({ status: 'not_found', confirmations: 0, block: null, transfers: [] }),
    ]);
    expect(before['chain.payout']!.verdict).toBe('UNVERIFIABLE');
    expect(before['chain.payout']!.detail).toMatch(/^awaiting the chain/);
    const after = judged([
      observation({
        status: 'not_found',
        confirmations: 0,
        block: null,
        transfers: [],
        deadlinePassed: true,
      }),
    ]);
    expect(after['chain.payout']!.verdict).toBe('MISMATCH');
    expect(after['chain.payout']!.detail).toMatch(/not found on the chain by the deadline/);
  });

  it('unconfirmed then confirmed: UNVERIFIABLE, then MATCHED on the later observation', () => {
    const pending = observation({ status: 'pending', confirmations: 1 });
    expect(judged([pending])['chain.payout']).toMatchObject({
      verdict: 'UNVERIFIABLE',
      detail: expect.stringMatching(/awaiting the chain: 1 of 12 confirmations/),
    });
    expect(judged([pending, observation()])['chain.payout']!.verdict).toBe('MATCHED');
  });

  it('no observation yet: UNVERIFIABLE awaiting the chain; no source for the currency: says so', () => {
    expect(judged([])['chain.payout']!.detail).toMatch(/awaiting the chain: payout .* not observed yet/);
    expect(judged([], {}, { sourced: ['BTC'] })['chain.payout']).toMatchObject({
      verdict: 'UNVERIFIABLE',
      detail: 'no chain source for ETH',
    });
  });

  it('a short payin is the user’s, and named so', () => {
    const c = judged([
      observation(),
      payin({ transfers: [{ asset: 'native', recipient: BASE_CREATION.payinAddress, amount: '4000000' }] }),
    ]);
    expect(c['chain.payin']).toMatchObject({ verdict: 'MISMATCH', delta: '-1000000' });
    expect(c['chain.payin']!.detail).toMatch(
      /short payin: the user sent 1000000 atomic units less .*the user's shortfall/,
    );
  });

  it('a refund: checked against the signed refund address; the payout is not applicable', () => {
    const refundTx = 'aa'.repeat(32);
    const refund = payin({
      role: 'refund',
      txid: refundTx,
      transfers: [{ asset: 'native', recipient: BASE_REQUEST.refundAddress, amount: '4900000' }],
    });
    const final = {
      status: 'REFUNDED',
      amount: null,
      payoutTransactionId: null,
      refundTransactionId: refundTx,
    };
    const c = judged([payin(), { ...refund, transfers: [{ ...refund.transfers[0]!, amount: '5000000' }] }], {
      final,
    });
    expect(c['chain.refund']!.verdict).toBe('MATCHED');
    expect(c['chain.payout']!.verdict).toBe('NOT_APPLICABLE');
    const elsewhere = judged(
      [
        payin(),
        { ...refund, transfers: [{ asset: 'native', recipient: BASE_CREATION.payinAddress, amount: '1' }] },
      ],
      { final },
    );
    expect(elsewhere['chain.refund']!.verdict).toBe('MISMATCH');
  });

  it('an expired swap has nothing to look up: every chain check NOT_APPLICABLE', () => {
    const c = judged([], {
      final: {
        status: 'EXPIRED',
        final: false,
        statusClass: 'closed',
        amount: null,
        payinTransactionId: null,
        payoutTransactionId: null,
      },
    });
    expect(Object.values(c).map((x) => x.verdict)).toEqual([
      'NOT_APPLICABLE',
      'NOT_APPLICABLE',
      'NOT_APPLICABLE',
      'NOT_APPLICABLE',
    ]);
  });

  it('an extra id (memo) is said to be unseen, never silently passed', () => {
    const c = judged([observation()], { decoded: { payout_extra_id: '12345' } });
    expect(c['chain.payout']!.verdict).toBe('MATCHED');
    expect(c['chain.payout']!.detail).toMatch(
      /extra id \(memo 12345\) could not be seen on the chain: not checked/,
    );
  });

  it('a contract call that moved no visible native value: UNVERIFIABLE, not a MISMATCH', () => {
    const c = judged([observation({ transfers: [], contractCall: true })]);
    expect(c['chain.payout']!.verdict).toBe('UNVERIFIABLE');
    // Not a contract call (the field, not a note in the detail): a payout paying nothing to the user.
    const plain = judged([observation({ transfers: [], detail: 'a contract call' })]);
    expect(plain['chain.payout']!.verdict).toBe('MISMATCH');
  });

  it('an amount finer than the unit is UNVERIFIABLE, never rounded', () => {
    const c = judged([observation({ decimals: 6 })]);
    expect(c['chain.payout']!.verdict).toBe('UNVERIFIABLE');
    expect(c['chain.payout']!.detail).toMatch(/rounding/);
  });

  it('reconcileSwap puts them after the hash checks, and counts them; without evidence none is made', () => {
    const i = {
      ...input(),
      chain: {
        sourced: ['ETH', 'BTC'],
        observations: [observation({ status: 'reverted', transfers: [] }), payin()],
      },
    };
    const result = reconcileSwap(i, DEFAULT_RECONCILIATION_POLICY);
    const names = result.checks.map((c) => c.name);
    expect(names.indexOf('chain.payin')).toBe(names.indexOf('hash.refund') + 1);
    expect(result.verdict).toBe('MISMATCH');
    expect(
      reconcileSwap(input(), DEFAULT_RECONCILIATION_POLICY).checks.some((c) => c.name.startsWith('chain.')),
    ).toBe(false);
  });

  it('addresses: EVM and bech32 case-insensitive, base58 exact', () => {
    expect(sameAddress('evm', '0xAbC', '0xabc')).toBe(true);
    expect(
      sameAddress(
        'utxo',
        'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4',
        'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
      ),
    ).toBe(true);
    expect(
      sameAddress('utxo', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', '1bvbmseystwetqtfn5au4m4gfg7xjanvn2'),
    ).toBe(false);
  });

  describe('one transfer, one claim', () => {
    const claim = (heldBy: string | null, claimants = 1) => ({
      role: 'payout' as const,
      txid: PAYOUT,
      transfer: 'native',
      heldBy,
      claimants,
    });
    it('a transfer another swap claimed first: MISMATCH "already evidences" naming it', () => {
      const c = judged([observation()], {}, { claims: [claim('partner-a/first (payout)')] });
      expect(c['chain.payout']!.verdict).toBe('MISMATCH');
      expect(c['chain.payout']!.detail).toMatch(/already evidences partner-a\/first \(payout\)/);
    });
    it('claimed by another swap and mined before this one: MISMATCH naming both, whatever the timing', () => {
      const c = judged(
        [observation({ blockTime: '2026-11-22T10:19:59.000Z' })],
        {},
        {
          claims: [claim('partner-a/first (payout)')],
        },
      );
      expect(c['chain.payout']!.verdict).toBe('MISMATCH');
      expect(c['chain.payout']!.detail).toMatch(
        /^the payout transaction's transfer already evidences partner-a\/first \(payout\) .*; and the payout transaction predates the swap: mined at 2026-11-22T10:19:59.000Z/,
      );
    });
    it('the transfer this swap holds (a batch payout: others hold other outputs): MATCHED', () => {
      const c = judged([observation()], {}, { claims: [claim(null, 3)] });
      expect(c['chain.payout']!.verdict).toBe('MATCHED');
    });
  });

  describe('a transfer older than the swap', () => {
    // BASE_CREATION.createdAt is 2026-11-22T12:20:00Z; the allowance defaults to 7200 s.
    it('mined before the creation less the clock allowance: MISMATCH "predates the swap"', () => {
      const c = judged([observation({ blockTime: '2026-11-22T10:19:59.000Z' })]);
      expect(c['chain.payout']!.verdict).toBe('MISMATCH');
      expect(c['chain.payout']!.detail).toMatch(/predates the swap/);
    });
    it('within the allowance, or after the creation, or not yet mined: judged as before', () => {
      for (const blockTime of ['2026-11-22T10:20:00.000Z', '2026-11-22T13:00:00.000Z', null])
        expect(judged([observation({ blockTime })])['chain.payout']!.verdict).toBe('MATCHED');
    });
    it('the allowance is a setting', () => {
      const strict = { ...DEFAULT_CHAIN_POLICY, clockAllowanceSeconds: 0 };
      const c = judged([observation({ blockTime: '2026-11-22T12:19:59.000Z' })], {}, {}, strict);
      expect(c['chain.payout']!.verdict).toBe('MISMATCH');
    });
  });

  describe('refunds', () => {
    const refundTx = 'bb'.repeat(32);
    const final = {
      status: 'REFUNDED',
      amount: null,
      payoutTransactionId: null,
      refundTransactionId: refundTx,
    };
    const refund = (amount: string) =>
      payin({
        role: 'refund',
        txid: refundTx,
        transfers: [{ asset: 'native', recipient: BASE_REQUEST.refundAddress, amount }],
      });
    it('a dust refund (546 satoshi against the 0.05 BTC payin): MISMATCH, short refund', () => {
      const c = judged([payin(), refund('546')], { final });
      expect(c['chain.refund']!.verdict).toBe('MISMATCH');
      expect(c['chain.refund']!.delta).toBe('-4999454');
      expect(c['chain.refund']!.detail).toMatch(/short refund/);
    });
    it('the payin less the currency refund network-fee allowance: MATCHED; below it: MISMATCH', () => {
      const policy = { ...DEFAULT_CHAIN_POLICY, refundFeeAllowance: { BTC: new Decimal('0.0001') } };
      expect(judged([payin(), refund('4990000')], { final }, {}, policy)['chain.refund']!.verdict).toBe(
        'MATCHED',
      );
      expect(judged([payin(), refund('4989999')], { final }, {}, policy)['chain.refund']!.verdict).toBe(
        'MISMATCH',
      );
    });
    it("a refund hash that is the swap's payin hash: MISMATCH, in hash.refund even without a chain source", () => {
      const reused = { ...final, refundTransactionId: PAYIN };
      expect(judged([payin()], { final: reused })['chain.refund']!.verdict).toBe('MISMATCH');
      const noSource = reconcileSwap(input({ final: reused }), DEFAULT_RECONCILIATION_POLICY);
      const hash = noSource.checks.find((x) => x.name === 'hash.refund')!;
      expect(hash.verdict).toBe('MISMATCH');
      expect(hash.detail).toMatch(/payin transaction: a payin is not a refund/);
      expect(noSource.verdict).toBe('MISMATCH');
    });
  });

  describe('sources held to account', () => {
    it('a refused answer before the deadline: UNVERIFIABLE awaiting; past it: "source unreliable"', () => {
      const refused = { status: 'refused', transfers: [], detail: 'the bytes hash to another txid' };
      const before = judged([observation(refused)]);
      expect(before['chain.payout']!.verdict).toBe('UNVERIFIABLE');
      expect(before['chain.payout']!.detail).toMatch(/^awaiting the chain/);
      const after = judged([observation({ ...refused, deadlinePassed: true })]);
      expect(after['chain.payout']!.verdict).toBe('UNVERIFIABLE');
      expect(after['chain.payout']!.detail).toMatch(/^source unreliable: .*the bytes hash to another txid/);
    });
    it('unconfirmed at the deadline: UNVERIFIABLE "unconfirmed past the deadline"', () => {
      const c = judged([observation({ status: 'pending', confirmations: 1, deadlinePassed: true })]);
      expect(c['chain.payout']!.verdict).toBe('UNVERIFIABLE');
      expect(c['chain.payout']!.detail).toMatch(/^unconfirmed past the deadline: 1 of 12/);
    });
  });

  describe('chain.network_fee', () => {
    // BASE_FINAL reports a payout network fee of 0.00042 ETH = 420000000000000 wei.
    const FEE = 420000000000000n;
    const fee = (c: Record<string, { verdict: string; detail?: string | null; delta?: string | null }>) =>
      c['chain.network_fee']!;
    it('the reported fee equal to the fee spent: MATCHED; above it: MISMATCH (the user paid more)', () => {
      expect(fee(judged([observation({ fee: FEE.toString() })])).verdict).toBe('MATCHED');
      const above = fee(judged([observation({ fee: (FEE - 1000n).toString() })]));
      expect(above.verdict).toBe('MISMATCH');
      expect(above.delta).toBe('+1000');
    });
    it('below the fee spent: the partner paid it, MATCHED', () => {
      expect(fee(judged([observation({ fee: (FEE + 1n).toString() })])).verdict).toBe('MATCHED');
    });
    it('a batch payout: the fee shared by the swaps claiming its transfers; a share needing rounding: UNVERIFIABLE', () => {
      const claims = (claimants: number) => ({
        claims: [{ role: 'payout' as const, txid: PAYOUT, transfer: '0', heldBy: null, claimants }],
      });
      expect(fee(judged([observation({ fee: (FEE * 3n).toString() })], {}, claims(3))).verdict).toBe(
        'MATCHED',
      );
      expect(fee(judged([observation({ fee: (FEE * 3n - 3n).toString() })], {}, claims(3))).verdict).toBe(
        'MISMATCH',
      );
      // fee = 3 × FEE − 1: the share is FEE − 1/3, which the reported FEE rounds up.
      expect(fee(judged([observation({ fee: (FEE * 3n - 1n).toString() })], {}, claims(3))).verdict).toBe(
        'UNVERIFIABLE',
      );
    });
    it('NOT_APPLICABLE for a token payout and a swap not FINISHED; UNVERIFIABLE when the fee is unknown', () => {
      const token = observation({
        asset: '0xdac17f958d2ee523a2206206994597c13d831ec7',
        fee: '1',
        transfers: [
          {
            asset: '0xdac17f958d2ee523a2206206994597c13d831ec7',
            recipient: USER,
            amount: REPORTED.toString(),
          },
        ],
      });
      expect(fee(judged([token])).verdict).toBe('NOT_APPLICABLE');
      const refunded = {
        status: 'REFUNDED',
        amount: null,
        payoutTransactionId: null,
        refundTransactionId: 'r',
      };
      expect(fee(judged([observation({ fee: '1' })], { final: refunded })).verdict).toBe('NOT_APPLICABLE');
      expect(fee(judged([observation()])).verdict).toBe('UNVERIFIABLE');
    });
  });
});
