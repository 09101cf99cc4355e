import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { migrateProjection } from '../../src/db/migrate.ts';
import { createKafka } from '../../src/events/kafka.ts';
import { createLogger } from '../../src/observability/log.ts';
import { listProjectionSchemas, replay } from '../../src/ops/replay.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { lifecycleScenario } from '../../src/testing/scenarios.ts';
import { runCli, runCliInProcess } from '../support/cli.ts';
import { checksumOf, freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { testStack, uniqueName } from '../support/context.ts';

/** Issue 13 point 7: promotion never replaces the live state with a different or partial rebuild by accident. */
// Two commands run as processes (`replay` and `replay promote`, the smoke tests of the CLI, the audit line is
// pino's on fd 1); the other refusals through the CLI's `main` in this process, the same parsing and exit codes.
describe('replay promote guards (real stack)', { timeout: 180_000 }, () => {
  const stack = testStack();
  const logger = createLogger({ level: 'silent' });
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let live: string;
  let pool: pg.Pool;
  let running: RunningProjector | undefined;
  /** A time between the two phases of the log: a --to-time rebuild to it is partial, whatever the run's pace. */
  let betweenPhases: Date;

  beforeAll(async () => {
    log = await freshEventLog(2);
    live = uniqueName('guard', '_');
    await migrateProjection(stack.databaseUrl, live);
    pool = createPool(stack.databaseUrl, { searchPath: live });
    running = await startProjector(projectionConfig(log, live), logger);
    await log.append(lifecycleScenario(20, 1));
    await new Promise((r) => setTimeout(r, 50));
    betweenPhases = new Date();
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

    expect(r.stderr).toContain(`replay promote ${rebuilt} --force --reason`);

    // Issue 34 point 9: naming it is not enough; the DIFFERENT check stands until forced with a reason.
    const named = await runCliInProcess(['replay', 'promote', rebuilt], projectionConfig(log, live));
    expect(named.code).toBe(1);
    expect(named.stderr).toContain('differs from the live state it was checked against (DIFFERENT)');
    expect(named.stderr).toContain('--force --reason <why> --by <operator>');
    expect((await checksumOf(pool, live)).checksum).toBe(before);
    // --force without its audit is a usage mistake: exit 2, nothing promoted.
    for (const args of [['--force'], ['--force', '--reason', 'hand edit'], ['--reason', 'x', '--by', 'y']]) {
      const bad = await runCliInProcess(['replay', 'promote', rebuilt, ...args], projectionConfig(log, live));
      expect(bad.code, args.join(' ')).toBe(2);
    }
    expect((await checksumOf(pool, live)).checksum).toBe(before);

    // On purpose, audited: the log line and the promoted schema's comment name who and why.
    const reason = 'the live row was edited by hand; the log is right';
    const promoted = await runCli(
      ['replay', 'promote', rebuilt, '--force', '--reason', reason, '--by', 'alice'],
      projectionConfig(log, live),
    );
    expect(promoted.code, promoted.stderr).toBe(0);
    expect(promoted.stdout).toContain(`promoted with --force by alice: ${reason}`);
    const audit = promoted.stdout.split('\n').find((l) => l.includes('replay promote --force'));
    expect(JSON.parse(audit!)).toMatchObject({
      level: 40,
      schema: rebuilt,
      check: 'DIFFERENT',
      operator: 'alice',
      reason,
    });
    expect((await checksumOf(pool, live)).checksum).not.toBe(before);
    const comment = await pool.query<{ c: string }>(
      `select obj_description(oid, 'pg_namespace') as c from pg_namespace where nspname = $1`,
      [live],
    );
    expect(comment.rows[0]!.c).toMatch(/replay promote --force: .*"operator":"alice"/);
  });

  it('a rebuild with no recorded check (unchecked) is refused the same way', async () => {
    const r = await runCliInProcess(['replay'], projectionConfig(log, live));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('EQUAL');
    const schema = /rebuilt schema\s+(\S+)/.exec(r.stdout)![1]!;
    // As a rebuild made before checks were recorded, or one whose check line was lost.
    await pool.query(`comment on schema ${schema} is 'swap-ledger replay: complete'`);
    const refused = await runCliInProcess(['replay', 'promote', schema], projectionConfig(log, live));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('records no end check (an unchecked rebuild)');
    await pool.query(`drop schema ${schema} cascade`);
  });

  it('replay promote refuses a --to-time rebuild unless --allow-partial', async () => {
    const cut = betweenPhases; // before the second phase: a partial state
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
    const refused = await runCliInProcess(['replay', 'promote', partial.schema], projectionConfig(log, live));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('rebuilt only part of the log');
    expect(refused.stderr).toContain(`--to-time ${cut.toISOString()}`);
    expect(refused.stderr).toContain('--allow-partial');
    expect((await checksumOf(pool, live)).checksum).toBe(before);

    // A partial rebuild differs from the whole live state: it needs --force with its audit as well.
    expect(partial.equal).toBe(false);
    const onlyPartial = await runCliInProcess(
      ['replay', 'promote', partial.schema, '--allow-partial'],
      projectionConfig(log, live),
    );
    expect(onlyPartial.code).toBe(1);
    expect(onlyPartial.stderr).toContain('(DIFFERENT)');
    const forced = await runCliInProcess(
      [
        'replay',
        'promote',
        partial.schema,
        '--allow-partial',
        '--force',
        '--reason',
        'audit cut',
        '--by',
        'bob',
      ],
      projectionConfig(log, live),
    );
    expect(forced.code, forced.stderr).toBe(0);
    expect((await checksumOf(pool, live)).checksum).toBe(partial.rebuilt.checksum);
  });

  it('a --to-offset rebuild is refused the same way (a complete one was promoted above without the flag)', async () => {
    const partial = await runCliInProcess(['replay', '--to-offset', '1'], projectionConfig(log, live));
    expect(partial.code, partial.stderr).toBe(0);
    const schema = /rebuilt schema\s+(\S+)/.exec(partial.stdout)![1]!;
    const refused = await runCliInProcess(['replay', 'promote', schema], projectionConfig(log, live));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--to-offset 1');
  });
});
