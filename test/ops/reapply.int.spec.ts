import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { replay } from '../../src/ops/replay.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { testKafka, testStack, freshProjection } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { runCli, runCliInProcess } from '../support/cli.ts';

/**
 * Issue 34, finding 8: a rejected event has a path back once its cause is fixed. `events reapply` (a
 * process, as an operator runs it) appends an audited EventReapplied carrying the rejected event; the
 * projector applies it in order, the rejected row stays as the audit, and a replay rebuilds the same state.
 */
describe('events reapply (real stack, CLI as a process)', () => {
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let projection: { schema: string; pool: pg.Pool };
  let projector: RunningProjector;
  let env: ReturnType<typeof projectionConfig>;

  beforeAll(async () => {
    log = await freshEventLog(1);
    projection = await freshProjection('reapply');
    env = projectionConfig(log, projection.schema);
    projector = await startProjector(env, createLogger({ level: 'silent' }));
  });

  afterAll(async () => {
    await projector?.stop();
    await projection?.pool.end();
    await log?.close();
  });

  const journalOf = async (swapId: string) =>
    (
      await projection.pool.query(
        `select event_id, event_type, outcome, reason from event_journal where swap_id = $1 order by "offset"`,
        [swapId],
      )
    ).rows;

  const early = statusReported('ra-1', 'PENDING', { payinTransactionId: 'in-1' });

  it('re-applies a report rejected before its swap existed, once the swap exists; audited', async () => {
    // The report reached the log before the SwapCreated (e.g. a lost outbox row replayed late).
    await log.append([early, swapCreated('ra-1')]);
    await waitForProjection(projection.pool, log.topic);
    expect((await journalOf('ra-1')).map((r) => [r.event_type, r.outcome])).toEqual([
      ['StatusReported', 'rejected'],
      ['SwapCreated', 'applied'],
    ]);

    const r = await runCli(
      ['events', 'reapply', early.eventId, '--operator', 'alice', '--reason', 'its SwapCreated has arrived'],
      env,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`reapply of StatusReported ${early.eventId} appended as event `));
    await waitForProjection(projection.pool, log.topic);

    const j = await journalOf('ra-1');
    expect(j.map((row) => [row.event_type, row.outcome])).toEqual([
      ['StatusReported', 'rejected'], // the audit of the refusal stays as it was
      ['SwapCreated', 'applied'],
      ['EventReapplied', 'applied'],
    ]);
    expect(j[2].reason).toMatch(
      new RegExp(`^reapplied StatusReported ${early.eventId} by alice: its SwapCreated has arrived`),
    );
    const swap = await projection.pool.query(
      `select status, payin_transaction_id from swaps where swap_id = 'ra-1'`,
    );
    expect(swap.rows[0]).toEqual({ status: 'PENDING', payin_transaction_id: 'in-1' });
  });

  it('refuses (exit 2, nothing appended) a second reapply, an applied event, an unknown id, no operator', async () => {
    const applied = (await journalOf('ra-1')).find((r) => r.event_type === 'SwapCreated')!.event_id;
    const cases: [string[], RegExp][] = [
      [[early.eventId, '--operator', 'bob', '--reason', 'again'], /already reapplied by event/],
      [[applied, '--operator', 'bob', '--reason', 'x'], /was applied, not rejected/],
      [['0190a1b2-0000-7000-8000-000000000000', '--operator', 'bob', '--reason', 'x'], /not in the journal/],
      [[early.eventId, '--reason', 'x'], /--operator is required/],
    ];
    // The reapply above ran as a process; its refusals through the CLI's main in-process.
    for (const [args, message] of cases) {
      const r = await runCliInProcess(['events', 'reapply', ...args], env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });

  it('refuses an event its input bounds refused: no fix can make its values storable', async () => {
    const bad = statusReported('ra-1', 'PENDING', { amount: '1'.repeat(41) });
    await log.append([bad]);
    await waitForProjection(projection.pool, log.topic);
    const r = await runCliInProcess(
      ['events', 'reapply', bad.eventId, '--operator', 'bob', '--reason', 'x'],
      env,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/input bounds .* swap correct/);
  });

  it('a replay rebuilds the same state (EQUAL), the reapply folded where the live run folded it', async () => {
    await waitForProjection(projection.pool, log.topic);
    const result = await replay({
      databaseUrl: testStack().databaseUrl,
      kafka: testKafka('reapply-replay'),
      codec: log.codec,
      topic: log.topic,
      liveSchema: projection.schema,
      logger: createLogger({ level: 'silent' }),
    });
    try {
      expect(result.equal).toBe(true);
    } finally {
      await projection.pool.query(`drop schema if exists ${result.schema} cascade`);
    }
  });
});
