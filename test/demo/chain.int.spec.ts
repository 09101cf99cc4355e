import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chainClients,
  loadChainSources,
  type ChainClient,
  type ChainSources,
} from '../../src/chain/index.ts';
import { verifyChainSources } from '../../src/chain/index.ts';
import { startDemoChain, writeDemoChainSources, type DemoChain } from '../../src/demo/chain.ts';
import { DemoChainPayer } from '../../src/demo/payer.ts';
import { freePort } from '../../src/demo/provision.ts';
import { createLogger } from '../../src/observability/log.ts';
import { PartnerClient } from '../../src/partner/index.ts';
import { startPartnerSimulator, type PartnerSimulator } from '../../src/simulator/index.ts';
import { lookUpPayment } from '../../src/ops/chain-payment.ts';
import { toAtomicUnits } from '../../src/money/atomic.ts';

/**
 * The demo's chains as `up` runs them (Hardhat's node with the demo tokens, the demo Esplora server) and the
 * simulator paying on them: each payin, payout and refund it reports is a real transaction the chain sources
 * file `up` writes lets the watcher's clients find, to the right address, in the right asset and amount;
 * a 'payout-wrong-address' swap's reported payout pays another address; issue 41's faults report real
 * transactions that only their rule can fault (a payout cited twice, one older than its swap, a dust refund,
 * the payin's hash as the refund's).
 */

const USER: Record<string, string> = {
  btc: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
  ltc: 'ltc1qvuxmy0a9hjxtf0kzavuhpta4q0slgjq8j4cfmz',
  eth: '0xb794f5ea0ba39494ce839613fffba74279579268',
  usdt: '0xb794f5ea0ba39494ce839613fffba74279579268',
  bat: '0xb794f5ea0ba39494ce839613fffba74279579268',
  sol: '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV',
};
const PLATFORM: Record<string, string> = {
  btc: 'BTC',
  ltc: 'LTC',
  eth: 'ETH',
  usdt: 'USDT',
  bat: 'BAT',
  sol: 'SOL',
};

