import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkLeases } from '../../src/db/lease.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { PartnerClient } from '../../src/partner/client.ts';
import { Poller, postgresPollerStore } from '../../src/poller/poller.ts';
import { swapKey } from '../../src/events/keys.ts';
import type { ProviderPartner } from '../../src/providers/clients.ts';
import { startPartnerSimulator, type PartnerSimulator } from '../../src/simulator/index.ts';
import { buildStatusMapping } from '../../src/swap/status.ts';
import { swapCreated } from '../../src/testing/events.ts';
import { freshProjection, testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { nonce } from '../gateway/support.ts';

/**
 * Two pollers of one provider on the real stack: each swap is polled under its lease in Postgres, so never
 * by both at once and, within its interval, once by either (the lease's release is the shared schedule).
 * The partner is the simulator; each GET /status is timed as it leaves and returns.
 */
describe('two pollers share the swaps by lease (real stack)', () => {
  let sim: PartnerSimulator;
  let client: PartnerClient;
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let projection: Awaited<ReturnType<typeof freshProjection>>;
  let projector: RunningProjector;
  const logger = createLogger({ level: 'fatal', name: 'poller' });
  const swaps: string[] = [];

  beforeAll(async () => {
    await migratePlatform(testStack().databaseUrl);
    [log, projection, sim] = await Promise.all([
      freshEventLog(2),
      freshProjection('poller_lease'),
      startPartnerSimulator({ progression: { script: ['PENDING'] } }),
    ]);
    client = new PartnerClient({
      provider: 'sim',
      baseUrl: sim.url,
      payloadKeys: [sim.partnerKey()],
      retry: { maxAttempts: 1 },
    });
    projector = await startProjector(
      projectionConfig(log, projection.schema),
      createLogger({ level: 'fatal', name: 'projector' }),
    );
  }, 120_000);

  afterAll(async () => {
    await projector?.stop();
    await log?.close();
    await projection?.pool.end();
    await sim?.close();
  });

  async function created(providerId: string, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
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
      swaps.push(swap.swapId);
      await log.append([swapCreated(swap.swapId, { providerId })]);
    }
    await waitForProjection(projection.pool, log.topic);
  }

  /** Every GET /status, by poller: [swap, start, end]. */
  const calls: { poller: string; swapId: string; start: number; end: number }[] = [];

  /** Pollers that have sent a GET /status: the control holds each call until both have, so they meet. */
  const polling = new Set<string>();

  function poller(name: string, providerId: string, clock: { t: number }, leased: boolean) {
    const timed = {
      status: async (swapId: string) => {
        const start = performance.now();
        polling.add(name);
        // Without leases, a call waits for the other poller's first (a loaded machine can start one tick
        // after the other has ended): the control shows that nothing else keeps them apart.
        for (let waited = 0; !leased && polling.size < 2 && waited < 5000; waited += 10)
          await new Promise((r) => setTimeout(r, 10));
        // Long enough that two unleased pollers overlap on a swap.
        await new Promise((r) => setTimeout(r, 30));
        try {
          return await client.status(swapId);
        } finally {
          calls.push({ poller: name, swapId, start, end: performance.now() });
        }
      },
    } as unknown as PartnerClient;
    const partner: ProviderPartner = {
      client: timed,
      setup: {
        client: { provider: providerId, baseUrl: sim.url },
        payloadKeys: [],
        currencies: {},
        statusMapping: buildStatusMapping({}),
        enabled: true,
        pollIntervalSeconds: 3600,
        defaultSlippage: null,
      },
    };
    return new Poller({
      store: postgresPollerStore(projection.pool, 72, [providerId]),
      partners: { get: async (id) => (id === providerId ? partner : undefined) },
      appender: log.appender,
      logger,
      concurrency: 4,
      rateLimit: { perSecond: 1000, burst: 1000 },
      backoff: { baseMs: 1000, maxMs: 5000 },
      now: () => clock.t,
      ...(leased ? { leases: new WorkLeases(projection.pool, 'poll', 60_000, name) } : {}),
    });
  }

  /** Pairs of calls of one swap whose times overlap. */
  function overlaps(of: typeof calls): number {
    let n = 0;
    for (let i = 0; i < of.length; i++)
      for (let j = i + 1; j < of.length; j++) {
        const [a, b] = [of[i]!, of[j]!];
        if (a.swapId === b.swapId && a.start < b.end && b.start < a.end) n++;
      }
    return n;
  }

  it('without leases (the control): both poll every swap, at the same moments', async () => {
    const providerId = uniqueName('nolease');
    const before = swaps.length;
    await created(providerId, 12);
    const mine = new Set(swaps.slice(before));
    const clock = { t: Date.now() };
    const [a, b] = [poller('a0', providerId, clock, false), poller('b0', providerId, clock, false)];
    polling.clear();
    await Promise.all([a.tick(), b.tick()]);
    const seen = calls.filter((c) => mine.has(c.swapId));
    expect(seen.length).toBe(24);
    expect(overlaps(seen)).toBeGreaterThan(0);
  }, 60_000);

  it('with leases: each swap polled once by one of them, never at once; not again within its interval; a dead holder’s lease expires', async () => {
    const providerId = uniqueName('lease');
    const before = swaps.length;
    await created(providerId, 12);
    const mine = new Set(swaps.slice(before));
    const clock = { t: Date.now() };
    const [a, b] = [poller('a', providerId, clock, true), poller('b', providerId, clock, true)];
    // A poller that died holding one swap's lease (claimed a moment ago, 60 s).
    const held = swaps[before]!;
    const dead = new WorkLeases(projection.pool, 'poll', 60_000, 'dead');
    expect((await dead.claim([swapKey(providerId, held)], clock.t)).size).toBe(1);

    const reports = await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()]);
    let seen = calls.filter((c) => mine.has(c.swapId));
    expect(seen.length).toBe(11);
    expect(new Set(seen.map((c) => c.swapId)).size).toBe(11);
    expect(seen.some((c) => c.swapId === held)).toBe(false);
    expect(overlaps(seen)).toBe(0);
    // (tick() joins a tick under way: reports 2 and 3 are 0 and 1 again.)
    expect(reports[0]!.polled + reports[1]!.polled).toBe(11);
    expect((reports[0]!.leased ?? 0) + (reports[1]!.leased ?? 0)).toBe(12 * 2 - 11);

    // Both tick again a minute later: only the dead poller's swap is due (its lease expired), once.
    clock.t += 61_000;
    await Promise.all([a.tick(), b.tick()]);
    seen = calls.filter((c) => mine.has(c.swapId));
    expect(seen.length).toBe(12);
    expect(seen.filter((c) => c.swapId === held).length).toBe(1);
    expect(overlaps(seen)).toBe(0);

    // An interval later every swap is due again, and polled once more.
    clock.t += 3_600_000;
    await Promise.all([a.tick(), b.tick()]);
    seen = calls.filter((c) => mine.has(c.swapId));
    expect(seen.length).toBe(24);
    expect(overlaps(seen)).toBe(0);
  }, 60_000);
});
