import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/money/index.ts';
import type { Finding } from '../../src/payload/index.ts';
import { EXACT_BOTH_WAYS } from '../../src/reconciler/policy.ts';
import type { StatusConflict } from '../../src/reconciler/types.ts';
import {
  DEFAULT_RECONCILIATION_POLICY,
  ReconciliationInputError,
  ReconciliationPolicyError,
  VERDICT_ORDER,
  reconcileSwap,
  toSwapReconciled,
  worstVerdict,
  type ReconciliationPolicy,
  type FeeTolerance,
} from '../../src/reconciler/index.ts';
import { OK_FINDINGS, input, named, type Change } from './support.ts';

const run = (change: Change = {}, policy: ReconciliationPolicy = DEFAULT_RECONCILIATION_POLICY) =>
  reconcileSwap(input(change), policy);

const tolerance = (absolute: string, relative: string): FeeTolerance => ({
  absolute: new Decimal(absolute),
  relative: new Decimal(relative),
});
const providerPolicy = (t: FeeTolerance): ReconciliationPolicy => ({
  fees: {
    provider: { favour: t, disfavour: t },
    referral: EXACT_BOTH_WAYS,
    payoutNetwork: EXACT_BOTH_WAYS,
    sum: EXACT_BOTH_WAYS,
  },
});

describe('reconcileSwap: the whole result', () => {
  it('a swap reported exactly as signed is MATCHED, every check listed in a stable order', () => {
    const result = run();
    expect(result.verdict).toBe('MATCHED');
    expect(result.checks.map((c) => c.name)).toEqual([
      'status.final',
      'signature.valid',
      'signature.key_window',
      'signature.field',
      'signature.encoding',
      'signature.key',
      'signature.verify',
      'payload.decode',
      'payload.currency_from',
      'payload.currency_to',
      'quote.amount_to',
      'quote.fee.provider',
      'quote.fee.referral',
      'quote.fee.payout_network',
      'amount.to_wallet',
      'amount.partner_side',
      'fee.provider',
      'fee.referral',
      'fee.payout_network',
      'fee.sum',
      'fee.extra',
      'hash.payin',
      'hash.payout',
      'hash.refund',
      'status.conflict',
    ]);
    // The base swap's quote records no output (quote.*), no extra fee was reported and a FINISHED swap owes
    // no refund: those do not apply; every other check is MATCHED.
    const notApplicable = result.checks.filter((c) => c.verdict === 'NOT_APPLICABLE').map((c) => c.name);
    expect(notApplicable).toEqual([
      'quote.amount_to',
      'quote.fee.provider',
      'quote.fee.referral',
      'quote.fee.payout_network',
      'fee.extra',
      'hash.refund',
    ]);
    expect(result.checks.every((c) => c.verdict === 'MATCHED' || c.verdict === 'NOT_APPLICABLE')).toBe(true);
  });

  it('is pure: the same input gives the same result', () => {
    expect(run({ final: { amount: '1.1' } })).toEqual(run({ final: { amount: '1.1' } }));
  });

  it('one check within tolerance makes the swap WITHIN_TOLERANCE', () => {
    const result = run({ request: { slippage: '0.01' }, final: { amount: '1.23' } });
    expect(named(result, 'amount.to_wallet').verdict).toBe('WITHIN_TOLERANCE');
    expect(result.verdict).toBe('WITHIN_TOLERANCE');
  });

  it('a MISMATCH outranks an UNVERIFIABLE check', () => {
    const result = run({ final: { providerFees: null, payoutTransactionId: null } });
    expect(named(result, 'fee.provider').verdict).toBe('UNVERIFIABLE');
    expect(named(result, 'hash.payout').verdict).toBe('MISMATCH');
    expect(result.verdict).toBe('MISMATCH');
  });

  it('an UNVERIFIABLE check outranks WITHIN_TOLERANCE', () => {
    const result = run({ request: { slippage: '0.01' }, final: { amount: '1.23', providerFees: null } });
    expect(result.verdict).toBe('UNVERIFIABLE');
  });

  it('maps to the SwapReconciled payload', () => {
    const result = run();
    const event = toSwapReconciled(result, '0190f5a2-7b1c-7d4e-8f00-000000000001');
    expect(event.verdict).toBe('MATCHED');
    expect(event.basedOnEventId).toBe('0190f5a2-7b1c-7d4e-8f00-000000000001');
    expect(event.checks).toEqual(result.checks);
    expect(event.checks[0]).toEqual({
      name: 'status.final',
      verdict: 'MATCHED',
      expected: 'FINISHED or REFUNDED and final, or EXPIRED',
      actual: 'FINISHED (final)',
      delta: null,
      tolerance: null,
      detail: null,
    });
  });

  it('refuses a broken input or policy with a typed error', () => {
    expect(() =>
      reconcileSwap({ ...input(), inspection: undefined } as never, DEFAULT_RECONCILIATION_POLICY),
    ).toThrow(ReconciliationInputError);
    expect(() => run({ final: { final: 'yes' as unknown as boolean } })).toThrow(ReconciliationInputError);
    expect(() => run({ final: { payinTransactionId: 7 as unknown as string } })).toThrow(
      ReconciliationInputError,
    );
    expect(() => run({}, providerPolicy(tolerance('-0.1', '0')))).toThrow(ReconciliationPolicyError);
  });
});

