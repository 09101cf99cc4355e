import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
  let schema: string;
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
        blockTime: null,
        fee: null,
        contractCall: false,
      };
    },
  });

  beforeAll(async () => {
    await migratePlatform(testStack().databaseUrl);
    log = await freshEventLog(2);
    schema = uniqueName('chainlease', '_');
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

  it('a SIGTERM while a round waits on its node ends `chain watch` with 0: no round follows the stop', async () => {
    // A node that answers every call after 800 ms (null: no such transaction), counting the calls.
    let calls = 0;
    const node = createServer((req, res) => {
      calls++;
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () =>
        setTimeout(() => {
          const { id } = JSON.parse(body) as { id: number };
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id, result: null }));
        }, 800),
      );
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(node.address() as { port: number }).port}`;
    try {
      const swapId = uniqueName('stop');
      await log.append([
        swapCreated(swapId, {
          request: {
            payoutAddress: '0x00000000000000000000000000000000000000a1',
            payloadCurrencyTo: 'ETH',
            currencyTo: 'eth',
          },
        }),
        statusReported(swapId, 'FINISHED', {
          amount: '1',
          payinTransactionId: null,
          payoutTransactionId: `0x${'e7'.repeat(32)}`,
        }),
      ]);
      await waitForProjection(pool, log.topic);
      const file = join(mkdtempSync(join(tmpdir(), 'chain-stop-')), 'chains.json');
      writeFileSync(
        file,
        JSON.stringify({
          sources: { slow: { family: 'evm', urlEnv: 'SLOW_EVM_URL', timeoutMs: 5000 } },
          currencies: { ETH: { source: 'slow', confirmations: 2, decimals: 18 } },
        }),
      );
      const env = {
        ...projectionConfig(log, schema),
        PATH: process.env.PATH ?? '',
        CHAIN_SOURCES_FILE: file,
        SLOW_EVM_URL: url,
        CHAIN_WATCH_INTERVAL_MS: '100',
        LOG_LEVEL: 'warn',
      };
      const bin = fileURLToPath(new URL('../../bin/swap-ledger.mjs', import.meta.url));
      const child = spawn(process.execPath, [bin, 'chain', 'watch'], {
        env: Object.fromEntries(
          Object.entries(env).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]),
        ),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      const until = Date.now() + 60_000;
      while (calls === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      expect(calls, output).toBeGreaterThan(0);
      child.kill('SIGTERM'); // the round waits on the node's answer
      const code = await Promise.race([
        exited,
        new Promise((r) => setTimeout(() => r('still running'), 15_000)),
      ]);
      if (code === 'still running') child.kill('SIGKILL');
      expect(code, output).toBe(0);
    } finally {
      await new Promise((r) => node.close(r));
    }
  }, 90_000);
});
