import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { SwapEvent } from '../../src/events/types.ts';
import { buildStatusMapping } from '../../src/swap/status.ts';
import { PartnerClient } from '../../src/partner/client.ts';
import { startPartnerSimulator, type PartnerSimulator } from '../../src/simulator/index.ts';
import type { PolledSwap } from '../../src/poller/change.ts';
import { Poller, type PollerStore } from '../../src/poller/poller.ts';
import type { ConfirmCandidate, ConfirmationOutcome, ConfirmationRecord } from '../../src/poller/set.ts';
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

const T0 = Date.parse('2026-11-01T12:00:00Z');

/** A swap made final by webhook at `finalAt` (default: the harness's start), as the projection shows it. */
const finalRow = (
  swapId: string,
  over: Partial<PolledSwap> = {},
  finalAt = new Date(T0).toISOString(),
): ConfirmCandidate => ({
  ...row(swapId, { status: 'FINISHED', statusClass: 'final', final: true, version: 3, ...over }),
  finalAt,
  attempts: 0,
});

type Recorded = ConfirmationRecord & { attempts: number };

/**
 * An in-memory PollerStore that keeps confirmations as platform.poll_confirmations does: listed when never
 * recorded or still confirming and due; a record only if the attempts seen are still the row's.
 */
function memoryStore(open: PolledSwap[], confirms: ConfirmCandidate[]) {
  const records = new Map<string, Recorded>();
  const confirmations: { swapId: string; outcome: ConfirmationOutcome }[] = [];
  const store: PollerStore = {
    pollingSet: async () => [...open],
    confirmationCandidates: async (now) =>
      confirms.flatMap((c) => {
        const r = records.get(c.swapId);
        if (!r) return [{ ...c, attempts: 0 }];
        if (r.state !== 'confirming' || (r.nextDueAt !== null && r.nextDueAt > now)) return [];
        return [{ ...c, attempts: r.attempts }];
      }),
    recordConfirmation: async (c) => {
      const r = records.get(c.swapId);
      if ((r?.attempts ?? 0) !== c.seenAttempts || (r && r.state !== 'confirming')) return false;
      records.set(c.swapId, { ...c, attempts: c.seenAttempts + (c.outcome === 'deadline' ? 0 : 1) });
      confirmations.push({ swapId: c.swapId, outcome: c.outcome });
      return true;
    },
    reopenConfirmation: async (c) => {
      const r = records.get(c.swapId);
      if (r && r.attempts === c.attempts)
        records.set(c.swapId, { ...r, state: 'confirming', outcome: 'error', nextDueAt: null });
    },
  };
  return { store, records, confirmations };
}