describe('worstVerdict', () => {
  it('orders MATCHED < WITHIN_TOLERANCE < UNVERIFIABLE < MISMATCH', () => {
    expect(VERDICT_ORDER).toEqual(['MATCHED', 'WITHIN_TOLERANCE', 'UNVERIFIABLE', 'MISMATCH']);
    expect(worstVerdict([])).toBe('MATCHED');
    expect(worstVerdict(['MATCHED', 'WITHIN_TOLERANCE'])).toBe('WITHIN_TOLERANCE');
    expect(worstVerdict(['WITHIN_TOLERANCE', 'UNVERIFIABLE', 'MATCHED'])).toBe('UNVERIFIABLE');
    expect(worstVerdict(['MISMATCH', 'UNVERIFIABLE'])).toBe('MISMATCH');
    expect(worstVerdict(['UNVERIFIABLE', 'MISMATCH', 'MATCHED'])).toBe('MISMATCH');
    expect(() => worstVerdict(['OK' as never])).toThrow(ReconciliationInputError);
  });
});

// Fee checks: see fees.unit.spec.ts (directional tolerances, the sum, refunds and expiries).

describe('hash checks', () => {
  const hashes = (final: Change['final']) => {
    const result = run({ final });
    return [named(result, 'hash.payin'), named(result, 'hash.payout')];
  };

  it('FINISHED needs both hashes', () => {
    const [payin, payout] = hashes({});
    expect(payin).toMatchObject({
      verdict: 'MATCHED',
      expected: 'present',
      actual: 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16',
    });
    expect(payout!.verdict).toBe('MATCHED');
    expect(hashes({ payinTransactionId: null })[0]).toMatchObject({
      verdict: 'MISMATCH',
      expected: 'present',
      actual: 'absent',
      detail: 'FINISHED: a payin transaction expected',
    });
    expect(hashes({ payoutTransactionId: '' })[1]).toMatchObject({ verdict: 'MISMATCH', actual: 'absent' });
    expect(hashes({ payoutTransactionId: '  ' })[1]!.verdict).toBe('MISMATCH');
  });

  it('REFUNDED needs a payin hash and no payout', () => {
    const [payin, payout] = hashes({ status: 'REFUNDED', payoutTransactionId: null });
    expect(payin!.verdict).toBe('MATCHED');
    expect(payout).toMatchObject({ verdict: 'MATCHED', expected: 'absent', actual: 'absent' });
    expect(hashes({ status: 'REFUNDED' })[1]).toMatchObject({
      verdict: 'MISMATCH',
      expected: 'absent',
      detail: 'a payout to the user reported on a refund',
    });
    expect(
      hashes({ status: 'REFUNDED', payinTransactionId: null, payoutTransactionId: null })[0]!.verdict,
    ).toBe('MISMATCH');
  });

  it('EXPIRED needs neither', () => {
    const [payin, payout] = hashes({
      status: 'EXPIRED',
      payinTransactionId: null,
      payoutTransactionId: undefined,
    });
    expect(payin).toMatchObject({ verdict: 'MATCHED', expected: 'absent' });
    expect(payout!.verdict).toBe('MATCHED');
    expect(hashes({ status: 'EXPIRED', payoutTransactionId: null })[0]).toMatchObject({
      verdict: 'MISMATCH',
      detail: 'money moved on an expired swap: a deposit (payin) transaction reported',
    });
  });

  it('a status without rules, or a swap not final, is UNVERIFIABLE', () => {
    expect(hashes({ status: 'FAILED' }).map((c) => c.verdict)).toEqual(['UNVERIFIABLE', 'UNVERIFIABLE']);
    expect(hashes({ status: 'PENDING', final: false }).map((c) => c.verdict)).toEqual([
      'UNVERIFIABLE',
      'UNVERIFIABLE',
    ]);
  });
});

