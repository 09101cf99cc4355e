import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { migrateProjection } from '../../src/db/migrate.ts';
import { createKafka } from '../../src/events/kafka.ts';
import { createLogger } from '../../src/observability/log.ts';
import { listProjectionSchemas, replay } from '../../src/ops/replay.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { lifecycleScenario } from '../../src/testing/scenarios.ts';
import { runCli } from '../support/cli.ts';
import { checksumOf, freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { testStack, uniqueName } from '../support/context.ts';

/** Issue 13 point 7: promotion never replaces the live state with a different or partial rebuild by accident. */
describe('replay promote guards (real stack)', () => {
  const stack = testStack();
  const logger = createLogger({ level: 'silent' });
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let live: string;
  let pool: pg.Pool;
  let running: RunningProjector | undefined;

  beforeAll(async () => {
    log = await freshEventLog(2);
    live = uniqueName('guard', '_');
    await migrateProjection(stack.databaseUrl, live);
    pool = createPool(stack.databaseUrl, { searchPath: live });
    running = await startProjector(projectionConfig(log, live), logger);
    await log.append(lifecycleScenario(20, 1));
    await new Promise((r) => setTimeout(r, 50));
    await log.append(lifecycleScenario(10, 2));
    await waitForProjection(pool, log.topic);
    // Nothing folds into the live schema during the checks: checksums before and after compare exactly.
    await running.stop();
    running = undefined;
  });

  afterAll(async () => {
    await running?.stop();
    await pool?.end();
    await log?.close();
  });

  it('replay --promote after DIFFERENT refuses, says so, and leaves the live state alone', async () => {
    // The live state drifts from what the log rebuilds (as after a hand edit or a fold change).
    const client = await pool.connect();
    try {
      await client.query(`alter table swaps disable trigger user`);
      await client.query(`update swaps set payin_address = 'tampered' where swap_id = 'swap-1-1'`);
      await client.query(`alter table swaps enable trigger user`);
    } finally {
      client.release();
    }
    const before = (await checksumOf(pool, live)).checksum;
    const r = await runCli(['replay', '--promote'], projectionConfig(log, live));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('DIFFERENT');
    expect(r.stderr).toMatch(/not promoted: the rebuilt state differs/);
    expect(r.stdout).not.toContain('promoted');
    expect((await checksumOf(pool, live)).checksum).toBe(before);
    const rebuilt = /rebuilt schema\s+(\S+)/.exec(r.stdout)![1]!;
    expect(await listProjectionSchemas(stack.databaseUrl, live)).toContain(rebuilt);

    // Promoting it on purpose still works: the operator named it.
    const promoted = await runCli(['replay', 'promote', rebuilt], projectionConfig(log, live));
    expect(promoted.code, promoted.stderr).toBe(0);
    expect((await checksumOf(pool, live)).checksum).not.toBe(before);
  });

  it('replay promote refuses a --to-time rebuild unless --allow-partial', async () => {
    const cut = new Date(Date.now() - 60_000); // before the second phase: a partial state
    const partial = await replay({
      databaseUrl: stack.databaseUrl,
      kafka: createKafka({ brokers: stack.kafkaBrokers.split(','), clientId: 'test-replay-guard' }),
      codec: log.codec,
      topic: log.topic,
      liveSchema: live,
      logger,
      until: { kind: 'time', time: cut },
    });
    const before = (await checksumOf(pool, live)).checksum;
    const refused = await runCli(['replay', 'promote', partial.schema], projectionConfig(log, live));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('rebuilt only part of the log');
    expect(refused.stderr).toContain(`--to-time ${cut.toISOString()}`);
    expect(refused.stderr).toContain('--allow-partial');
    expect((await checksumOf(pool, live)).checksum).toBe(before);

    const forced = await runCli(
      ['replay', 'promote', partial.schema, '--allow-partial'],
      projectionConfig(log, live),
    );
    expect(forced.code, forced.stderr).toBe(0);
    expect((await checksumOf(pool, live)).checksum).toBe(partial.rebuilt.checksum);
  });

  it('a --to-offset rebuild is refused the same way (a complete one was promoted above without the flag)', async () => {
    const partial = await runCli(['replay', '--to-offset', '1'], projectionConfig(log, live));
    expect(partial.code, partial.stderr).toBe(0);
    const schema = /rebuilt schema\s+(\S+)/.exec(partial.stdout)![1]!;
    const refused = await runCli(['replay', 'promote', schema], projectionConfig(log, live));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--to-offset 1');
  });
});
