import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { migrateProjection } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { listProjectionSchemas, replay, type ReplayUntil } from '../../src/ops/replay.ts';
import { ensureFinanceViews } from '../../src/ledger/finance-views.ts';
import { createKafka } from '../../src/events/kafka.ts';
import { lifecycleScenario } from '../../src/testing/scenarios.ts';
import { statusReported } from '../../src/testing/events.ts';
import { testKafka, testStack, uniqueName } from '../support/context.ts';
import { checksumOf, freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { runCli, runCliInProcess } from '../support/cli.ts';

describe('replay (real stack)', () => {
  const stack = testStack();
  const logger = createLogger({ level: 'silent' });
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let live: string;
  let pool: pg.Pool;
  let running: RunningProjector;
  let firstPhaseEnds: Map<number, bigint>;
  let secondPhaseTime: Date;
  const extra: pg.Pool[] = [];

  async function highs(): Promise<Map<number, bigint>> {
    const admin = testKafka('replay-offsets').admin();
    await admin.connect();
    try {
      return new Map((await admin.fetchTopicOffsets(log.topic)).map((p) => [p.partition, BigInt(p.high)]));
    } finally {
      await admin.disconnect();
    }
  }

  const replayTo = (until?: ReplayUntil) =>
    replay({
      databaseUrl: stack.databaseUrl,
      kafka: createKafka({ brokers: stack.kafkaBrokers.split(','), clientId: 'test-replay' }),
      codec: log.codec,
      topic: log.topic,
      liveSchema: live,
      logger,
      ...(until ? { until } : {}),
      batchEvents: 300,
    });

  function poolFor(schema: string) {
    const p = createPool(stack.databaseUrl, { searchPath: schema });
    extra.push(p);
    return p;
  }

  beforeAll(async () => {
    log = await freshEventLog(4);
    live = uniqueName('live', '_');
    await migrateProjection(stack.databaseUrl, live);
    pool = createPool(stack.databaseUrl, { searchPath: live });
    running = await startProjector(projectionConfig(log, live), logger);
    await log.append(lifecycleScenario(120, 3));
    firstPhaseEnds = await highs();
    // Kafka timestamps have millisecond resolution: leave a clear gap between the two phases.
    await new Promise((r) => setTimeout(r, 50));
    secondPhaseTime = new Date(Date.now() - 25);
    await log.append(lifecycleScenario(40, 4));
    await log.append(
      ['swap-3-1', 'swap-3-2', 'swap-3-4'].map((id) =>
        statusReported(id, 'REFUNDED', { payinTransactionId: 'late' }),
      ),
    );
    await waitForProjection(pool, log.topic);
    const client = await pool.connect();
    try {
      await ensureFinanceViews(client, live);
    } finally {
      client.release();
    }
  });

  afterAll(async () => {
    await running?.stop();
    await pool?.end();
    for (const p of extra) await p.end();
    await log?.close();
  });

  it('rebuilds the whole log into a fresh schema with the live checksum, reporting progress', async () => {
    const progress: number[] = [];
    const result = await replay({
      databaseUrl: stack.databaseUrl,
      kafka: createKafka({ brokers: stack.kafkaBrokers.split(','), clientId: 'test-replay' }),
      codec: log.codec,
      topic: log.topic,
      liveSchema: live,
      logger,
      batchEvents: 200,
      onProgress: (p) => progress.push(p.done),
    });
    const total = [...(await highs()).values()].reduce((a, b) => a + b, 0n);
    expect(result.events).toBe(Number(total));
    expect(progress.at(-1)).toBe(Number(total));
    expect(result.schema).toMatch(new RegExp(`^${live}_replay_\\d{17}$`));
    expect(result.rebuilt.checksum).toBe((await checksumOf(pool, live)).checksum);
    expect(result.equal).toBe(true);
  });

  it('--to-offset rebuilds a state that differs from the live one exactly by the later events', async () => {
    const result = await replayTo({ kind: 'offsets', offsets: firstPhaseEnds });
    expect(result.equal).toBe(false);
    const rebuilt = poolFor(result.schema);
    const ids = async (p: pg.Pool) =>
      new Set(
        (await p.query<{ event_id: string }>('select event_id from event_journal')).rows.map(
          (r) => r.event_id,
        ),
      );
    const liveIds = await ids(pool);
    const rebuiltIds = await ids(rebuilt);
    // The later events: those at or after the cut in each partition.
    const later = await pool.query<{ event_id: string }>(
      `select event_id from event_journal j join unnest($1::int[], $2::bigint[]) as cut(p, o)
         on j.partition = cut.p and j."offset" >= cut.o`,
      [[...firstPhaseEnds.keys()], [...firstPhaseEnds.values()].map(String)],
    );
    expect(later.rows.length).toBeGreaterThan(0);
    const expected = new Set([...liveIds].filter((id) => !later.rows.some((r) => r.event_id === id)));
    expect(rebuiltIds).toEqual(expected);
    // Swaps no later event touched are identical, column for column; the others are older versions.
    const untouched = await pool.query(
      `select s.* from swaps s where not exists (
         select 1 from event_journal j join unnest($1::int[], $2::bigint[]) as cut(p, o)
         on j.partition = cut.p and j."offset" >= cut.o where j.swap_id = s.swap_id) order by swap_id`,
      [[...firstPhaseEnds.keys()], [...firstPhaseEnds.values()].map(String)],
    );
    const rebuiltSame = await rebuilt.query(`select * from swaps where swap_id = any($1) order by swap_id`, [
      untouched.rows.map((r) => r.swap_id),
    ]);
    expect(rebuiltSame.rows).toEqual(untouched.rows);
    const refunded = await rebuilt.query(`select status from swaps where swap_id = 'swap-3-1'`);
    const liveRefunded = await pool.query(`select status from swaps where swap_id = 'swap-3-1'`);
    expect(refunded.rows[0].status).not.toBe('REFUNDED');
    expect(['REFUNDED', 'FINISHED', 'EXPIRED']).toContain(liveRefunded.rows[0].status);
  });

  it('--to-time rebuilds the state as it was at that time', async () => {
    const byTime = await replayTo({ kind: 'time', time: secondPhaseTime });
    const byOffset = await replayTo({ kind: 'offsets', offsets: firstPhaseEnds });
    expect(byTime.endOffsets).toEqual(firstPhaseEnds);
    expect(byTime.rebuilt.checksum).toBe(byOffset.rebuilt.checksum);
  });

  it('replay --promote makes the rebuilt schema live atomically; finance views answer the same rows', async () => {
    const env = projectionConfig(log, live);
    const before = (
      await pool.query('select * from finance.swaps where swap_id like $1 order by swap_id', ['swap-3-%'])
    ).rows;
    expect(before.length).toBeGreaterThan(100);
    // Two worker threads, each folding its share of the partitions into the one rebuilt schema.
    const r = await runCli(['replay', '--promote'], { ...env, REPLAY_HEAP_MB: '200', REPLAY_WORKERS: '2' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('EQUAL');
    // The rebuild ran again under its heap budget (200 MiB old space, plus V8's young generation).
    const heap = Number(/heap budget\s+(\d+) MiB/.exec(r.stdout)?.[1]);
    expect(heap).toBeGreaterThanOrEqual(200);
    expect(heap).toBeLessThan(300);
    const previous = /kept as (\S+)/.exec(r.stdout)![1]!;
    const after = (
      await pool.query('select * from finance.swaps where swap_id like $1 order by swap_id', ['swap-3-%'])
    ).rows;
    expect(after).toEqual(before);
    // The view now reads the promoted tables, not the previous ones.
    const bound = await pool.query(
      `select distinct table_schema from information_schema.view_table_usage where view_schema = 'finance' and view_name = 'swaps'`,
    );
    expect(bound.rows).toEqual([{ table_schema: live }]);
    const grant = await pool.query(
      `select has_table_privilege('swap_ledger_finance', 'finance.swaps', 'select') as ok`,
    );
    expect(grant.rows[0].ok).toBe(true);
    // The live projector keeps folding into the promoted schema.
    await log.append([statusReported('swap-4-1', 'EXPIRED')]);
    await waitForProjection(pool, log.topic);
    expect(await listProjectionSchemas(stack.databaseUrl, live)).toContain(previous);

    // The refusal through the CLI's main in-process; the drop itself runs as a process.
    const refused = await runCliInProcess(['replay', 'drop', live], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is the live schema');
    const dropped = await runCli(['replay', 'drop', previous], env);
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(await listProjectionSchemas(stack.databaseUrl, live)).not.toContain(previous);
  });
});
