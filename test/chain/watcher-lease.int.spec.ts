import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { parseChainSources, type ChainClient, type TxLookup } from '../../src/chain/index.ts';
import { ChainWatcher } from '../../src/chainwatch/watcher.ts';
import { createPool } from '../../src/db/client.ts';
import { WorkLeases } from '../../src/db/lease.ts';
import { migratePlatform, migrateProjection } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';

/**
 * Two chain watchers on one projection (real Kafka, registry, Postgres): each transaction is looked up under
 * its lease, so by one watcher at a time, and its observation appended once. The chain is an in-process
 * source answering "found" after a short wait (the watcher's lease, not the node, is under test here).
 */
describe('two chain watchers share the transactions by lease (real stack)', () => {
  const logger = createLogger({ level: 'silent' });
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let pool: pg.Pool;
  let projector: RunningProjector;
  const sources = parseChainSources({
    sources: { local: { family: 'evm', urlEnv: 'LOCAL_EVM_URL', ratePerSecond: 50, timeoutMs: 2000 } },
    currencies: {
      ETH: { source: 'local', confirmations: 2, asset: 'native', decimals: 18, deadlineMinutes: 60 },
    },
  });
  const lookups: { watcher: string; txid: string; start: number; end: number }[] = [];
  const source = (watcher: string): ChainClient => ({
    async lookup(txid): Promise<TxLookup> {
      const start = performance.now();
      await new Promise((r) => setTimeout(r, 20));
      lookups.push({ watcher, txid, start, end: performance.now() });
      return {
        status: 'found',
        confirmations: 5,
        block: 100,
        blockHash: `0x${'cd'.repeat(32)}`,
        transfers: [],
        proven: true,
        detail: null,
      };
    },
  });

  beforeAll(async () => {
    await migratePlatform(testStack().databaseUrl);
    log = await freshEventLog(2);
    const schema = uniqueName('chainlease', '_');
    await migrateProjection(testStack().databaseUrl, schema);
    pool = createPool(testStack().databaseUrl, { searchPath: schema });
    projector = await startProjector(projectionConfig(log, schema), logger);
    const request = { payoutAddress: '0x00000000000000000000000000000000000000a1', payloadCurrencyTo: 'ETH' };
    await log.append(
      Array.from({ length: 20 }, (_, i) => [
        swapCreated(`cl-${i}`, { request: { ...request, currencyTo: 'eth' } }),
        statusReported(`cl-${i}`, 'FINISHED', {
          amount: '1',
          payinTransactionId: null,
          payoutTransactionId: `0x${i.toString(16).padStart(64, '0')}`,
        }),
      ]).flat(),
    );
    await waitForProjection(pool, log.topic);
  }, 120_000);

  afterAll(async () => {
    await projector?.stop();
    await pool?.end();
    await log?.close();
  });

  it('each transaction looked up by one watcher, never two at once; one observation each; none due again at once', async () => {
    const watcher = (name: string) =>
      new ChainWatcher({
        projection: pool,
        appender: log.appender,
        sources,
        clients: new Map([['local', source(name)]]),
        logger,
        leases: new WorkLeases(pool, 'chain', 300_000, `${name}-${uniqueName('w')}`),
      });
    const [a, b] = [watcher('a'), watcher('b')];
    const [ra, rb] = await Promise.all([a.round(), b.round()]);
    expect(ra.watched).toBe(20);
    expect(ra.looked + rb.looked).toBe(20);
    expect(lookups.length).toBe(20);
    expect(new Set(lookups.map((l) => l.txid)).size).toBe(20);
    expect(ra.appended + rb.appended).toBe(20);
    await waitForProjection(pool, log.topic);
    const observed = await pool.query<{ n: number }>(
      `select count(*)::int as n from event_journal where event_type = 'ChainTransactionObserved'`,
    );
    expect(observed.rows[0]!.n).toBe(20);
    // Found at depth: settled, nothing more to watch; a third watcher finds nothing to do.
    const rc = await watcher('c').round();
    expect(rc.watched).toBe(0);
  }, 60_000);
});
