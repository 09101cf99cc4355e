import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePlatform } from '../../src/db/migrate.ts';
import type { StatusReported } from '../../src/events/types.ts';
import { createLogger } from '../../src/observability/log.ts';
import { valueOf } from '../../src/observability/metrics.ts';
import { PartnerClient } from '../../src/partner/client.ts';
import { startPartnerSimulator, type PartnerSimulator } from '../../src/simulator/index.ts';
import { Poller, postgresPollerStore, type PollerStore } from '../../src/poller/poller.ts';
import { neverReported } from '../../src/poller/set.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import type { ProviderPartner } from '../../src/providers/clients.ts';
import { buildStatusMapping } from '../../src/swap/status.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { freshProjection, testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { nonce, statusJournal, swapRow } from '../gateway/support.ts';

/**
 * Confirming polls against the real stack (Kafka, registry, Postgres, the projector folding what the poller
 * appends): a swap made final by a webhook is asked GET /status until the partner reports its final status
 * with every figure, with backoff, up to the deadline; the state is platform.poll_confirmations. The poller's
 * clock is a test clock (its backoff and deadline are the poller's), the partner the simulator.
 */
describe('confirming polls until complete (real stack)', () => {
  const stack = testStack();
  let sim: PartnerSimulator;
  let client: PartnerClient;
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let projection: Awaited<ReturnType<typeof freshProjection>>;
  let projector: RunningProjector;
  const logger = createLogger({ level: (process.env.TEST_POLLER_LOG as 'warn') ?? 'fatal', name: 'poller' });

  beforeAll(async () => {
    await migratePlatform(stack.databaseUrl);
    [log, projection, sim] = await Promise.all([
      freshEventLog(2),
      freshProjection('poller_confirm'),
      // Swaps stay PENDING until the test moves them.
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

  /** A poller of one provider (its own id per test) with a test clock; regular polls every hour. */
  function poller(
    providerId: string,
    clock: { t: number },
    deadlineMs?: number,
    wrap: (s: PollerStore) => PollerStore = (s) => s,
  ) {
    const partner: ProviderPartner = {
      client,
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
      store: wrap(postgresPollerStore(projection.pool, 72, [providerId])),
      partners: { get: async (id) => (id === providerId ? partner : undefined) },
      appender: log.appender,
      logger,
      concurrency: 4,
      rateLimit: { perSecond: 1000, burst: 1000 },
      backoff: { baseMs: 1000, maxMs: 5000 },
      ...(deadlineMs !== undefined ? { confirm: { deadlineMs } } : {}),
      now: () => clock.t,
    });
  }

  /** A swap the simulator created (PENDING), projected as created. */
  async function created(providerId: string): Promise<string> {
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
    await log.append([swapCreated(swap.swapId, { providerId })]);
    return swap.swapId;
  }

  /** The figures the partner reports once FINISHED (the simulator's fees, these hashes and amount). */
  const finalFigures = (swapId: string) => ({
    amount: '0.5',
    payinTransactionId: `in-${swapId}`,
    payoutTransactionId: `out-${swapId}`,
  });

  /** The final webhook as ingest appends it: FINISHED with what a webhook carries (no payout network fee). */
  async function finalByWebhook(providerId: string, swapId: string, at: number): Promise<void> {
    const fees = sim.swap(swapId)!.report as Record<string, string>;
    const f = finalFigures(swapId);
    const fields: Partial<StatusReported> = {
      amount: f.amount,
      providerFees: fees.providerFees!,
      referralFees: fees.referralFees!,
      payinTransactionId: f.payinTransactionId,
      payoutTransactionId: f.payoutTransactionId,
    };
    await log.append([
      statusReported(swapId, 'FINISHED', fields, {
        providerId,
        source: 'webhook',
        time: new Date(at).toISOString(),
      }),
    ]);
    await waitForProjection(projection.pool, log.topic);
  }

  async function confirmation(providerId: string, swapId: string) {
    const r = await projection.pool.query(
      `select state, attempts, outcome, missing, (extract(epoch from next_due_at) * 1000)::float8 as next_due_ms,
              ended_at is not null as ended
       from platform.poll_confirmations where provider_id = $1 and swap_id = $2`,
      [providerId, swapId],
    );
    return r.rows[0] as
      | {
          state: string;
          attempts: number;
          outcome: string;
          missing: string[];
          next_due_ms: number | null;
          ended: boolean;
        }
      | undefined;
  }

  const calls = (swapId: string) => sim.calls('status').filter((c) => c.query.swapId === swapId).length;
  const journal = async (swapId: string) =>
    (await statusJournal(projection.pool, swapId)).map((j) => `${j.source}:${j.status}:${j.outcome}`);

  it('a lagging GET /status (PENDING), then a complete one: confirmed on the second, the fee filled', async () => {
    const providerId = uniqueName('confirm-lag');
    const clock = { t: Date.now() };
    const p = poller(providerId, clock);
    const swapId = await created(providerId);
    await finalByWebhook(providerId, swapId, clock.t);

    await p.tick(); // GET /status still says PENDING
    expect(calls(swapId)).toBe(1);
    expect(await confirmation(providerId, swapId)).toMatchObject({
      state: 'confirming',
      attempts: 1,
      outcome: 'stale',
      missing: ['payoutNetworkFees'],
      next_due_ms: clock.t + 60_000,
      ended: false,
    });
    clock.t += 59_000;
    await p.tick();
    expect(calls(swapId)).toBe(1); // not due before its backoff

    const report = sim.advance(swapId, 'FINISHED', finalFigures(swapId), { notify: false }).report as Record<
      string,
      string
    >;
    clock.t += 1000;
    await p.tick();
    expect(calls(swapId)).toBe(2);
    expect(await confirmation(providerId, swapId)).toMatchObject({
      state: 'confirmed',
      attempts: 2,
      outcome: 'appended',
      missing: [],
      next_due_ms: null,
      ended: true,
    });
    await waitForProjection(projection.pool, log.topic);
    expect(await swapRow(projection.pool, swapId)).toMatchObject({
      final: true,
      payout_network_fees: report.payoutNetworkFees,
    });
    expect(await journal(swapId)).toEqual(['webhook:FINISHED:applied', 'poll:FINISHED:applied']);
    // Confirmed: never asked again.
    clock.t += 3 * 3_600_000;
    await p.tick();
    expect(calls(swapId)).toBe(2);
  });

  it('a blank-fee answer does not end the confirming; the answer that fills the fee does', async () => {
    const providerId = uniqueName('confirm-blank');
    const clock = { t: Date.now() };
    const p = poller(providerId, clock);
    const swapId = await created(providerId);
    await finalByWebhook(providerId, swapId, clock.t);
    const fee = (sim.swap(swapId)!.report as Record<string, string>).payoutNetworkFees!;
    sim.advance(
      swapId,
      'FINISHED',
      { ...finalFigures(swapId), payoutNetworkFees: '' as never },
      { notify: false },
    );

    await p.tick();
    expect(await confirmation(providerId, swapId)).toMatchObject({
      state: 'confirming',
      attempts: 1,
      outcome: 'nothing_new',
      missing: ['payoutNetworkFees'],
      next_due_ms: clock.t + 60_000,
    });
    clock.t += 60_000;
    await p.tick(); // blank again: asked again after 2 min
    expect(await confirmation(providerId, swapId)).toMatchObject({
      state: 'confirming',
      attempts: 2,
      next_due_ms: clock.t + 120_000,
    });
    expect(calls(swapId)).toBe(2);

    sim.advance(swapId, 'FINISHED', { payoutNetworkFees: fee as never }, { notify: false });
    clock.t += 120_000;
    await p.tick();
    expect(await confirmation(providerId, swapId)).toMatchObject({
      state: 'confirmed',
      attempts: 3,
      missing: [],
    });
    await waitForProjection(projection.pool, log.topic);
    expect((await swapRow(projection.pool, swapId))?.payout_network_fees).toBe(fee);
  });

  it('the first confirming poll is due at once, though the swap was polled a moment before its final webhook', async () => {
    const providerId = uniqueName('confirm-at-once');
    const clock = { t: Date.now() };
    const p = poller(providerId, clock);
    const swapId = await created(providerId);
    await waitForProjection(projection.pool, log.topic);
    await p.tick(); // its regular poll (PENDING); the next regular one is an hour away
    expect(calls(swapId)).toBe(1);
    await waitForProjection(projection.pool, log.topic);
    expect((await swapRow(projection.pool, swapId))?.status).toBe('PENDING');

    clock.t += 1000;
    sim.advance(swapId, 'FINISHED', finalFigures(swapId), { notify: false });
    await finalByWebhook(providerId, swapId, clock.t);
    clock.t += 1000;
    await p.tick();
    expect(calls(swapId)).toBe(2);
    expect(await confirmation(providerId, swapId)).toMatchObject({ state: 'confirmed', attempts: 1 });
    await waitForProjection(projection.pool, log.topic);
    expect(await journal(swapId)).toEqual([
      'poll:PENDING:applied',
      'webhook:FINISHED:applied',
      expect.stringMatching(/^poll:FINISHED:/),
    ]);
  });

  it('a swap made final by a regular poll with its fees blank is confirmed too; a complete one is not asked again', async () => {
    // Issue 41, finding 9: before, only a swap made final by webhook was confirmed, so these fees stayed unknown.
    const providerId = uniqueName('confirm-poll-final');
    const clock = { t: Date.now() };
    const p = poller(providerId, clock);
    const [blank, complete] = [await created(providerId), await created(providerId)];
    const fees = sim.swap(blank)!.report as Record<string, string>;
    sim.advance(
      blank,
      'FINISHED',
      { ...finalFigures(blank), referralFees: '' as never, payoutNetworkFees: '' as never },
      { notify: false },
    );
    sim.advance(complete, 'FINISHED', finalFigures(complete), { notify: false });
    await waitForProjection(projection.pool, log.topic);
    await p.tick(); // the regular polls make both final
    await waitForProjection(projection.pool, log.topic);
    expect(await swapRow(projection.pool, blank)).toMatchObject({
      final: true,
      referral_fees: null,
      payout_network_fees: null,
    });
    expect([calls(blank), calls(complete)]).toEqual([1, 1]);

    sim.advance(
      blank,
      'FINISHED',
      { referralFees: fees.referralFees as never, payoutNetworkFees: fees.payoutNetworkFees as never },
      { notify: false },
    );
    clock.t += 1000;
    await p.tick();
    expect([calls(blank), calls(complete)]).toEqual([2, 1]);
    expect(await confirmation(providerId, blank)).toMatchObject({
      state: 'confirmed',
      attempts: 1,
      missing: [],
    });
    expect(await confirmation(providerId, complete)).toBeUndefined();
    await waitForProjection(projection.pool, log.topic);
    expect(await swapRow(projection.pool, blank)).toMatchObject({
      referral_fees: fees.referralFees,
      payout_network_fees: fees.payoutNetworkFees,
    });
    expect(await journal(blank)).toEqual(['poll:FINISHED:applied', 'poll:FINISHED:applied']);
  });

  it('past the deadline: abandoned with the figures never reported, listed, counted', async () => {
    const providerId = uniqueName('confirm-deadline');
    const clock = { t: Date.now() };
    const deadlineMs = 10 * 60_000;
    const p = poller(providerId, clock, deadlineMs);
    const swapId = await created(providerId);
    await finalByWebhook(providerId, swapId, clock.t);

    await p.tick(); // PENDING
    clock.t += 60_000;
    await p.tick(); // PENDING
    expect(calls(swapId)).toBe(2);
    clock.t += deadlineMs;
    await p.tick(); // past the deadline: no call
    expect(calls(swapId)).toBe(2);
    expect(await confirmation(providerId, swapId)).toMatchObject({
      state: 'abandoned',
      attempts: 2,
      outcome: 'deadline',
      missing: ['payoutNetworkFees'],
      next_due_ms: null,
      ended: true,
    });
    expect(await valueOf(p.metrics.confirmationsAbandoned, { provider: providerId })).toBe(1);
    expect(await neverReported(projection.pool, { providerIds: [providerId] })).toEqual([
      expect.objectContaining({ providerId, swapId, missing: ['payoutNetworkFees'], attempts: 2 }),
    ]);
    const view = await projection.pool.query(
      `select swap_id, missing, last_outcome from platform.confirmations_never_reported where provider_id = $1`,
      [providerId],
    );
    expect(view.rows).toEqual([
      { swap_id: swapId, missing: ['payoutNetworkFees'], last_outcome: 'deadline' },
    ]);
    // Given up for good.
    clock.t += 3_600_000;
    await p.tick();
    expect(calls(swapId)).toBe(2);
    expect(await valueOf(p.metrics.confirmationsAbandoned, { provider: providerId })).toBe(1);
  });

  it('two pollers of one provider: one confirmation recorded, one StatusReported appended', async () => {
    const providerId = uniqueName('confirm-two');
    const clock = { t: Date.now() };
    // Both list the swap before either asks the partner: both ask, only one may record and append.
    let listed = 0;
    let bothListed: () => void;
    const barrier = new Promise<void>((resolve) => (bothListed = resolve));
    const wrap = (s: PollerStore): PollerStore => ({
      ...s,
      confirmationCandidates: async (now) => {
        const list = await s.confirmationCandidates(now);
        if (++listed === 2) bothListed();
        await barrier;
        return list;
      },
    });
    const [a, b] = [poller(providerId, clock, undefined, wrap), poller(providerId, clock, undefined, wrap)];
    const swapId = await created(providerId);
    await finalByWebhook(providerId, swapId, clock.t);
    sim.advance(swapId, 'FINISHED', finalFigures(swapId), { notify: false });

    const [ra, rb] = await Promise.all([a.tick(), b.tick()]);
    expect(calls(swapId)).toBe(2);
    expect(ra.confirmed + rb.confirmed).toBe(1);
    expect(await confirmation(providerId, swapId)).toMatchObject({ state: 'confirmed', attempts: 1 });
    await waitForProjection(projection.pool, log.topic);
    expect(await journal(swapId)).toEqual(['webhook:FINISHED:applied', 'poll:FINISHED:applied']);
  });
});
