import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { SwapEvent } from '../../src/events/types.ts';
import { buildStatusMapping } from '../../src/swap/status.ts';
import { PartnerClient } from '../../src/partner/client.ts';
import { startPartnerSimulator, type PartnerSimulator } from '../../src/partner/simulator/index.ts';
import type { PolledSwap } from '../../src/poller/change.ts';
import { Poller, type PollerStore } from '../../src/poller/poller.ts';
import type { ConfirmationOutcome } from '../../src/poller/set.ts';
import type { ProviderPartner } from '../../src/providers/clients.ts';
import { swapKey } from '../../src/events/keys.ts';
import { valueOf } from '../../src/observability/metrics.ts';

/** The poller's rules against the simulator over real HTTP, with an in-memory polling set and appender. */
let sim: PartnerSimulator;
let client: PartnerClient;

beforeAll(async () => {
  sim = await startPartnerSimulator({ progression: { script: ['PENDING'] } });
  client = new PartnerClient({
    provider: 'sim',
    baseUrl: sim.url,
    payloadKeys: [sim.partnerKey()],
    retry: { maxAttempts: 1 },
  });
});
afterAll(() => sim.close());

const nonce = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex');
async function newSwap(): Promise<string> {
  const { swap } = await client.createFloatSwap({
    currencyFrom: 'btc',
    currencyTo: 'eth',
    payloadCurrencyFrom: 'BTC',
    payloadCurrencyTo: 'ETH',
    amount: '0.1',
    payoutAddress: '0xb794f5ea0ba39494ce839613fffba74279579268',
    refundAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    nonce: nonce(),
  });
  return swap.swapId;
}

const row = (swapId: string, over: Partial<PolledSwap> = {}): PolledSwap => ({
  swapId,
  providerId: 'sim',
  status: 'CREATED',
  statusClass: 'open',
  final: false,
  version: null,
  amountTo: null,
  providerFees: null,
  referralFees: null,
  payoutNetworkFees: null,
  payinTransactionId: null,
  payoutTransactionId: null,
  refundTransactionId: null,
  ...over,
});

function harness(
  opts: { concurrency?: number; rate?: { perSecond: number; burst: number }; wrap?: boolean } = {},
) {
  const clock = { t: Date.parse('2026-11-01T12:00:00Z') };
  const open: PolledSwap[] = [];
  const confirms: PolledSwap[] = [];
  const confirmations: { swapId: string; outcome: ConfirmationOutcome }[] = [];
  const appended: SwapEvent[] = [];
  let inFlight = 0;
  let peak = 0;
  const counted = opts.wrap
    ? ({
        status: async (id: string) => {
          inFlight++;
          peak = Math.max(peak, inFlight);
          try {
            await new Promise((r) => setTimeout(r, 20));
            return await client.status(id);
          } finally {
            inFlight--;
          }
        },
      } as unknown as PartnerClient)
    : client;
  const partner: ProviderPartner = {
    client: counted,
    setup: {
      client: { provider: 'sim', baseUrl: sim.url },
      payloadKeys: [],
      currencies: {},
      statusMapping: buildStatusMapping({}),
      enabled: true,
      pollIntervalSeconds: 1,
      defaultSlippage: null,
    },
  };
  const store: PollerStore = {
    pollingSet: async () => [...open],
    confirmationCandidates: async () => [...confirms],
    recordConfirmation: async (c) => void confirmations.push({ swapId: c.swapId, outcome: c.outcome }),
  };
  const poller = new Poller({
    store,
    partners: { get: async (id) => (id === 'sim' ? partner : undefined) },
    appender: { append: async (e) => void appended.push(e) },
    logger: pino({ level: 'silent' }),
    concurrency: opts.concurrency ?? 4,
    rateLimit: opts.rate ?? { perSecond: 1000, burst: 1000 },
    backoff: { baseMs: 5000, maxMs: 20_000 },
    now: () => clock.t,
  });
  return {
    poller,
    open,
    confirms,
    confirmations,
    appended,
    clock,
    peak: () => peak,
    statusCalls: () => sim.calls('status').length,
    advance: (ms: number) => (clock.t += ms),
  };
}