describe('status.final', () => {
  it.each(['FINISHED', 'REFUNDED', 'EXPIRED'])('%s and final is MATCHED', (status) => {
    expect(named(run({ final: { status } }), 'status.final').verdict).toBe('MATCHED');
  });

  it('a swap that has not ended is UNVERIFIABLE: there is no outcome to judge', () => {
    const result = run({ final: { status: 'PENDING', final: false, statusClass: 'open' } });
    expect(named(result, 'status.final')).toMatchObject({
      verdict: 'UNVERIFIABLE',
      actual: 'PENDING (open)',
      detail: 'the swap has not ended: there is no outcome to judge yet',
    });
    expect(result.verdict).toBe('UNVERIFIABLE');
  });

  it('a final status the interface gives no rules for is UNVERIFIABLE', () => {
    const c = named(run({ final: { status: 'FAILED' } }), 'status.final');
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', actual: 'FAILED (final)' });
  });
});

describe('signature and payload checks', () => {
  const signature = (findings: Finding[], signatureValid = false) =>
    named(run({ inspection: { signatureValid, keyId: undefined, findings } }), 'signature.valid');

  it('valid with a key valid at createdAt: MATCHED, naming the key', () => {
    expect(named(run(), 'signature.valid')).toMatchObject({
      verdict: 'MATCHED',
      expected: 'a valid signature by a partner key valid at 2026-11-22T12:20:00Z',
      actual: 'verified by key k1',
    });
  });

  it('a signature that does not verify is a MISMATCH, and so is the swap', () => {
    const findings: Finding[] = OK_FINDINGS.map((f) =>
      f.check === 'signature.verify'
        ? { check: f.check, outcome: 'violation', actual: 'does not verify' }
        : f,
    );
    const result = run({ inspection: { signatureValid: false, keyId: undefined, findings } });
    expect(named(result, 'signature.valid')).toMatchObject({
      verdict: 'MISMATCH',
      actual: 'does not verify',
    });
    expect(named(result, 'signature.verify')).toMatchObject({
      verdict: 'MISMATCH',
      actual: 'does not verify',
    });
    expect(result.verdict).toBe('MISMATCH');
  });

  it('no key valid at createdAt: UNVERIFIABLE, and so is the swap', () => {
    const result = run({
      inspection: {
        signatureValid: false,
        keyId: undefined,
        findings: [
          {
            check: 'signature.key_window',
            outcome: 'unverifiable',
            expected: 'a key valid at 2026-11-22T12:20:00Z',
            actual: 'none',
            detail: '1 key(s) configured, none valid at that time',
          },
          ...OK_FINDINGS.filter((f) => f.check.startsWith('payload.')),
        ],
      },
    });
    expect(named(result, 'signature.valid')).toMatchObject({
      verdict: 'UNVERIFIABLE',
      detail: 'no usable key: 1 key(s) configured, none valid at that time',
    });
    expect(named(result, 'signature.key_window').verdict).toBe('UNVERIFIABLE');
    expect(result.verdict).toBe('UNVERIFIABLE');
  });

  it('an unusable configured key is UNVERIFIABLE; a missing or malformed signature is a MISMATCH whatever the key', () => {
    expect(
      signature([
        {
          check: 'signature.key',
          outcome: 'violation',
          detail: 'the public key is not a point on secp256k1',
        },
        { check: 'signature.verify', outcome: 'unverifiable', detail: 'not checked: no usable key' },
      ]).verdict,
    ).toBe('UNVERIFIABLE');
    expect(
      signature([
        { check: 'signature.key_window', outcome: 'unverifiable', detail: 'none valid' },
        {
          check: 'signature.field',
          outcome: 'violation',
          detail: 'signature or payload_signature is missing or empty',
        },
      ]),
    ).toMatchObject({
      verdict: 'MISMATCH',
      detail: 'signature.field: signature or payload_signature is missing or empty',
    });
    expect(signature([{ check: 'signature.encoding', outcome: 'violation' }]).verdict).toBe('MISMATCH');
  });

  it('maps every finding to a check of the same name: ok, mismatch, violation, unverifiable', () => {
    const findings: Finding[] = [
      ...OK_FINDINGS,
      { check: 'payload.nonce_like', outcome: 'ok', expected: 'a', actual: 'a' },
      {
        check: 'payload.payout_address',
        outcome: 'mismatch',
        expected: '0xabc',
        actual: '0xABC',
        detail: 'differs only in letter case',
      },
      { check: 'device.amount_to_wallet.nonzero', outcome: 'violation', expected: 'not zero', actual: '0' },
      {
        check: 'payload.amount_to_provider',
        outcome: 'unverifiable',
        actual: '1150',
        detail: 'the fixed quote carries no amount echo',
      },
      { check: 'payload.future_rule', outcome: 'odd' as Finding['outcome'], detail: 'x' },
    ];
    const result = run({ inspection: { findings } });
    expect(named(result, 'payload.nonce_like')).toMatchObject({
      verdict: 'MATCHED',
      expected: 'a',
      actual: 'a',
    });
    expect(named(result, 'payload.payout_address')).toEqual({
      name: 'payload.payout_address',
      verdict: 'MISMATCH',
      expected: '0xabc',
      actual: '0xABC',
      delta: null,
      tolerance: null,
      detail: 'differs only in letter case',
    });
    expect(named(result, 'device.amount_to_wallet.nonzero')).toMatchObject({
      verdict: 'MISMATCH',
      actual: '0',
    });
    expect(named(result, 'payload.amount_to_provider')).toMatchObject({
      verdict: 'UNVERIFIABLE',
      detail: 'the fixed quote carries no amount echo',
    });
    expect(named(result, 'payload.future_rule')).toMatchObject({
      verdict: 'UNVERIFIABLE',
      detail: 'unknown finding outcome "odd": x',
    });
    expect(result.verdict).toBe('MISMATCH');
  });

  it('a payload that does not decode is a MISMATCH (payload.decode), its amount UNVERIFIABLE', () => {
    const result = run({
      inspection: {
        decoded: undefined,
        signatureValid: false,
        findings: [
          {
            check: 'payload.decode',
            outcome: 'violation',
            detail: 'payload is not a NewTransactionResponse: it is empty',
          },
        ],
      },
    });
    expect(named(result, 'payload.decode').verdict).toBe('MISMATCH');
    expect(named(result, 'amount.to_wallet').verdict).toBe('UNVERIFIABLE');
    expect(result.verdict).toBe('MISMATCH');
  });
});

