import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform, migrateProjection } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { MetricsRegistry } from '../../src/observability/metrics.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { loadProviders } from '../../src/providers/store.ts';
import { parseProvidersFile } from '../../src/providers/file.ts';
import {
  DEFAULT_RECONCILIATION_POLICY,
  Reconciler,
  type ReconcilerOptions,
  type RecordedVerdict,
} from '../../src/reconciler/index.ts';
import type { JudgePool } from '../../src/reconciler/judge-pool.ts';
import { createReconcilerMetrics } from '../../src/reconciler/metrics.ts';
import { finished, vectorProviderYaml, vectorSwap } from './vector-swaps.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { runCli, runCliInProcess } from '../support/cli.ts';

describe('reconciler worker (real stack)', () => {
  const stack = testStack();
  const providerId = uniqueName('vector', '_').replaceAll('_', '-');
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let schema: string;
  let projection: pg.Pool;
  let platform: pg.Pool;
  let projector: RunningProjector;
  let reconciler: Reconciler;
  const metrics = new MetricsRegistry();
  const lines: { level: number; msg: string; verdict?: string; failing?: { name: string }[] }[] = [];
  const logger = createLogger({ level: 'info' });
  logger.info = ((obj: object, msg: string) => lines.push({ level: 30, msg, ...obj })) as never;
  logger.warn = ((obj: object, msg: string) => lines.push({ level: 40, msg, ...obj })) as never;

  beforeAll(async () => {
    log = await freshEventLog(3);
    schema = uniqueName('recon', '_');
    await migrateProjection(stack.databaseUrl, schema);
    await migratePlatform(stack.databaseUrl);
    projection = createPool(stack.databaseUrl, { searchPath: schema });
    platform = createPool(stack.databaseUrl);
    await loadProviders(platform, parseProvidersFile(vectorProviderYaml(providerId)));
    projector = await startProjector(projectionConfig(log, schema), createLogger({ level: 'silent' }));
    reconciler = new Reconciler({
      projection,
      platform,
      appender: log.appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger,
      metrics,
      // As `reconciler run` wires it: the verdict latency from the swap's final_at.
      onVerdict: createReconcilerMetrics(metrics, projection).onVerdict,
      // This suite's reconciler judges in a thread, as `reconciler run` does; the lagging ones on the loop.
      judgeThreads: 1,
    });
  });

  /** A reconciler whose verdicts go to a topic no projector folds: its swaps stay queued, in flight. */
  const laggingReconciler = (
    unfolded: Awaited<ReturnType<typeof freshEventLog>>,
    batchSize: number,
    onVerdict: (v: RecordedVerdict) => void,
    options: Partial<ReconcilerOptions> = {},
  ) =>
    new Reconciler({
      projection,
      platform,
      appender: unfolded.appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger: createLogger({ level: 'silent' }),
      batchSize,
      onVerdict,
      ...options,
    });

  /** The claims on this schema's queue rows (or on the given swaps'), as if their time were up. */
  const expireClaims = (swapIds?: string[]) =>
    projection.query(
      `update platform.reconciliation_claims set claimed_until = now() - interval '1 second'
       where queued_by_event_ids && array(select queued_by_event_id from reconciliation_queue
                                          where $1::text[] is null or swap_id = any($1::text[]))`,
      [swapIds ?? null],
    );

  /** These swaps created and FINISHED as signed (MATCHED when judged), folded: queued for a verdict. */
  const finishAndFold = async (ids: string[]) => {
    await log.append(ids.flatMap((id) => [vectorSwap(id, providerId), finished(id, providerId, '0.000005')]));
    await waitForProjection(projection, log.topic);
  };

  /** Who claims each of these swaps' queue rows now (a live claim), by swap id. */
  const claimsOf = async (swapIds: string[]) =>
    Object.fromEntries(
      (
        await projection.query<{ swap_id: string; claimed_by: string }>(
          `select q.swap_id, c.claimed_by from reconciliation_queue q
           join platform.reconciliation_claims c on q.queued_by_event_id = any(c.queued_by_event_ids)
           where q.swap_id = any($1::text[]) and c.claimed_until > now()`,
          [swapIds],
        )
      ).rows.map((r) => [r.swap_id, r.claimed_by]),
    );

  afterAll(async () => {
    await reconciler?.stop();
    await projector?.stop();
    await projection?.end();
    await platform?.end();
    await log?.close();
  });

  it('takes a swap from the queue when it becomes final, appends SwapReconciled, and the projector clears the queue', async () => {
    await log.append([vectorSwap('rv-1', providerId), finished('rv-1', providerId, '0.000005')]);
    await waitForProjection(projection, log.topic);
    expect((await projection.query(`select swap_id from reconciliation_queue`)).rows).toEqual([
      { swap_id: 'rv-1' },
    ]);

    expect(await reconciler.drainQueue()).toBe(1);
    await waitForProjection(projection, log.topic);
    const rec = await projection.query(`select verdict, checks from reconciliations where swap_id = 'rv-1'`);
    expect(rec.rows[0].verdict).toBe('MATCHED');
    const checks = Object.fromEntries(
      rec.rows[0].checks.map((c: { name: string; verdict: string }) => [c.name, c.verdict]),
    );
    expect(checks).toMatchObject({
      'signature.valid': 'MATCHED',
      'payload.currency_from': 'MATCHED',
      'payload.amount_to_provider': 'MATCHED',
      'amount.to_wallet': 'MATCHED',
      'fee.provider': 'MATCHED',
      'hash.payout': 'MATCHED',
    });
    expect((await projection.query(`select * from reconciliation_queue`)).rows).toEqual([]);
    expect(await reconciler.drainQueue()).toBe(0);
    expect(await metrics.expose()).toContain(
      `swap_ledger_reconciliation_verdicts_total{provider="${providerId}",verdict="MATCHED"} 1`,
    );
    // final_at comes from Postgres as text: the latency is observed all the same.
    expect(await metrics.expose()).toContain('swap_ledger_reconciliation_final_to_verdict_seconds_count 1');
  });

  it('reports a final amount below the signed one (less the slippage) as MISMATCH, logged at warn with the check', async () => {
    // User side: 0.0000049 against 0.000006 signed less the 0.000001 network fee estimate = 0.000005: 2% short,
    // beyond 1% slippage. Partner side: 0.0000049 + 0.000001 = 0.0000059 against 0.000006: 1.67% short.
    await log.append([vectorSwap('rv-2', providerId), finished('rv-2', providerId, '0.0000049')]);
    await waitForProjection(projection, log.topic);
    expect(await reconciler.drainQueue()).toBe(1);
    await waitForProjection(projection, log.topic);
    const rec = await projection.query(`select verdict, checks from reconciliations where swap_id = 'rv-2'`);
    expect(rec.rows[0].verdict).toBe('MISMATCH');
    const amount = rec.rows[0].checks.find((c: { name: string }) => c.name === 'amount.to_wallet');
    expect(amount).toMatchObject({
      verdict: 'MISMATCH',
      expected: '0.000005',
      actual: '0.0000049',
      delta: '-0.0000001',
    });
    const warn = lines.find((l) => l.level === 40 && l.msg === 'swap reconciled: MISMATCH');
    expect(warn?.failing?.map((c) => c.name)).toEqual(['amount.to_wallet', 'amount.partner_side']);
  });

  it('queues a corrected swap again and reconciles the correction', async () => {
    const fix = (await import('../../src/testing/events.ts')).swapCorrected(
      'rv-2',
      { amount: '0.000005', reason: 'partner statement', operator: 'alice' },
      { providerId },
    );
    await log.append([fix]);
    await waitForProjection(projection, log.topic);
    expect((await projection.query(`select queued_by_event_id from reconciliation_queue`)).rows).toEqual([
      { queued_by_event_id: fix.eventId },
    ]);
    expect(await reconciler.drainQueue()).toBe(1);
    await waitForProjection(projection, log.topic);
    const rec = await projection.query(
      `select verdict, based_on_event_id from reconciliations where swap_id = 'rv-2'`,
    );
    expect(rec.rows[0]).toEqual({ verdict: 'MATCHED', based_on_event_id: fix.eventId });
  });

  it('judges a round of swaps together, and a verdict appended but not yet folded does not block the next round', async () => {
    // Verdicts go to a topic no projector folds: their swaps stay queued, in flight, as under projector lag.
    const unfolded = await freshEventLog(1);
    const appended: string[] = [];
    const lagging = laggingReconciler(unfolded, 3, (r) => appended.push(r.swapId));
    try {
      // Earlier tests' swaps are judged (their verdicts folded): only these seven are queued.
      const ids = Array.from({ length: 7 }, (_, i) => `rv-round-${i}`);
      await finishAndFold(ids);
      const queued = await projection.query(`select swap_id from reconciliation_queue order by swap_id`);
      expect(queued.rows.map((r) => r.swap_id)).toEqual(ids);

      expect(await lagging.drainQueue()).toBe(3);
      expect(await lagging.drainQueue()).toBe(3);
      expect(await lagging.drainQueue()).toBe(1);
      expect(await lagging.drainQueue()).toBe(0); // all seven in flight: none judged twice
      expect([...appended].sort()).toEqual(ids);

      // Two lanes of rounds at once: each swap judged once all the same.
      const more = Array.from({ length: 7 }, (_, i) => `rv-lanes-${i}`);
      await finishAndFold(more);
      expect(await lagging.drainAll()).toBe(7);
      expect([...appended].sort()).toEqual([...more, ...ids].sort());

      // Another reconciler leaves them while the lagging one's claims stand; once their time is up
      // (the lagging one gone, its verdicts never folded), the live one takes them.
      expect(await reconciler.drainAll()).toBe(0);
      await expireClaims();
      expect(await reconciler.drainAll()).toBe(14);
      await waitForProjection(projection, log.topic);
      expect((await projection.query(`select * from reconciliation_queue`)).rows).toEqual([]);
      const verdicts = await projection.query(
        `select verdict, count(*)::int as n from reconciliations where swap_id like 'rv-round-%' or swap_id like 'rv-lanes-%' group by 1`,
      );
      expect(verdicts.rows).toEqual([{ verdict: 'MATCHED', n: 14 }]);
      // Its in-flight set forgets what the projector folded: a new queue entry is taken at once.
      expect(await reconciler.drainQueue()).toBe(0);
    } finally {
      await unfolded.close();
    }
  });

  it('a pass goes on after its last round; a row it passed by is taken when the next pass starts at the head', async () => {
    // A swap of a provider whose key cannot be read fails; the pass goes on past it, not back to it.
    const flaky = `${providerId}-pass`;
    await loadProviders(platform, parseProvidersFile(vectorProviderYaml(flaky)));
    const key = await platform.query<{ public_key: string }>(
      `select public_key from platform.provider_payload_keys where provider_id = $1`,
      [flaky],
    );
    await platform.query(
      `update platform.provider_payload_keys set public_key = '{not json' where provider_id = $1`,
      [flaky],
    );
    const unfolded = await freshEventLog(1);
    const order: string[][] = [];
    const lagging = laggingReconciler(unfolded, 2, (r) => order.at(-1)!.push(r.swapId));
    const round = async () => {
      order.push([]);
      return lagging.drainQueue();
    };
    try {
      // Queued in this order (each event a tick later): a, b (the flaky provider's), c, d, e.
      const swaps: [string, string][] = [
        ['rv-pass-a', providerId],
        ['rv-pass-b', flaky],
        ['rv-pass-c', providerId],
        ['rv-pass-d', providerId],
        ['rv-pass-e', providerId],
      ];
      await log.append(swaps.flatMap(([id, p]) => [vectorSwap(id, p), finished(id, p, '0.000005')]));
      await waitForProjection(projection, log.topic);

      expect(await round()).toBe(1); // a judged, b failed: a full round, the pass goes on
      expect(await round()).toBe(2); // c and d, after b: b is not taken again within the pass
      expect(await round()).toBe(1); // e: a short round ends the pass
      await platform.query(
        `update platform.provider_payload_keys set public_key = $2 where provider_id = $1`,
        [flaky, key.rows[0]!.public_key],
      );
      expect(await round()).toBe(1); // from the head: a, c, d, e are in flight, b is taken
      expect(await round()).toBe(0);
      expect(order).toEqual([['rv-pass-a'], ['rv-pass-c', 'rv-pass-d'], ['rv-pass-e'], ['rv-pass-b'], []]);
      // The live reconciler (its verdicts folded) judges all five once the lagging one's claims are up.
      await expireClaims();
      expect(await reconciler.drainAll()).toBe(5);
      await waitForProjection(projection, log.topic);
      expect((await projection.query(`select * from reconciliation_queue`)).rows).toEqual([]);
    } finally {
      await unfolded.close();
    }
  });

  it('a provider whose setup cannot be read fails its own swaps only; the round judges the others', async () => {
    const broken = `${providerId}-broken`;
    await loadProviders(platform, parseProvidersFile(vectorProviderYaml(broken)));
    // A stored key that looks like JWK JSON and is not: reading the provider's setup throws.
    await platform.query(
      `update platform.provider_payload_keys set public_key = '{not json' where provider_id = $1`,
      [broken],
    );
    await log.append([
      vectorSwap('rv-broken', broken),
      finished('rv-broken', broken, '0.000005'),
      vectorSwap('rv-fine', providerId),
      finished('rv-fine', providerId, '0.000005'),
    ]);
    await waitForProjection(projection, log.topic);
    const errors: string[] = [];
    const watching = new Reconciler({
      projection,
      platform,
      appender: log.appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger: Object.assign(createLogger({ level: 'silent' }), {
        error: (obj: { swapId?: string }) => errors.push(obj.swapId ?? ''),
      }),
    });
    expect(await watching.drainQueue()).toBe(1);
    expect(errors).toEqual(['rv-broken']);
    await waitForProjection(projection, log.topic);
    const queued = await projection.query(`select swap_id from reconciliation_queue order by swap_id`);
    expect(queued.rows).toEqual([{ swap_id: 'rv-broken' }]);
    const judged = await projection.query(`select verdict from reconciliations where swap_id = 'rv-fine'`);
    expect(judged.rows).toEqual([{ verdict: 'MATCHED' }]);
    // The failed swap is not claimed: another reconciler may take it at once.
    expect(await claimsOf(['rv-broken'])).toEqual({});
    await platform.query(`delete from platform.provider_payload_keys where provider_id = $1`, [broken]);
    // Once its provider reads again (no key: UNVERIFIABLE), the live reconciler judges it.
    expect(await reconciler.drainQueue()).toBe(1);
    await waitForProjection(projection, log.topic);
    expect((await projection.query(`select swap_id from reconciliation_queue`)).rows).toEqual([]);
  });

  it('two reconcilers share the queue: neither takes a swap the other judged until its verdict is folded or its claim is up', async () => {
    const unfolded = await freshEventLog(1);
    const byA: string[] = [];
    const byB: string[] = [];
    const a = laggingReconciler(unfolded, 2, (v) => byA.push(v.swapId));
    const b = laggingReconciler(unfolded, 10, (v) => byB.push(v.swapId), { judgeThreads: 1 });
    try {
      const ids = Array.from({ length: 5 }, (_, i) => `rv-share-${i}`);
      await finishAndFold(ids);
      expect(await a.drainQueue()).toBe(2); // the two oldest
      expect(await b.drainQueue()).toBe(3); // the other three: a's two are claimed
      expect(await a.drainAll()).toBe(0);
      expect(await b.drainAll()).toBe(0);
      expect(byA).toEqual(ids.slice(0, 2));
      expect([...byB].sort()).toEqual(ids.slice(2));
      const claims = await claimsOf(ids);
      expect(Object.keys(claims).sort()).toEqual(ids);
      expect(new Set(Object.values(claims)).size).toBe(2);
      expect(claims[ids[0]!]).toBe(claims[ids[1]!]);

      // a's claims past their time (a gone, its verdicts never folded): b takes its two over.
      await expireClaims(byA);
      expect(await b.drainQueue()).toBe(2);
      expect(new Set(Object.values(await claimsOf(ids))).size).toBe(1);
      expect([...byB].sort()).toEqual([...ids.slice(2), ...ids.slice(0, 2)].sort());
      expect(await a.drainAll()).toBe(0); // b's claims now, and a's own in-flight set
    } finally {
      await b.stop();
      await unfolded.close();
    }
    // A claim an hour past its time (its reconciler died) is deleted by the sweep; a recent one is kept.
    const stale = crypto.randomUUID();
    const recent = crypto.randomUUID();
    await platform.query(
      `insert into platform.reconciliation_claims values
         ($1, 'gone', now() - interval '61 minutes', '{}'), ($2, 'gone', now() - interval '59 minutes', '{}')`,
      [stale, recent],
    );
    expect(await reconciler.forgetStaleClaims()).toBeGreaterThanOrEqual(1);
    const left = await platform.query(
      `select round_id from platform.reconciliation_claims where round_id = any($1::uuid[])`,
      [[stale, recent]],
    );
    expect(left.rows).toEqual([{ round_id: recent }]);
    await platform.query(`delete from platform.reconciliation_claims where round_id = $1`, [recent]);
    // The live reconciler (its verdicts folded) takes them once the claims are up.
    await expireClaims();
    expect(await reconciler.drainAll()).toBe(5);
    await waitForProjection(projection, log.topic);
    expect((await projection.query(`select swap_id from reconciliation_queue`)).rows).toEqual([]);
  });

  it('two reconcilers draining at once judge each swap once', async () => {
    const unfolded = await freshEventLog(1);
    const judged: string[] = [];
    const a = laggingReconciler(unfolded, 4, (v) => judged.push(v.swapId));
    const b = laggingReconciler(unfolded, 3, (v) => judged.push(v.swapId), { judgeThreads: 1 });
    try {
      const ids = Array.from({ length: 40 }, (_, i) => `rv-race-${String(i).padStart(2, '0')}`);
      await finishAndFold(ids);
      const [na, nb] = await Promise.all([a.drainAll(), b.drainAll()]);
      expect(na + nb).toBe(40);
      expect([...judged].sort()).toEqual(ids);
    } finally {
      await b.stop();
      await unfolded.close();
    }
    await expireClaims();
    expect(await reconciler.drainAll()).toBe(40);
    await waitForProjection(projection, log.topic);
  });

  it('a judge thread that dies mid-round loses no swap: they stay queued, unclaimed, and the next round judges them', async () => {
    const errors: string[] = [];
    const registry = new MetricsRegistry();
    const dying = new Reconciler({
      projection,
      platform,
      appender: log.appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger: Object.assign(createLogger({ level: 'silent' }), {
        error: (_: object, msg: string) => errors.push(msg),
      }),
      metrics: registry,
      judgeThreads: 1,
    });
    try {
      const ids = ['rv-thread-a', 'rv-thread-b', 'rv-thread-c'];
      await finishAndFold(ids);
      await dying.prepare();
      // The thread is stopped right after the round's chunk is posted to it.
      const pool = (dying as unknown as { judging: { pool: JudgePool } }).judging.pool;
      const slots = (pool as unknown as { slots: { worker?: { terminate(): Promise<number> } }[] }).slots;
      const judge = pool.judge.bind(pool);
      pool.judge = (chunk) => {
        const judged = judge(chunk);
        void slots[0]!.worker!.terminate();
        return judged;
      };
      expect(await dying.drainQueue()).toBe(0);
      expect(errors.filter((m) => m.startsWith('a judge thread was lost'))).toHaveLength(1);
      expect(errors.filter((m) => m.startsWith('reconciliation failed'))).toHaveLength(3);
      expect(await registry.expose()).toContain('swap_ledger_reconciler_judge_threads_lost_total 1');
      expect(await claimsOf(ids)).toEqual({});
      const queued = await projection.query(`select swap_id from reconciliation_queue order by swap_id`);
      expect(queued.rows.map((r) => r.swap_id)).toEqual(ids);

      pool.judge = judge;
      expect(await dying.drainQueue()).toBe(3); // a new thread
      await waitForProjection(projection, log.topic);
      expect((await projection.query(`select swap_id from reconciliation_queue`)).rows).toEqual([]);
    } finally {
      await dying.stop();
    }
  });

  it('a verdict observer that throws does not count an appended verdict as failed', async () => {
    const warnings: string[] = [];
    const observed = new Reconciler({
      projection,
      platform,
      appender: log.appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger: Object.assign(createLogger({ level: 'silent' }), {
        warn: (_: object, msg: string) => warnings.push(msg),
      }),
      onVerdict: () => {
        throw new Error('observer broke');
      },
    });
    await finishAndFold(['rv-observer']);
    expect(await observed.drainQueue()).toBe(1);
    expect(warnings).toEqual(['verdict observer failed']);
    await waitForProjection(projection, log.topic);
    expect((await projection.query(`select swap_id from reconciliation_queue`)).rows).toEqual([]);
    expect(await claimsOf(['rv-observer'])).toEqual({});
    const history = await projection.query(
      `select verdict from reconciliation_history where swap_id = 'rv-observer'`,
    );
    expect(history.rows).toEqual([{ verdict: 'MATCHED' }]);
  });

  it('the sweep judges a final swap with no verdict and no queue entry; two reconcilers sweeping at once judge it once', async () => {
    const unfolded = await freshEventLog(1);
    const swept: string[] = [];
    const a = laggingReconciler(unfolded, 10, (v) => swept.push(v.swapId));
    const b = laggingReconciler(unfolded, 10, (v) => swept.push(v.swapId));
    try {
      await log.append([vectorSwap('rv-missed', providerId), finished('rv-missed', providerId, '0.000005')]);
      await waitForProjection(projection, log.topic);
      // As if it had become final before any reconciler ran: no queue entry, no verdict.
      await projection.query(`delete from reconciliation_queue where swap_id = 'rv-missed'`);
      const [na, nb] = await Promise.all([a.sweepMissed(), b.sweepMissed()]);
      expect(na + nb).toBe(1);
      expect(swept).toEqual(['rv-missed']);
      // Its verdict is not folded (another topic): the sweeper's own claim keeps it from judging again.
      expect(await a.sweepMissed()).toBe(0);
      expect(await b.sweepMissed()).toBe(0);
    } finally {
      await unfolded.close();
    }
    // Once the claim is up, the live reconciler sweeps it; its verdict folded, nothing is left to sweep.
    await projection.query(
      `update platform.reconciliation_claims set claimed_until = now() - interval '1 second'
       where queued_by_event_ids && array(select last_event_id from swaps where swap_id = 'rv-missed')`,
    );
    // Judged in the live reconciler's judge thread, as its queue rounds are, not on its event loop.
    await reconciler.prepare();
    const pool = (reconciler as unknown as { judging: { pool: JudgePool } }).judging.pool;
    const judge = pool.judge.bind(pool);
    const chunks: number[] = [];
    pool.judge = (chunk) => {
      chunks.push(chunk.swaps.length);
      return judge(chunk);
    };
    try {
      expect(await reconciler.sweepMissed()).toBe(1);
    } finally {
      pool.judge = judge;
    }
    expect(chunks).toEqual([1]);
    await waitForProjection(projection, log.topic);
    const verdicts = await projection.query(
      `select verdict from reconciliations where swap_id = 'rv-missed'`,
    );
    expect(verdicts.rows).toEqual([{ verdict: 'MATCHED' }]);
    expect(await reconciler.sweepMissed()).toBe(0);
  });

  it('reconcile --swap prints every check and the verdict history; --dry-run appends nothing', async () => {
    const env = { ...projectionConfig(log, schema) };
    const r = await runCli(['reconcile', '--swap', `${providerId}/rv-1`, '--dry-run'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/verdict MATCHED/);
    // User side: the amount alone against the signed figure less the creation's network fee estimate.
    expect(r.stdout).toMatch(/MATCHED\s+amount\.to_wallet\s+expected 0\.000005\s+actual 0\.000005\s+delta 0/);
    expect(r.stdout).toMatch(
      /MATCHED\s+amount\.partner_side\s+expected 0\.000006\s+actual 0\.000006\s+delta 0/,
    );
    expect(r.stdout).toMatch(/verdict history[^\n]*\n[^\n]*MATCHED\s+based on/);
    expect(r.stdout).toContain('dry run: nothing appended');
    // The run above is the process smoke test; the bare id and the usage mistake through main in-process.
    const bare = await runCliInProcess(['reconcile', '--swap', 'rv-1', '--dry-run'], env);
    expect(bare.code, bare.stderr).toBe(0); // one partner has rv-1: the bare id is enough
    const usage = await runCliInProcess(['reconcile'], env);
    expect(usage.code).toBe(2);
  });
});
