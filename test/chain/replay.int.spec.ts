import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { migrateProjection } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { replay } from '../../src/ops/replay.ts';
import { createKafka } from '../../src/events/kafka.ts';
import { lifecycleScenario } from '../../src/testing/scenarios.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { chainObserved } from '../../src/testing/chain.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { checksumOf, freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';

/** Chain observations are events: the projector folds them and a replay rebuilds them exactly (issue 36). */
describe('chain observations: folded live, replayed EQUAL (real stack)', () => {
  const stack = testStack();
  const logger = createLogger({ level: 'silent' });
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let live: string;
  let pool: pg.Pool;
  let running: RunningProjector;

  beforeAll(async () => {
    log = await freshEventLog(3);
    live = uniqueName('chainlive', '_');
    await migrateProjection(stack.databaseUrl, live);
    pool = createPool(stack.databaseUrl, { searchPath: live });
    running = await startProjector(projectionConfig(log, live), logger);
    const figures = { amount: '0.248', payinTransactionId: 'in-1', payoutTransactionId: 'out-1' };
    await log.append([
      ...lifecycleScenario(30, 7),
      swapCreated('chain-1'),
      statusReported('chain-1', 'FINISHED', figures),
      chainObserved('chain-1', {
        role: 'payout',
        txid: 'out-1',
        status: 'pending',
        confirmations: 0,
        block: null,
      }),
      chainObserved('chain-1', { role: 'payout', txid: 'out-1', status: 'found', confirmations: 12 }),
      chainObserved('chain-1', {
        role: 'payin',
        txid: 'in-1',
        status: 'not_found',
        confirmations: 0,
        block: null,
        transfers: [],
        deadlinePassed: true,
      }),
      swapCreated('chain-2'),
      chainObserved('chain-2', { role: 'payin', txid: 'in-2', status: 'pending', confirmations: 1 }),
      chainObserved('chain-2', { role: 'payin', txid: 'in-2', status: 'oops' }),
    ]);
    await waitForProjection(pool, log.topic);
  });

  afterAll(async () => {
    await running?.stop();
    await pool?.end();
    await log?.close();
  });

  it('keeps the latest observation per (swap, role, txid) and queues the ended swap', async () => {
    const rows = await pool.query(
      `select swap_id, role, txid, status, confirmations, transfers from chain_observations order by swap_id, role`,
    );
    expect(rows.rows).toMatchObject([
      { swap_id: 'chain-1', role: 'payin', txid: 'in-1', status: 'not_found', transfers: [] },
      { swap_id: 'chain-1', role: 'payout', txid: 'out-1', status: 'found', confirmations: 12 },
      { swap_id: 'chain-2', role: 'payin', txid: 'in-2', status: 'pending', confirmations: 1 },
    ]);
    const journal = await pool.query(
      `select outcome, reason from event_journal where event_type = 'ChainTransactionObserved' order by "offset"`,
    );
    expect(journal.rows.filter((r) => r.outcome === 'rejected')).toMatchObject([
      { reason: expect.stringMatching(/status "oops"/) },
    ]);
  });

  it('a replay from offset 0 rebuilds the same state: EQUAL', async () => {
    const result = await replay({
      databaseUrl: stack.databaseUrl,
      kafka: createKafka({ brokers: stack.kafkaBrokers.split(','), clientId: 'test-chain-replay' }),
      codec: log.codec,
      topic: log.topic,
      liveSchema: live,
      logger,
      batchEvents: 50,
    });
    expect(result.rebuilt.tables['chain_observations']!.rows).toBe(3);
    expect(result.rebuilt.checksum).toBe((await checksumOf(pool, live)).checksum);
    expect(result.equal).toBe(true);
  });
});
