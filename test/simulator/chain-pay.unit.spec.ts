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
  // The simulator's clock, moved by the test: a transfer made ahead is older than a swap created later.
  const clock = { ms: Date.parse('2026-11-28T12:00:00.000Z') };
  const now = () => new Date(clock.ms);
  const sim = await startPartnerSimulator(
    chain
      ? {
          now,
          chain: {
            pay: async (m) => {
              moves.push(m);
              return m.currency.id === 'sol' ? undefined : `0x${randomBytes(32).toString('hex')}`;
            },
          },
        }
      : { now },
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
  return { sim, moves, swap, clock };
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

  it("payout-claimed-twice: no payout made, the earlier swap's payout to the same address reported again", async () => {
    const { sim, moves, swap } = await start();
    const first = await sim.advancePaying(await swap(), 'FINISHED');
    const firstPayout = moves.at(-1)!;
    expect(firstPayout).toMatchObject({ role: 'payout', to: USER_ETH, swapId: first.swapId });
    const before = moves.length;
    const twice = await sim.advancePaying(await swap(['payout-claimed-twice']), 'FINISHED');
    // Only its payin is made; its payout is the first swap's transaction, which paid at least its amount.
    expect(moves.slice(before).map((m) => m.role)).toEqual(['payin']);
    expect(twice.report.payoutTransactionId).toBe(first.report.payoutTransactionId);
    expect(firstPayout.amount).toBeGreaterThanOrEqual(atomic18(String(twice.report.amount)));
    expect(twice.report.payinTransactionId).not.toBe(first.report.payinTransactionId);
  });

  it('payout-claimed-twice with no earlier payout to the address: paid as usual', async () => {
    const { sim, moves, swap } = await start();
    const alone = await sim.advancePaying(await swap(['payout-claimed-twice']), 'FINISHED');
    expect(moves.map((m) => m.role)).toEqual(['payin', 'payout']);
    expect(moves[1]).toMatchObject({ to: USER_ETH, amount: atomic18(String(alone.report.amount)) });
  });

  it('payout-predates-swap: the transfer paid ahead, before the swap, to its address and of at least its amount, reported; once', async () => {
    const { sim, moves, swap, clock } = await start();
    const small = await sim.payAhead('eth', USER_ETH, '0.000001');
    const ahead = await sim.payAhead('eth', USER_ETH, '10');
    expect(moves.map((m) => [m.role, m.swapId, m.currency.id, m.to])).toEqual([
      ['payout', undefined, 'eth', USER_ETH],
      ['payout', undefined, 'eth', USER_ETH],
    ]);
    expect(moves[1]!.amount).toBe(atomic18('10'));
    clock.ms += 60_000;
    const id = await swap(['payout-predates-swap']);
    const done = await sim.advancePaying(id, 'FINISHED');
    expect(moves.slice(2).map((m) => m.role)).toEqual(['payin']);
    expect(done.report.payoutTransactionId).toBe(ahead);
    expect(done.report.payoutTransactionId).not.toBe(small);
    expect(Date.parse(done.createdAt)).toBeGreaterThan(clock.ms - 60_000);
    // The transfer is now this swap's: a second such swap finds none left and pays as usual.
    const again = await sim.advancePaying(await swap(['payout-predates-swap']), 'FINISHED');
    expect(moves.slice(3).map((m) => m.role)).toEqual(['payin', 'payout']);
    expect(again.report.payoutTransactionId).not.toBe(ahead);
  });

  it('payout-predates-swap: a transfer made after the swap was created is not reported', async () => {
    const { sim, moves, swap, clock } = await start();
    const id = await swap(['payout-predates-swap']);
    clock.ms += 60_000;
    const later = await sim.payAhead('eth', USER_ETH, '10');
    const done = await sim.advancePaying(id, 'FINISHED');
    expect(moves.map((m) => m.role)).toEqual(['payout', 'payin', 'payout']);
    expect(done.report.payoutTransactionId).not.toBe(later);
  });

  it('payAhead: a currency the simulator does not list is refused; without a chain nothing is paid', async () => {
    const { sim } = await start();
    await expect(sim.payAhead('doge', USER_ETH, '1')).rejects.toThrow(/doge/);
    const bare = await start(false);
    expect(await bare.sim.payAhead('eth', USER_ETH, '1')).toBeUndefined();
    expect(bare.moves).toEqual([]);
  });

  it('refund-dust: the refund pays the refund address a thousandth of the payin, its hash reported', async () => {
    const { sim, moves, swap } = await start();
    const refunded = await sim.advancePaying(await swap(['refund-dust']), 'REFUNDED');
    const signed = refunded.signed.fields.amount_to_provider;
    expect(moves.map((m) => [m.role, m.currency.id, m.to])).toEqual([
      ['payin', 'btc', refunded.response.payinAddress],
      ['refund', 'btc', USER_BTC],
    ]);
    expect(moves[1]!.amount).toBe(signed / 1000n);
    expect(moves[1]!.amount).toBeGreaterThan(0n);
    expect(refunded.report.payoutTransactionId).toMatch(/^0x/);
    expect(refunded.report.payoutTransactionId).not.toBe(refunded.report.payinTransactionId);
  });

  it("refund-is-payin: no refund made, the payin's hash reported as the refund's (with or without a chain)", async () => {
    const { sim, moves, swap } = await start();
    const id = await swap(['refund-is-payin']);
    await sim.advancePaying(id, 'ON_HOLD');
    const refunded = await sim.advancePaying(id, 'REFUNDED');
    expect(moves.map((m) => m.role)).toEqual(['payin']);
    expect(refunded.report.payinTransactionId).toMatch(/^0x[0-9a-f]{64}$/);
    expect(refunded.report.payoutTransactionId).toBe(refunded.report.payinTransactionId);
    const bare = await start(false);
    const plain = await bare.sim.advancePaying(await bare.swap(['refund-is-payin']), 'REFUNDED');
    expect(plain.report.payoutTransactionId).toBe(plain.report.payinTransactionId);
    expect(plain.report.payinTransactionId).toMatch(/^[0-9a-f]{64}$/); // a BTC payin's random hash
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