describe("hash.refund: a refund's evidence", () => {
  const refund = (final: Change['final']) => named(run({ final }), 'hash.refund');
  const REFUNDED = { status: 'REFUNDED', payoutTransactionId: null, amount: null };

  it('REFUNDED with a refund hash: MATCHED, the hash shown', () => {
    expect(refund({ ...REFUNDED, refundTransactionId: 'bc1refundtx' })).toMatchObject({
      verdict: 'MATCHED',
      expected: 'present',
      actual: 'bc1refundtx',
      detail: null,
    });
    // The refund hash is not a payout: hash.payout still expects none, and gets none.
    expect(
      named(run({ final: { ...REFUNDED, refundTransactionId: 'bc1refundtx' } }), 'hash.payout').verdict,
    ).toBe('MATCHED');
  });

  it('REFUNDED without one: UNVERIFIABLE "refund not evidenced" (evidence missing, nothing proven wrong)', () => {
    for (const refundTransactionId of [null, undefined, '', '  ']) {
      const result = run({ final: { ...REFUNDED, refundTransactionId } });
      expect(named(result, 'hash.refund')).toMatchObject({
        verdict: 'UNVERIFIABLE',
        actual: 'absent',
        detail: 'refund not evidenced: no refund transaction reported',
      });
      expect(result.verdict).toBe('UNVERIFIABLE');
    }
  });

  it('a refund hash on a FINISHED swap is shown, NOT_APPLICABLE', () => {
    expect(refund({})).toMatchObject({ verdict: 'NOT_APPLICABLE', actual: 'absent' });
    const c = refund({ refundTransactionId: 'tx9' });
    expect(c).toMatchObject({ verdict: 'NOT_APPLICABLE', actual: 'tx9' });
    expect(c.detail).toContain('a refund transaction reported on a FINISHED swap');
  });

  it('a refund hash in payoutTransactionId of a REFUNDED swap is still a MISMATCH on hash.payout', () => {
    const result = run({ final: { status: 'REFUNDED', payoutTransactionId: 'bc1refundtx' } });
    expect(named(result, 'hash.payout').verdict).toBe('MISMATCH');
    expect(named(result, 'hash.refund').verdict).toBe('UNVERIFIABLE');
  });

  it('a refund hash that is not text is a caller bug', () => {
    expect(() => run({ final: { refundTransactionId: 5 as unknown as string } })).toThrow(
      ReconciliationInputError,
    );
  });
});

