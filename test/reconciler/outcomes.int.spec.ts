// Issue 34 across processes' worth of real parts (Kafka, registry, Postgres, the projector and reconcilers):
// a refund and an expiry judged on their evidence, a deposit on a swap that stays EXPIRED judged again and
// listed as an exception, and two reconcilers whose verdicts land out of order. Each failed on the code before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform, migrateProjection } from '../../src/db/migrate.ts';
import type { EventAppender } from '../../src/events/index.ts';
import { ensureFinanceViews } from '../../src/ledger/finance-views.ts';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { loadProviders } from '../../src/providers/store.ts';
import { parseProvidersFile } from '../../src/providers/file.ts';
import { DEFAULT_RECONCILIATION_POLICY, Reconciler } from '../../src/reconciler/index.ts';
import { statusReported } from '../../src/testing/events.ts';
import { finished, vectorProviderYaml, vectorSwap } from './vector-swaps.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';

interface Check {
  name: string;
  verdict: string;
  detail: string | null;
}

describe('outcomes judged on their evidence (real stack)', () => {
  const stack = testStack();
  const providerId = uniqueName('outcome', '_').replaceAll('_', '-');
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let schema: string;
  let finance: string;
  let projection: pg.Pool;
  let platform: pg.Pool;
  let projector: RunningProjector;
  const reconcilers: Reconciler[] = [];

  const reconciler = (appender: EventAppender = log.appender) => {
    const r = new Reconciler({
      projection,
      platform,
      appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger: createLogger({ level: 'silent' }),
    });
    reconcilers.push(r);
    return r;
  };

  async function verdict(swapId: string) {
    const r = await projection.query<{ verdict: string; checks: Check[]; based_on_event_id: string }>(
      `select verdict, checks, based_on_event_id from reconciliations where provider_id = $1 and swap_id = $2`,
      [providerId, swapId],
    );
    return r.rows[0];
  }
  const counted = (checks: Check[]) =>
    checks
      .filter((c) => c.verdict !== 'MATCHED' && c.verdict !== 'NOT_APPLICABLE')
      .map((c) => `${c.name}=${c.verdict}`);

  beforeAll(async () => {
    log = await freshEventLog(3);
    schema = uniqueName('outcome', '_');
    finance = uniqueName('finance', '_');
    await migrateProjection(stack.databaseUrl, schema);
    await migratePlatform(stack.databaseUrl);
    projection = createPool(stack.databaseUrl, { searchPath: schema });
    platform = createPool(stack.databaseUrl);
    const client = await projection.connect();
    try {
      await ensureFinanceViews(client, schema, finance);
    } finally {
      client.release();
    }
    await loadProviders(platform, parseProvidersFile(vectorProviderYaml(providerId)));
    projector = await startProjector(projectionConfig(log, schema), createLogger({ level: 'silent' }));
  });

  afterAll(async () => {
    for (const r of reconcilers) await r.stop();
    await projector?.stop();
    await projection?.end();
    await platform?.end();
    await log?.close();
  });

  it('a textbook refund is MATCHED; one without a refund transaction is UNVERIFIABLE "refund not evidenced"', async () => {
    const refund = (swapId: string, refundTransactionId: string | null) =>
      statusReported(
        swapId,
        'REFUNDED',
        { amount: '0', payinTransactionId: 'in', refundTransactionId },
        { providerId },
      );
    await log.append([
      vectorSwap('oc-refund', providerId),
      refund('oc-refund', 'refund-tx'),
      vectorSwap('oc-refund-bare', providerId),
      refund('oc-refund-bare', null),
    ]);
    await waitForProjection(projection, log.topic);
    expect(await reconciler().drainQueue()).toBe(2);
    await waitForProjection(projection, log.topic);
    const clean = await verdict('oc-refund');
    expect(counted(clean!.checks)).toEqual([]);
    expect(clean!.verdict).toBe('MATCHED');
    const bare = await verdict('oc-refund-bare');
    expect(counted(bare!.checks)).toEqual(['hash.refund=UNVERIFIABLE']);
    expect(bare!.checks.find((c) => c.name === 'hash.refund')!.detail).toContain('refund not evidenced');
  });

  it('a clean expiry is MATCHED; a deposit reported later on the swap that stays EXPIRED is judged again: MISMATCH and an exception', async () => {
    const expired = statusReported('oc-expiry', 'EXPIRED', {}, { providerId });
    await log.append([vectorSwap('oc-expiry', providerId), expired]);
    await waitForProjection(projection, log.topic);
    const r = reconciler();
    expect(await r.drainQueue()).toBe(1);
    await waitForProjection(projection, log.topic);
    expect((await verdict('oc-expiry'))!.verdict).toBe('MATCHED');

    const deposit = statusReported(
      'oc-expiry',
      'EXPIRED',
      { payinTransactionId: 'late-deposit' },
      { providerId },
    );
    await log.append([deposit]);
    await waitForProjection(projection, log.topic);
    expect(await r.drainQueue()).toBe(1);
    await waitForProjection(projection, log.topic);
    const v = await verdict('oc-expiry');
    expect(v).toMatchObject({ verdict: 'MISMATCH', based_on_event_id: deposit.eventId });
    expect(counted(v!.checks)).toEqual(['hash.payin=MISMATCH']);
    const exceptions = await projection.query(
      `select reason from ${finance}.ledger_exceptions where provider_id = $1 and swap_id = 'oc-expiry'`,
      [providerId],
    );
    expect(exceptions.rows.map((e) => e.reason)).toEqual([
      'money moved on an expired swap: a deposit (payin late-deposit); not settled by a final status',
    ]);
    // Once it leaves the grace window unsettled, the poller counts it for its alert.
    const { expiredWithMoneyPastGrace } = await import('../../src/poller/set.ts');
    const closedAt = await projection.query(
      `select extract(epoch from now() - closed_at) / 3600 as hours from swaps where swap_id = 'oc-expiry'`,
    );
    const hours = Math.floor(Number(closedAt.rows[0].hours));
    expect(
      await expiredWithMoneyPastGrace(projection, { providerIds: [providerId], closedGraceHours: hours + 2 }),
    ).toEqual([]);
    expect(
      await expiredWithMoneyPastGrace(projection, { providerIds: [providerId], closedGraceHours: 0 }),
    ).toEqual([{ providerId, swaps: 1 }]);
  });

  it('a final swap whose confirmation the poller gave up on is a ledger exception naming the figures never reported', async () => {
    await log.append([vectorSwap('oc-never', providerId), finished('oc-never', providerId, '0.000005')]);
    await waitForProjection(projection, log.topic);
    await platform.query(
      `insert into platform.poll_confirmations (swap_id, provider_id, outcome, state, attempts, missing, ended_at)
       values ('oc-never', $1, 'deadline', 'abandoned', 12, '{payoutNetworkFees,referralFees}', now())`,
      [providerId],
    );
    const exceptions = await projection.query(
      `select reason from ${finance}.ledger_exceptions where provider_id = $1 and swap_id = 'oc-never'`,
      [providerId],
    );
    expect(exceptions.rows.map((e) => e.reason)).toEqual([
      'never reported before the confirmation deadline: payoutNetworkFees, referralFees',
    ]);
    // Judged like any other, so the queue is empty for the next test.
    expect(await reconciler().drainQueue()).toBe(1);
    await waitForProjection(projection, log.topic);
  });

  it('a confirmation given up after the verdict: the sweep judges the swap again, its missing fee "never reported"', async () => {
    const report = statusReported(
      'oc-unconfirmed',
      'FINISHED',
      {
        amount: '0.000005',
        providerFees: '0.0000001',
        referralFees: '0.00000005',
        payinTransactionId: 'in',
        payoutTransactionId: 'out',
      },
      { providerId },
    );
    await log.append([vectorSwap('oc-unconfirmed', providerId), report]);
    await waitForProjection(projection, log.topic);
    const r = reconciler();
    expect(await r.drainQueue()).toBe(1);
    await waitForProjection(projection, log.topic);
    const fee = async () =>
      (await verdict('oc-unconfirmed'))!.checks.find((c) => c.name === 'fee.payout_network')!;
    expect((await fee()).detail).toContain('no final payoutNetworkFees reported');
    await platform.query(
      `insert into platform.poll_confirmations (swap_id, provider_id, outcome, state, attempts, missing, ended_at)
       values ('oc-unconfirmed', $1, 'deadline', 'abandoned', 9, '{payoutNetworkFees}', now())`,
      [providerId],
    );
    // The round's claim on the event lasts its hold (the sweep skips live claims): as if its time were up.
    await platform.query(
      `update platform.reconciliation_claims set claimed_until = now() - interval '1 second'
       where $1::uuid = any(queued_by_event_ids)`,
      [report.eventId],
    );
    expect(await r.sweepMissed()).toBe(1);
    await waitForProjection(projection, log.topic);
    expect(await fee()).toMatchObject({ verdict: 'UNVERIFIABLE' });
    expect((await fee()).detail).toContain('payoutNetworkFees never reported');
    expect((await verdict('oc-unconfirmed'))!.based_on_event_id).toBe(report.eventId);
    // Judged once: the new verdict is newer than the abandonment.
    expect(await r.sweepMissed()).toBe(0);
  });

  it('two reconcilers appending out of order: the verdict based on the newest event stays current', async () => {
    // A slow reconciler: its verdict on the final status waits at the appender until released.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = 0;
    const slowAppender = {
      writerSchemaId: () => log.appender.writerSchemaId(),
      append: async (...a: Parameters<EventAppender['append']>) => {
        held++;
        await gate;
        return log.appender.append(...a);
      },
      appendEncoded: async (...a: Parameters<EventAppender['appendEncoded']>) => {
        held++;
        await gate;
        return log.appender.appendEncoded(...a);
      },
    } as unknown as EventAppender;

    const final = finished('oc-order', providerId, '0.0000049'); // short: MISMATCH on its own figures
    await log.append([vectorSwap('oc-order', providerId), final]);
    await waitForProjection(projection, log.topic);
    const slow = reconciler(slowAppender).drainQueue();
    await expect.poll(() => held, { timeout: 20_000 }).toBe(1);

    // The operator corrects the amount meanwhile: a newer event, judged at once by another reconciler.
    const fix = (await import('../../src/testing/events.ts')).swapCorrected(
      'oc-order',
      { amount: '0.000005', reason: 'partner statement', operator: 'alice' },
      { providerId },
    );
    await log.append([fix]);
    await waitForProjection(projection, log.topic);
    expect(await reconciler().drainQueue()).toBe(1);
    await waitForProjection(projection, log.topic);
    expect(await verdict('oc-order')).toMatchObject({ verdict: 'MATCHED', based_on_event_id: fix.eventId });

    // The slow verdict, based on the older event, lands last.
    release();
    expect(await slow).toBe(1);
    await waitForProjection(projection, log.topic);
    expect(await verdict('oc-order')).toMatchObject({ verdict: 'MATCHED', based_on_event_id: fix.eventId });
    const history = await projection.query(
      `select verdict, based_on_event_id from reconciliation_history where provider_id = $1 and swap_id = 'oc-order'`,
      [providerId],
    );
    expect(history.rows).toHaveLength(2);
    expect(history.rows).toEqual(
      expect.arrayContaining([
        { verdict: 'MATCHED', based_on_event_id: fix.eventId },
        { verdict: 'MISMATCH', based_on_event_id: final.eventId },
      ]),
    );
    const journal = await projection.query(
      `select reason from event_journal where event_type = 'SwapReconciled' and swap_id = 'oc-order'
       and reason like 'based on an older event%'`,
    );
    expect(journal.rows).toHaveLength(1);
  });
});
