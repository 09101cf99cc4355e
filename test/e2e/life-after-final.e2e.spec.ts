import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { ensureFinanceViews } from '../../src/ledger/finance-views.ts';
import { createLogger } from '../../src/observability/log.ts';
import { DEFAULT_RECONCILIATION_POLICY, Reconciler } from '../../src/reconciler/index.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, waitForProjection } from '../support/event-log.ts';
import { createSwapViaGateway, eventually, startPlatform, type Platform } from '../gateway/support.ts';

/**
 * Issue 13, "life after final", end to end through the partner simulator: gateway, webhook, poller,
 * projector, reconciler and the finance views. EXPIRED is closed but reopenable: a later FINISHED (by
 * webhook or by poll) applies, posts its entry and re-reconciles. FINISHED then REFUNDED gets 405, changes
 * nothing in the swap, and shows in the exceptions view with its figures, reopening the reconciliation.
 */
describe('life after a closed or final status (end to end)', () => {
  const stack = testStack();
  let p: Platform;
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let platformPool: pg.Pool;
  let reconciler: Reconciler;
  const finance = uniqueName('finance_laf', '_');

  const swapRow = async (swapId: string) =>
    (
      await p.pool.query(
        `select status, status_class, final, closed_at is not null as closed, amount_to, version
         from swaps where provider_id = $1 and swap_id = $2`,
        [p.providerId, swapId],
      )
    ).rows[0];
  const postingsOf = async (swapId: string) =>
    (
      await p.pool.query(
        `select entry_kind, account, currency, amount from ledger_postings
         where provider_id = $1 and swap_id = $2 order by swap_version, line`,
        [p.providerId, swapId],
      )
    ).rows;
  const history = async (swapId: string) =>
    (
      await p.pool.query(
        `select verdict, based_on_event_id, current from ${finance}.reconciliation_history
         where provider_id = $1 and swap_id = $2 order by reconciled_at, event_id`,
        [p.providerId, swapId],
      )
    ).rows;

  async function reconcileAll(): Promise<void> {
    await waitForProjection(p.pool, log.topic);
    while ((await reconciler.drainQueue()) > 0) await waitForProjection(p.pool, log.topic);
    await waitForProjection(p.pool, log.topic);
  }

  async function until(what: string, swapId: string, test: (row: Record<string, unknown>) => boolean) {
    await eventually(
      what,
      async () => {
        await p.poller.tick();
        await waitForProjection(p.pool, log.topic);
        const row = await swapRow(swapId);
        return row && test(row) ? row : undefined;
      },
      30_000,
    );
  }

  beforeAll(async () => {
    log = await freshEventLog(4);
    p = await startPlatform({ label: 'life-after-final', topic: log.topic });
    await p.poller.syncCatalogs();
    platformPool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
    const client = await platformPool.connect();
    try {
      await ensureFinanceViews(client, p.schema, finance);
    } finally {
      client.release();
    }
    reconciler = new Reconciler({
      projection: p.pool,
      platform: platformPool,
      appender: log.appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger: createLogger({ level: 'silent' }),
      confirmWaitMs: 0,
    });
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
    await platformPool?.query(`drop schema if exists ${finance} cascade`).catch(() => undefined);
    await platformPool?.end();
    await log?.close();
  });

  it('EXPIRED then FINISHED by webhook: closed, reconciled; then final, posted, re-reconciled', async () => {
    const swapId = await createSwapViaGateway(p, 'fixed', { slippage: '0.02' });
    p.sim.advance(swapId, 'EXPIRED');
    await p.sim.settled();
    await until('closed', swapId, (r) => r.status_class === 'closed');
    expect(await swapRow(swapId)).toMatchObject({ status: 'EXPIRED', final: false, closed: true });
    expect(await postingsOf(swapId)).toEqual([]);
    await reconcileAll();
    expect((await history(swapId)).length).toBe(1);

    p.sim.advance(swapId, 'FINISHED'); // a deposit after expiry, processed by the partner
    await p.sim.settled();
    expect(
      p.sim
        .webhookDeliveries()
        .filter((d) => d.swapId === swapId)
        .map((d) => d.status),
    ).toEqual([200, 200]);
    await until('final', swapId, (r) => r.final === true);
    await p.poller.tick(); // the confirming poll after the final webhook
    await reconcileAll();
    const row = await swapRow(swapId);
    expect(row).toMatchObject({ status: 'FINISHED', status_class: 'final', final: true });
    const entries = await postingsOf(swapId);
    expect(entries.some((e) => e.entry_kind === 'final' && e.account === 'user_payout')).toBe(true);
    const verdicts = await history(swapId);
    expect(verdicts.length).toBeGreaterThanOrEqual(2);
    expect(verdicts.at(-1)!.current).toBe(true);
    expect(new Set(verdicts.map((v) => v.based_on_event_id)).size).toBe(verdicts.length);
  });

  it('EXPIRED then FINISHED by poll: the closed swap stays in the slow polling set and the late status applies', async () => {
    const swapId = await createSwapViaGateway(p, 'float');
    p.sim.advance(swapId, 'EXPIRED', undefined, { notify: false });
    await until('closed by poll', swapId, (r) => r.status_class === 'closed');
    await reconcileAll();
    expect((await history(swapId)).length).toBe(1);
    p.sim.advance(swapId, 'FINISHED', undefined, { notify: false });
    p.clock.offsetMs += 60_000; // past the slow interval of a closed swap
    await until('final by poll', swapId, (r) => r.final === true);
    await reconcileAll();
    expect(await swapRow(swapId)).toMatchObject({ status: 'FINISHED', final: true });
    expect((await postingsOf(swapId)).some((e) => e.entry_kind === 'final')).toBe(true);
    expect((await history(swapId)).length).toBeGreaterThanOrEqual(2);
  });

  it('FINISHED then REFUNDED: 405, the swap unchanged, the contradiction in the exceptions view, reconciliation reopened', async () => {
    const swapId = await createSwapViaGateway(p, 'fixed', { slippage: '0.02' });
    p.sim.advance(swapId, 'FINISHED');
    await p.sim.settled();
    await until('final', swapId, (r) => r.final === true);
    await p.poller.tick();
    await reconcileAll();
    const before = await swapRow(swapId);
    const postingsBefore = await postingsOf(swapId);
    const verdictsBefore = await history(swapId);

    p.sim.advance(swapId, 'REFUNDED', { amount: '0' });
    await p.sim.settled();
    const last = p.sim
      .webhookDeliveries()
      .filter((d) => d.swapId === swapId)
      .at(-1)!;
    expect(last.status).toBe(405);
    await reconcileAll();
    expect(await swapRow(swapId)).toEqual(before);
    expect(await postingsOf(swapId)).toEqual(postingsBefore);
    const exceptions = (
      await p.pool.query(
        `select event_type, outcome, field, final_value, reported_value from ${finance}.event_exceptions
         where provider_id = $1 and swap_id = $2 order by field`,
        [p.providerId, swapId],
      )
    ).rows;
    expect(exceptions).toEqual(
      expect.arrayContaining([
        {
          event_type: 'StatusContradicted',
          outcome: 'contradicted',
          field: 'status',
          final_value: 'FINISHED',
          reported_value: 'REFUNDED',
        },
        expect.objectContaining({ field: 'amountTo', final_value: before.amount_to, reported_value: '0' }),
      ]),
    );
    const verdicts = await history(swapId);
    expect(verdicts.length).toBe(verdictsBefore.length + 1);
    const current = (
      await p.pool.query(
        `select verdict, checks from ${finance}.reconciliation_verdicts where provider_id = $1 and swap_id = $2`,
        [p.providerId, swapId],
      )
    ).rows[0];
    expect(current.verdict).toBe('MISMATCH');
    expect(current.checks).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'status.conflict', verdict: 'MISMATCH' })]),
    );
  });
});