describe('Poller', () => {
  it('appends only what changes the swap: PENDING -> ON_HOLD -> PENDING is three reports, repeats none', async () => {
    const h = harness();
    const id = await newSwap();
    h.open.push(row(id));
    expect((await h.poller.tick()).appended).toBe(1);
    expect(h.appended[0]).toMatchObject({
      eventType: 'StatusReported',
      swapId: id,
      aggregateKey: swapKey('sim', id),
      providerId: 'sim',
      source: 'poll',
      payload: { status: 'PENDING', statusClass: 'open', final: false },
    });
    // Same answer while the projection has not moved: not appended again.
    h.advance(1000);
    expect((await h.poller.tick()).appended).toBe(0);
    // The projector folded it (status and the fees it reported): still nothing new.
    const first = h.appended[0]!.payload as unknown as Record<string, string>;
    const fees = {
      providerFees: first.providerFees!,
      referralFees: first.referralFees!,
      payoutNetworkFees: first.payoutNetworkFees!,
    };
    h.open[0] = row(id, { status: 'PENDING', version: 1, ...fees });
    h.advance(1000);
    expect((await h.poller.tick()).appended).toBe(0);

    sim.advance(id, 'ON_HOLD', undefined, { notify: false });
    h.advance(1000);
    await h.poller.tick();
    h.open[0] = row(id, { status: 'ON_HOLD', version: 2, ...fees });
    sim.advance(id, 'PENDING', undefined, { notify: false });
    h.advance(1000);
    await h.poller.tick();
    expect(h.appended.map((e) => (e.payload as { status: string }).status)).toEqual([
      'PENDING',
      'ON_HOLD',
      'PENDING',
    ]);
    // Not due before the provider's poll interval.
    const calls = h.statusCalls();
    h.advance(500);
    await h.poller.tick();
    expect(h.statusCalls()).toBe(calls);
  });

  it('honours 420 Retry-After: the provider waits, then polls again', async () => {
    const h = harness();
    const id = await newSwap();
    h.open.push(row(id));
    sim.injectFault('status', { kind: 'rate-limited', retryAfter: '3' });
    const before = h.statusCalls();
    await h.poller.tick();
    expect(await valueOf(h.poller.metrics.rateLimited, { provider: 'sim' })).toBe(1);
    h.advance(2000);
    expect((await h.poller.tick()).deferred).toBe(1);
    expect(h.statusCalls()).toBe(before + 1); // no call while paused
    h.advance(1100);
    expect((await h.poller.tick()).appended).toBe(1);
  });

  it('backs off a swap the partner does not know (404), exponentially', async () => {
    const h = harness();
    h.open.push(row('no-such-swap'));
    await h.poller.tick();
    expect(await valueOf(h.poller.metrics.polls, { provider: 'sim', outcome: 'not_found' })).toBe(1);
    const calls = () => sim.calls('status').filter((c) => c.query.swapId === 'no-such-swap').length;
    h.advance(4999);
    await h.poller.tick();
    expect(calls()).toBe(1);
    h.advance(1);
    await h.poller.tick();
    expect(calls()).toBe(2);
    h.advance(5000); // the second failure waits 10 s
    await h.poller.tick();
    expect(calls()).toBe(2);
    h.advance(5000);
    await h.poller.tick();
    expect(calls()).toBe(3);
  });

  it('logs and counts a status the mapping does not know; appends nothing; keeps polling the swap', async () => {
    const h = harness();
    const id = await newSwap();
    sim.advance(id, 'MYSTERY', undefined, { notify: false });
    h.open.push(row(id));
    await h.poller.tick();
    expect(await valueOf(h.poller.metrics.unmappable, { provider: 'sim' })).toBe(1);
    expect(h.appended).toEqual([]);
    sim.advance(id, 'PENDING', undefined, { notify: false });
    h.advance(5000);
    expect((await h.poller.tick()).appended).toBe(1);
  });

  it('keeps to the per-provider concurrency and token bucket', async () => {
    const h = harness({ concurrency: 2, rate: { perSecond: 1, burst: 5 }, wrap: true });
    for (let i = 0; i < 8; i++) h.open.push(row(await newSwap()));
    const first = await h.poller.tick();
    expect(first.polled).toBe(5);
    expect(first.deferred).toBe(3);
    expect(h.peak()).toBe(2);
    h.advance(1000); // one token more; the 5 polled are due again but the 3 deferred come first in the set order
    const second = await h.poller.tick();
    expect(second.polled).toBe(1);
  });

  it('confirms a swap made final by webhook once: fills what is missing and records it', async () => {
    const h = harness();
    const id = await newSwap();
    const view = sim.advance(id, 'FINISHED', undefined, { notify: false });
    const r = view.report as Record<string, string>;
    h.confirms.push(
      row(id, {
        status: 'FINISHED',
        statusClass: 'final',
        final: true,
        version: 3,
        amountTo: r.amount!,
        providerFees: r.providerFees!,
        referralFees: r.referralFees!,
        payinTransactionId: r.payinTransactionId!,
        payoutTransactionId: r.payoutTransactionId!,
      }),
    );
    await h.poller.tick();
    expect(h.appended).toHaveLength(1);
    expect(h.appended[0]!.payload).toMatchObject({
      status: 'FINISHED',
      final: true,
      payoutNetworkFees: r.payoutNetworkFees,
    });
    expect(h.confirmations).toEqual([{ swapId: id, outcome: 'appended' }]);
  });

  it('confirms even when everything is known: a contradicted amount is appended, an agreeing poll is not', async () => {
    const h = harness();
    const id = await newSwap();
    const r = sim.advance(id, 'FINISHED', undefined, { notify: false }).report as Record<string, string>;
    const known = {
      status: 'FINISHED',
      statusClass: 'final',
      final: true,
      version: 3,
      providerFees: r.providerFees!,
      referralFees: r.referralFees!,
      payoutNetworkFees: r.payoutNetworkFees!,
      payinTransactionId: r.payinTransactionId!,
      payoutTransactionId: r.payoutTransactionId!,
    };
    h.confirms.push(row(id, { ...known, amountTo: r.amount! }));
    await h.poller.tick();
    expect(h.appended).toEqual([]);
    expect(h.confirmations).toEqual([{ swapId: id, outcome: 'nothing_new' }]);

    const other = await newSwap();
    const o = sim.advance(other, 'FINISHED', undefined, { notify: false }).report as Record<string, string>;
    h.confirms.splice(0, 1, row(other, { ...known, ...pick(o), amountTo: '12345' }));
    h.advance(1000);
    await h.poller.tick();
    expect(h.appended).toHaveLength(1);
    expect(h.appended[0]).toMatchObject({ swapId: other, payload: { status: 'FINISHED', amount: o.amount } });
    expect(h.confirmations).toContainEqual({ swapId: other, outcome: 'appended' });
  });
});

const pick = (r: Record<string, string>) => ({
  providerFees: r.providerFees!,
  referralFees: r.referralFees!,
  payoutNetworkFees: r.payoutNetworkFees!,
  payinTransactionId: r.payinTransactionId!,
  payoutTransactionId: r.payoutTransactionId!,
});