describe('status.conflict: reports contradicting the final state', () => {
  const conflict = (change: Partial<StatusConflict> = {}): StatusConflict => ({
    field: 'status',
    finalValue: 'FINISHED',
    reportedValue: 'REFUNDED',
    eventId: '0190f5a2-7b1c-7d4e-8f00-00000000000a',
    source: 'poll',
    ...change,
  });

  it('none (absent, null or empty): MATCHED', () => {
    for (const conflicts of [undefined, null, []] as const) {
      const result = run(conflicts === undefined ? {} : { conflicts: conflicts as StatusConflict[] | null });
      expect(named(result, 'status.conflict')).toMatchObject({ verdict: 'MATCHED', actual: 'none' });
      expect(result.verdict).toBe('MATCHED');
    }
  });

  it('any conflict is a MISMATCH listing them: expected the final values, actual the reported ones', () => {
    const result = run({
      conflicts: [
        conflict(),
        conflict({
          field: 'payoutTransactionId',
          finalValue: null,
          reportedValue: '0xabc',
          eventId: 'e2',
          source: 'webhook',
        }),
      ],
    });
    const c = named(result, 'status.conflict');
    expect(c).toMatchObject({
      verdict: 'MISMATCH',
      expected: 'status=FINISHED; payoutTransactionId=absent',
      actual: 'status=REFUNDED; payoutTransactionId=0xabc',
    });
    expect(c.detail).toBe(
      '2 report(s) contradicted the final state: status REFUNDED (final FINISHED) by poll, event 0190f5a2-7b1c-7d4e-8f00-00000000000a; payoutTransactionId 0xabc (final absent) by webhook, event e2',
    );
    expect(result.verdict).toBe('MISMATCH');
  });

  it('refuses a malformed conflict list with a typed error (a caller bug)', () => {
    expect(() => run({ conflicts: 'none' as never })).toThrow(ReconciliationInputError);
    expect(() => run({ conflicts: [conflict({ eventId: '' })] })).toThrow(/conflicts\[0\]\.eventId/);
    expect(() => run({ conflicts: [conflict({ reportedValue: 1 as never })] })).toThrow(
      /conflicts\[0\]\.reportedValue must be text or null/,
    );
  });
});