function harness(
  opts: {
    concurrency?: number;
    rate?: { perSecond: number; burst: number };
    wrap?: boolean;
    pollIntervalSeconds?: number;
    deadlineMs?: number;
    shared?: ReturnType<typeof memoryStore> & { open: PolledSwap[]; confirms: ConfirmCandidate[] };
    appended?: SwapEvent[];
    clock?: { t: number };
    /** Appends that fail (Kafka down) before they succeed again. */
    failAppends?: number;
  } = {},
) {
  const clock = opts.clock ?? { t: T0 };
  const open: PolledSwap[] = opts.shared?.open ?? [];
  const confirms: ConfirmCandidate[] = opts.shared?.confirms ?? [];
  const memory = opts.shared ?? memoryStore(open, confirms);
  const { store, records, confirmations } = memory;
  const appended: SwapEvent[] = opts.appended ?? [];
  let failing = opts.failAppends ?? 0;
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
      pollIntervalSeconds: opts.pollIntervalSeconds ?? 1,
      defaultSlippage: null,
    },
  };
  const poller = new Poller({
    store,
    partners: { get: async (id) => (id === 'sim' ? partner : undefined) },
    appender: {
      append: async (e) => {
        if (failing > 0) {
          failing--;
          throw new Error('kafka unavailable');
        }
        appended.push(e);
      },
    },
    logger: pino({ level: 'silent' }),
    concurrency: opts.concurrency ?? 4,
    rateLimit: opts.rate ?? { perSecond: 1000, burst: 1000 },
    backoff: { baseMs: 5000, maxMs: 20_000 },
    ...(opts.deadlineMs !== undefined ? { confirm: { deadlineMs: opts.deadlineMs } } : {}),
    now: () => clock.t,
  });
  return {
    poller,
    open,
    confirms,
    confirmations,
    records,
    memory: { ...memory, open, confirms },
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

  it('confirms a swap made final by webhook: fills what is missing; a complete answer ends the confirming', async () => {
    const h = harness();
    const id = await newSwap();
    const view = sim.advance(id, 'FINISHED', undefined, { notify: false });
    const r = view.report as Record<string, string>;
    h.confirms.push(
      finalRow(id, {
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
    expect(h.records.get(id)).toMatchObject({
      state: 'confirmed',
      nextDueAt: null,
      missing: [],
      attempts: 1,
    });
    // Confirmed: never asked again.
    const calls = h.statusCalls();
    h.advance(3 * 3_600_000);
    await h.poller.tick();
    expect(h.statusCalls()).toBe(calls);
  });

  it('confirms even when everything is known: a contradicted amount is appended, an agreeing poll is not', async () => {
    const h = harness();
    const id = await newSwap();
    const r = sim.advance(id, 'FINISHED', undefined, { notify: false }).report as Record<string, string>;
    const known = {
      providerFees: r.providerFees!,
      referralFees: r.referralFees!,
      payoutNetworkFees: r.payoutNetworkFees!,
      payinTransactionId: r.payinTransactionId!,
      payoutTransactionId: r.payoutTransactionId!,
    };
    h.confirms.push(finalRow(id, { ...known, amountTo: r.amount! }));
    await h.poller.tick();
    expect(h.appended).toEqual([]);
    expect(h.confirmations).toEqual([{ swapId: id, outcome: 'nothing_new' }]);
    expect(h.records.get(id)?.state).toBe('confirmed');

    const other = await newSwap();
    const o = sim.advance(other, 'FINISHED', undefined, { notify: false }).report as Record<string, string>;
    h.confirms.splice(0, 1, finalRow(other, { ...known, ...pick(o), amountTo: '12345' }));
    h.advance(1000);
    await h.poller.tick();
    expect(h.appended).toHaveLength(1);
    expect(h.appended[0]).toMatchObject({ swapId: other, payload: { status: 'FINISHED', amount: o.amount } });
    expect(h.confirmations).toContainEqual({ swapId: other, outcome: 'appended' });
  });

  it('a lagging GET /status (PENDING) is no confirmation: asked again after 1 min, confirmed by the complete answer', async () => {
    const h = harness();
    const id = await newSwap(); // GET /status says PENDING
    h.confirms.push(finalRow(id, { amountTo: '0.5', payinTransactionId: 'in', payoutTransactionId: 'out' }));
    await h.poller.tick();
    expect(h.appended).toEqual([]);
    expect(h.confirmations).toEqual([{ swapId: id, outcome: 'stale' }]);
    expect(h.records.get(id)).toMatchObject({
      state: 'confirming',
      nextDueAt: T0 + 60_000,
      missing: ['providerFees', 'referralFees', 'payoutNetworkFees'],
    });
    const calls = () => sim.calls('status').filter((c) => c.query.swapId === id).length;
    h.advance(59_000);
    await h.poller.tick();
    expect(calls()).toBe(1);

    const r = sim.advance(
      id,
      'FINISHED',
      { amount: '0.5', payinTransactionId: 'in', payoutTransactionId: 'out' },
      {
        notify: false,
      },
    ).report as Record<string, string>;
    h.advance(1000);
    await h.poller.tick();
    expect(calls()).toBe(2);
    expect(h.appended).toHaveLength(1);
    expect(h.appended[0]!.payload).toMatchObject({ payoutNetworkFees: r.payoutNetworkFees });
    expect(h.records.get(id)).toMatchObject({ state: 'confirmed', attempts: 2, missing: [] });
  });

  it('a blank answer does not end the confirming; backoff doubles to 1 h', async () => {
    const h = harness();
    const id = await newSwap();
    sim.advance(
      id,
      'FINISHED',
      { payoutNetworkFees: '' as never, referralFees: '' as never },
      { notify: false },
    );
    const r = sim.swap(id)!.report as Record<string, string>;
    h.confirms.push(
      finalRow(id, { amountTo: r.amount!, ...pick(r), referralFees: null, payoutNetworkFees: null }),
    );
    const waits: number[] = [];
    for (let i = 0; i < 9; i++) {
      const before = h.clock.t;
      await h.poller.tick();
      const rec = h.records.get(id)!;
      expect(rec).toMatchObject({ state: 'confirming', missing: ['referralFees', 'payoutNetworkFees'] });
      waits.push(rec.nextDueAt! - before);
      h.clock.t = rec.nextDueAt!;
    }
    expect(h.appended).toEqual([]);
    expect(waits.map((w) => w / 60_000)).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60]);
    expect(h.confirmations.every((c) => c.outcome === 'nothing_new')).toBe(true);
  });

  it('an answer that fills some figures is appended and the confirming goes on while others are missing', async () => {
    const h = harness();
    const id = await newSwap();
    sim.advance(id, 'FINISHED', { payoutNetworkFees: '' as never }, { notify: false });
    const r = sim.swap(id)!.report as Record<string, string>;
    h.confirms.push(
      finalRow(id, { amountTo: r.amount!, ...pick(r), referralFees: null, payoutNetworkFees: null }),
    );
    await h.poller.tick();
    expect(h.appended).toHaveLength(1);
    expect(h.appended[0]!.payload).toMatchObject({ referralFees: r.referralFees });
    expect(h.records.get(id)).toMatchObject({
      state: 'confirming',
      outcome: 'appended',
      missing: ['payoutNetworkFees'],
    });
  });

  it('the first confirming poll is due at once, though the swap was polled a moment before its final webhook', async () => {
    const h = harness({ pollIntervalSeconds: 3600 });
    const id = await newSwap();
    h.open.push(row(id));
    await h.poller.tick(); // its regular poll: PENDING; the next one an hour away
    expect(h.appended).toHaveLength(1);
    sim.advance(id, 'FINISHED', undefined, { notify: false });
    // The webhook made it final: out of the polling set, owed a confirmation.
    h.open.splice(0);
    h.confirms.push(finalRow(id));
    h.advance(1000);
    await h.poller.tick();
    expect(sim.calls('status').filter((c) => c.query.swapId === id)).toHaveLength(2);
    expect(h.confirmations).toHaveLength(1);
  });

  it('past the deadline: given up without another call, the missing figures recorded, counted, logged', async () => {
    const h = harness({ deadlineMs: 10 * 60_000 });
    const id = await newSwap(); // PENDING for ever
    h.confirms.push(finalRow(id, { amountTo: '0.5', providerFees: '0.1', payinTransactionId: 'in' }));
    await h.poller.tick(); // at once
    h.advance(60_000);
    await h.poller.tick(); // after 1 min
    h.advance(2 * 60_000);
    await h.poller.tick(); // after 2 more
    h.advance(4 * 60_000);
    await h.poller.tick(); // 7 min after final: the next would be at 15, the deadline is at 10
    expect(h.records.get(id)).toMatchObject({
      state: 'confirming',
      attempts: 4,
      nextDueAt: T0 + 10 * 60_000,
    });
    const calls = h.statusCalls();
    h.advance(3 * 60_000);
    await h.poller.tick();
    expect(h.statusCalls()).toBe(calls);
    expect(h.records.get(id)).toMatchObject({
      state: 'abandoned',
      outcome: 'deadline',
      attempts: 4,
      missing: ['referralFees', 'payoutNetworkFees', 'payoutTransactionId'],
    });
    expect(await valueOf(h.poller.metrics.confirmationsAbandoned, { provider: 'sim' })).toBe(1);
    expect(await valueOf(h.poller.metrics.confirmations, { provider: 'sim', outcome: 'deadline' })).toBe(1);
    h.advance(3_600_000);
    await h.poller.tick();
    expect(h.statusCalls()).toBe(calls);
    expect(await valueOf(h.poller.metrics.confirmationsAbandoned, { provider: 'sim' })).toBe(1);
  });

  it('a swap never asked before its deadline gets one confirming poll, then is given up', async () => {
    const h = harness({ deadlineMs: 10 * 60_000 });
    const id = await newSwap();
    h.confirms.push(finalRow(id, { amountTo: '0.5' }));
    h.advance(20 * 60_000);
    await h.poller.tick();
    expect(h.confirmations).toEqual([{ swapId: id, outcome: 'stale' }]);
    await h.poller.tick();
    expect(h.confirmations.at(-1)).toEqual({ swapId: id, outcome: 'deadline' });
  });

  it('a confirmation whose StatusReported was not appended is taken back: asked again after the error backoff', async () => {
    const h = harness({ failAppends: 1 });
    const id = await newSwap();
    sim.advance(id, 'FINISHED', undefined, { notify: false });
    h.confirms.push(finalRow(id));
    await h.poller.tick();
    expect(h.appended).toEqual([]);
    expect(h.records.get(id)).toMatchObject({ state: 'confirming', outcome: 'error', nextDueAt: null });
    h.advance(4000);
    await h.poller.tick(); // within the error backoff (5 s)
    expect(h.appended).toEqual([]);
    h.advance(1000);
    await h.poller.tick();
    expect(h.appended).toHaveLength(1);
    expect(h.records.get(id)).toMatchObject({ state: 'confirmed', outcome: 'appended', attempts: 2 });
  });

  it('counts the closed swaps with money moved that left the grace window unsettled, per provider, for the alert', async () => {
    const h = harness();
    let counts = [{ providerId: 'sim', swaps: 2 }];
    h.memory.store.expiredWithMoneyPastGrace = async () => counts;
    await h.poller.tick();
    expect(await valueOf(h.poller.metrics.expiredWithMoney, { provider: 'sim' })).toBe(2);
    // Settled by a final status: the series goes back to nothing.
    counts = [];
    await h.poller.tick();
    expect(await valueOf(h.poller.metrics.expiredWithMoney, { provider: 'sim' })).toBe(0);
  });

  it('two pollers of one provider: one records the attempt and appends, the other appends nothing', async () => {
    const id = await newSwap();
    sim.advance(id, 'FINISHED', undefined, { notify: false });
    const appended: SwapEvent[] = [];
    const open: PolledSwap[] = [];
    const confirms = [finalRow(id)];
    const shared = { ...memoryStore(open, confirms), open, confirms };
    const clock = { t: T0 };
    const a = harness({ shared, appended, clock });
    const b = harness({ shared, appended, clock });
    const [ra, rb] = await Promise.all([a.poller.tick(), b.poller.tick()]);
    expect(ra.polled + rb.polled).toBe(2); // both asked (a read)
    expect(appended).toHaveLength(1); // one appended
    expect(shared.confirmations).toHaveLength(1);
    expect(ra.confirmed + rb.confirmed).toBe(1);
  });
});

const pick = (r: Record<string, string>) => ({
  providerFees: r.providerFees!,
  referralFees: r.referralFees!,
  payoutNetworkFees: r.payoutNetworkFees!,
  payinTransactionId: r.payinTransactionId!,
  payoutTransactionId: r.payoutTransactionId!,
});
