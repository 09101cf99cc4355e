import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { PartnerClient } from '../../src/partner/index.ts';
import {
  startPartnerSimulator,
  type ChainMove,
  type PartnerSimulator,
  type SwapFault,
} from '../../src/simulator/index.ts';

/**
 * The simulator's payments (advancePaying with a `chain`): which transactions a status brings, to whom and
 * how much, and that the hashes reported are the chain's. The chain here records the moves and answers a
 * hash of its own; test/demo/chain.int.spec.ts pays on real chains.
 */

const USER_ETH = '0xb794f5ea0ba39494ce839613fffba74279579268';
const USER_BTC = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';

const sims: PartnerSimulator[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
});

async function start(chain = true) {
  const moves: ChainMove[] = [];
  const sim = await startPartnerSimulator(
    chain
      ? {
          chain: {
            pay: async (m) => {
              moves.push(m);
              return m.currency.id === 'sol' ? undefined : `0x${randomBytes(32).toString('hex')}`;
            },
          },
        }
      : {},
  );
  sims.push(sim);
  const client = new PartnerClient({
    provider: 'sim',
    baseUrl: sim.url,
    payloadKeys: [sim.partnerKey()],
    retry: { maxAttempts: 1 },
  });
  const swap = async (faults: SwapFault[] = [], to = 'eth') => {
    if (faults.length) sim.injectSwapFaults(faults, { nextSwaps: 1 });
    const created = await client.createFloatSwap({
      amount: '0.01',
      refundAddress: USER_BTC,
      payoutAddress: to === 'eth' ? USER_ETH : '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV',
      currencyFrom: 'btc',
      currencyTo: to,
      payloadCurrencyFrom: 'BTC',
      payloadCurrencyTo: to.toUpperCase(),
      nonce: randomBytes(32).toString('hex'),
    });
    return created.swap.swapId;
  };
  return { sim, moves, swap };
}

const atomic18 = (decimal: string) => {
  const [whole, fraction = ''] = decimal.split('.');
  return BigInt(whole! + fraction.padEnd(18, '0'));
};

describe('simulator payments on a chain', () => {
  it('a finished swap: the payin to the payin address (signed amount), the payout to the user (reported amount), their hashes reported', async () => {
    const { sim, moves, swap } = await start();
    const id = await swap();
    const exchanging = await sim.advancePaying(id, 'EXCHANGING');
    expect(moves).toHaveLength(1);
    const payin = moves[0]!;
    expect(payin).toMatchObject({ role: 'payin', to: exchanging.response.payinAddress });
    expect(payin.currency.id).toBe('btc');
    expect(payin.amount).toBe(exchanging.signed.fields.amount_to_provider);
    const done = await sim.advancePaying(id, 'FINISHED');
    expect(moves).toHaveLength(2); // the payin is not made twice
    const payout = moves[1]!;
    expect(payout).toMatchObject({
      role: 'payout',
      to: USER_ETH,
      amount: atomic18(String(done.report.amount)),
    });
    expect(done.report.payinTransactionId).toMatch(/^0x[0-9a-f]{64}$/);
    expect(done.report.payoutTransactionId).not.toBe(done.report.payinTransactionId);
  });

  it('a refund goes back to the refund address in the source coin, its hash where the interface carries it', async () => {
    const { sim, moves, swap } = await start();
    const id = await swap();
    const refunded = await sim.advancePaying(id, 'REFUNDED');
    expect(moves.map((m) => [m.role, m.currency.id, m.to])).toEqual([
      ['payin', 'btc', refunded.response.payinAddress],
      ['refund', 'btc', USER_BTC],
    ]);
    expect(moves[1]!.amount).toBe(refunded.signed.fields.amount_to_provider);
    expect(refunded.report.payoutTransactionId).toMatch(/^0x/);
  });

  it('faults count as reported: a payout of half for final-amount-below-signed, none when its hash is not reported, elsewhere for payout-wrong-address', async () => {
    const { sim, moves, swap } = await start();
    const half = await sim.advancePaying(await swap(['final-amount-below-signed']), 'FINISHED');
    expect(moves.at(-1)!.amount).toBe(atomic18(String(half.report.amount)));
    expect(moves.at(-1)!.amount * 2n).toBeLessThanOrEqual(atomic18(half.amountTo));

    const before = moves.length;
    await sim.advancePaying(await swap(['missing-payout-hash']), 'FINISHED');
    expect(moves.slice(before).map((m) => m.role)).toEqual(['payin']);

    const wrong = await sim.advancePaying(await swap(['payout-wrong-address']), 'FINISHED');
    const misdirected = moves.at(-1)!;
    expect(misdirected.role).toBe('payout');
    expect(misdirected.to).toMatch(/^0x[0-9a-f]{40}$/);
    expect(misdirected.to).not.toBe(USER_ETH);
    expect(wrong.report.payoutTransactionId).toMatch(/^0x/);
  });

  it('a currency the chain does not carry, or no chain at all: a random hash, as before', async () => {
    const { sim, swap } = await start();
    const sol = await sim.advancePaying(await swap([], 'sol'), 'FINISHED');
    expect(sol.report.payoutTransactionId).toMatch(/^[0-9a-f]{64}$/);
    const bare = await start(false);
    const done = await bare.sim.advancePaying(await bare.swap(), 'FINISHED');
    expect(done.report.payoutTransactionId).toMatch(/^0x[0-9a-f]{64}$/);
    expect(bare.moves).toEqual([]);
  });

  it('a BTC payin address is valid bech32 a chain can pay', async () => {
    const { sim, swap } = await start();
    const { address, networks } = await import('bitcoinjs-lib');
    const view = sim.swap(await swap())!;
    expect(() => address.toOutputScript(String(view.response.payinAddress), networks.bitcoin)).not.toThrow();
  });
});