describe('the demo chains, paid on by the simulator', () => {
  let chain: DemoChain;
  let ports: { evm: number; esplora: number };
  let sources: ChainSources;
  let clients: Map<string, ChainClient>;
  let sim: PartnerSimulator;
  let partner: PartnerClient;

  beforeAll(async () => {
    ports = { evm: await freePort(), esplora: await freePort() };
    chain = await startDemoChain(ports, createLogger({ level: 'silent' }));
    sources = loadChainSources(writeDemoChainSources(mkdtempSync(join(tmpdir(), 'demo-chain-'))));
    clients = chainClients(sources, chain.urls);
    const payer = new DemoChainPayer(chain.urls);
    await payer.ready();
    sim = await startPartnerSimulator({ chain: payer });
    partner = new PartnerClient({
      provider: 'sim',
      baseUrl: sim.url,
      payloadKeys: [sim.partnerKey()],
      retry: { maxAttempts: 1 },
    });
  }, 60_000);

  afterAll(async () => {
    await sim?.close();
    await chain?.stop();
  });

  const swap = async (from: string, to: string, amount: string) => {
    const created = await partner.createFloatSwap({
      amount,
      refundAddress: USER[from]!,
      payoutAddress: USER[to]!,
      currencyFrom: from,
      currencyTo: to,
      payloadCurrencyFrom: PLATFORM[from]!,
      payloadCurrencyTo: PLATFORM[to]!,
      nonce: randomBytes(32).toString('hex'),
    });
    return created.swap;
  };

  const look = async (partnerCurrency: string, txid: string) => {
    const currency = sources.currencies.get(PLATFORM[partnerCurrency]!)!;
    return clients.get(currency.source.name)!.lookup(txid, currency);
  };

  it.each([
    ['btc', 'usdt', '0.01'],
    ['ltc', 'eth', '2'],
    ['eth', 'bat', '0.5'],
    ['usdt', 'btc', '250'],
    ['btc', 'ltc', '0.02'],
  ])(
    '%s -> %s: the payin and the payout are on their chains, to the addresses, in full',
    async (from, to, amount) => {
      const created = await swap(from, to, amount);
      await sim.advancePaying(created.swapId, 'EXCHANGING');
      const done = await sim.advancePaying(created.swapId, 'FINISHED');
      const payin = await look(from, String(done.report.payinTransactionId));
      expect(payin).toMatchObject({ status: 'found', proven: true });
      const asset = sources.currencies.get(PLATFORM[from]!)!.asset;
      expect(payin.transfers).toContainEqual(
        expect.objectContaining({
          asset,
          recipient: expect.stringMatching(new RegExp(`^${done.signed.fields.payin_address}$`, 'i')),
          amount: done.signed.fields.amount_to_provider.toString(),
        }),
      );
      const payout = await look(to, String(done.report.payoutTransactionId));
      expect(payout.status).toBe('found');
      const decimals = sources.currencies.get(PLATFORM[to]!)!.decimals;
      const [whole, fraction = ''] = String(done.report.amount).split('.');
      const atomic = BigInt(whole! + fraction.padEnd(decimals, '0'));
      expect(payout.transfers.filter((t) => t.recipient.toLowerCase() === USER[to]!.toLowerCase())).toEqual([
        expect.objectContaining({
          asset: sources.currencies.get(PLATFORM[to]!)!.asset,
          amount: atomic.toString(),
        }),
      ]);
      // A native payout spends exactly the network fee the partner reports (chain.network_fee MATCHED).
      if (['btc', 'ltc', 'eth'].includes(to)) {
        const [w, f = ''] = String(done.report.payoutNetworkFees).split('.');
        expect(payout.fee).toBe(BigInt(w! + f.padEnd(decimals, '0')).toString());
      }
    },
  );

  it.each([
    ['eth', '0.25'],
    ['usdt', '12.5'],
    ['btc', '0.001'],
  ])(
    "a partner's payment named by its transaction is verified on the chain: to the address, in the asset, at least the amount (%s)",
    async (currency, amount) => {
      const hash = (await sim.payAhead(currency, USER[currency]!, amount))!;
      const platform = PLATFORM[currency]!;
      const decimals = sources.currencies.get(platform)!.decimals;
      const atomic = toAtomicUnits(amount, decimals);
      const chain = { sources, clients };
      expect(
        await lookUpPayment(chain, platform, hash, { to: USER[currency]!, atLeast: atomic }),
      ).toMatchObject({
        verified: true,
        paid: atomic,
        confirmations: 1,
      });
      const short = await lookUpPayment(chain, platform, hash, { to: USER[currency]!, atLeast: atomic + 1n });
      expect(short).toMatchObject({ verified: false, reason: expect.stringMatching(/short of the/) });
      const elsewhere = await lookUpPayment(chain, platform, hash, { to: USER.sol!, atLeast: 1n });
      expect(elsewhere).toMatchObject({ verified: false, reason: expect.stringMatching(/pays no .* to /) });
    },
  );

  it('a payment in a currency without a chain source is refused with the way to record it', async () => {
    await expect(lookUpPayment({ sources, clients }, 'SOL', 'x', { to: 'y', atLeast: 1n })).rejects.toThrow(
      /no chain source for SOL .* by --reference/,
    );
  });

  it("the demo tokens' decimals() are the sources file's (USDT 6, BAT 18): the watcher starts on them", async () => {
    expect(sources.currencies.get('USDT')!.decimals).toBe(6);
    await expect(verifyChainSources(sources, clients)).resolves.toBeUndefined();
  });

  it('a refund goes back to the refund address on the source chain', async () => {
    const created = await swap('ltc', 'btc', '2');
    const done = await sim.advancePaying(created.swapId, 'REFUNDED');
    const refund = await look('ltc', String(done.report.payoutTransactionId));
    expect(refund.status).toBe('found');
    expect(refund.transfers.map((t) => t.recipient)).toContain(USER.ltc);
  });

  it("'payout-wrong-address': the reported payout is real and pays someone else", async () => {
    const created = await swap('btc', 'eth', '0.01');
    sim.injectSwapFaults(['payout-wrong-address'], { swapId: created.swapId });
    const done = await sim.advancePaying(created.swapId, 'FINISHED');
    const payout = await look('eth', String(done.report.payoutTransactionId));
    expect(payout.status).toBe('found');
    expect(payout.transfers).toHaveLength(1);
    expect(payout.transfers[0]!.recipient.toLowerCase()).not.toBe(USER.eth);
  });

  const paysUser = <T extends { recipient: string }>(transfers: readonly T[], currency: string) =>
    transfers.filter((t) => t.recipient.toLowerCase() === USER[currency]!.toLowerCase());
  const atomicOf = (amount: unknown, decimals: number) => {
    const [whole, fraction = ''] = String(amount).split('.');
    return BigInt(whole! + fraction.padEnd(decimals, '0'));
  };

  it("'payout-claimed-twice': the reported payout is the earlier swap's real one, to the same address, of at least the amount", async () => {
    const first = await swap('btc', 'eth', '0.01');
    const paid = await sim.advancePaying(first.swapId, 'FINISHED');
    const twice = await swap('btc', 'eth', '0.01');
    sim.injectSwapFaults(['payout-claimed-twice'], { swapId: twice.swapId });
    const done = await sim.advancePaying(twice.swapId, 'FINISHED');
    expect(done.report.payoutTransactionId).toBe(paid.report.payoutTransactionId);
    const payout = await look('eth', String(done.report.payoutTransactionId));
    expect(payout).toMatchObject({ status: 'found', proven: true });
    const toUser = paysUser(payout.transfers, 'eth');
    expect(toUser).toHaveLength(1);
    expect(BigInt(toUser[0]!.amount)).toBeGreaterThanOrEqual(atomicOf(done.report.amount, 18));
    // Its own payin is its own.
    expect(done.report.payinTransactionId).not.toBe(paid.report.payinTransactionId);
  });

  it("'payout-predates-swap': the reported payout was mined before the swap was created, to its address, in BTC, of more than the amount", async () => {
    const ahead = await sim.payAhead('btc', USER.btc!, '1');
    expect(ahead).toMatch(/^[0-9a-f]{64}$/);
    const mined = await look('btc', ahead!);
    expect(mined).toMatchObject({ status: 'found', proven: true });
    const created = await swap('eth', 'btc', '0.5');
    sim.injectSwapFaults(['payout-predates-swap'], { swapId: created.swapId });
    const done = await sim.advancePaying(created.swapId, 'FINISHED');
    expect(done.report.payoutTransactionId).toBe(ahead);
    expect(Date.parse(mined.blockTime!)).toBeLessThanOrEqual(Date.parse(done.createdAt));
    const toUser = paysUser(mined.transfers, 'btc');
    expect(toUser).toEqual([expect.objectContaining({ asset: 'native', amount: '100000000' })]);
    expect(BigInt(toUser[0]!.amount)).toBeGreaterThanOrEqual(atomicOf(done.report.amount, 8));
  });

  it("'refund-dust': the refund is real, to the refund address, a thousandth of the payin", async () => {
    const created = await swap('ltc', 'btc', '2');
    sim.injectSwapFaults(['refund-dust'], { swapId: created.swapId });
    const done = await sim.advancePaying(created.swapId, 'REFUNDED');
    const refund = await look('ltc', String(done.report.payoutTransactionId));
    expect(refund).toMatchObject({ status: 'found', proven: true });
    expect(paysUser(refund.transfers, 'ltc')).toEqual([
      expect.objectContaining({ amount: (done.signed.fields.amount_to_provider / 1000n).toString() }),
    ]);
  });

  it("'refund-is-payin': the refund hash reported is the payin's, a real transaction to the payin address", async () => {
    const created = await swap('eth', 'btc', '0.5');
    sim.injectSwapFaults(['refund-is-payin'], { swapId: created.swapId });
    await sim.advancePaying(created.swapId, 'ON_HOLD');
    const done = await sim.advancePaying(created.swapId, 'REFUNDED');
    expect(done.report.payoutTransactionId).toBe(done.report.payinTransactionId);
    const tx = await look('eth', String(done.report.payinTransactionId));
    expect(tx).toMatchObject({ status: 'found', proven: true });
    expect(tx.transfers.map((t) => t.recipient.toLowerCase())).toEqual([
      String(done.signed.fields.payin_address).toLowerCase(),
    ]);
    expect(paysUser(tx.transfers, 'eth')).toEqual([]);
  });

  it('a restarted demo chain is a fresh one: a payment fails once (the demo then goes on without it), then the wallet is funded again', async () => {
    await chain.stop();
    chain = await startDemoChain(ports, createLogger({ level: 'silent' }));
    const first = await swap('eth', 'usdt', '0.5');
    await expect(sim.advancePaying(first.swapId, 'FINISHED')).rejects.toThrow();
    expect(sim.swap(first.swapId)!.status).toBe('PENDING'); // nothing reported of a failed payment
    const second = await swap('eth', 'usdt', '0.5');
    const done = await sim.advancePaying(second.swapId, 'FINISHED');
    expect((await look('usdt', String(done.report.payoutTransactionId))).status).toBe('found');
  });

  it('a currency the demo chains do not carry gets a random hash, as without a chain', async () => {
    const created = await swap('btc', 'sol', '0.01');
    const done = await sim.advancePaying(created.swapId, 'FINISHED');
    expect(String(done.report.payoutTransactionId)).toMatch(/^[0-9a-f]{64}$/);
    expect(sources.currencies.has('SOL')).toBe(false);
  });
});
