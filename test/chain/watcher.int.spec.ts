import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  type Address,
  type Hash,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hardhat } from 'viem/chains';
import { chainClients, NO_CHAIN_SOURCES, parseChainSources } from '../../src/chain/index.ts';
import { createChainWatchMetrics } from '../../src/chainwatch/metrics.ts';
import { ChainWatcher } from '../../src/chainwatch/watcher.ts';
import { ConsoleDb } from '../../src/console/db.ts';
import { swapLive } from '../../src/console/pages/swap.ts';
import { createPool } from '../../src/db/client.ts';
import { ensureFinanceViews } from '../../src/ledger/finance-views.ts';
import { migratePlatform, migrateProjection } from '../../src/db/migrate.ts';
import { DEFAULT_RECONCILIATION_POLICY, Reconciler } from '../../src/reconciler/index.ts';
import { createLogger } from '../../src/observability/log.ts';
import { MetricsRegistry, valueOf } from '../../src/observability/metrics.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { loadChainEvidence } from '../../src/reconciler/chain-load.ts';
import { chainChecks } from '../../src/reconciler/chain-checks.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { DEV_KEYS, startEvmNode, type EvmNode } from '../../scripts/chain/evm-node.ts';
import { input } from '../reconciler/support.ts';
import { runCli } from '../support/cli.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';

/**
 * The chain watcher end to end on the real stack and a real EVM node: swaps with reported payouts in the
 * projection, one round looks each up and appends what it saw, the projector folds it into
 * chain_observations, and the evidence read for a round of swaps judges them. A node that is down costs a
 * metric and a retry, and appends nothing.
 */
const USER = '0x00000000000000000000000000000000000000a1' as Address;
const OTHER = '0x00000000000000000000000000000000000000b2' as Address;

describe('chain watcher (real stack, real EVM node)', () => {
  const stack = testStack();
  const logger = createLogger({ level: 'silent' });
  let node: EvmNode;
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let live: string;
  let pool: pg.Pool;
  let running: RunningProjector;
  const hashes: Record<string, Hash> = {};

  const sourcesDoc = {
    sources: { local: { family: 'evm', urlEnv: 'LOCAL_EVM_URL', ratePerSecond: 50, timeoutMs: 2000 } },
    currencies: {
      ETH: { source: 'local', confirmations: 2, asset: 'native', decimals: 18, deadlineMinutes: 60 },
    },
  };

  beforeAll(async () => {
    node = await startEvmNode();
    const wallet = createWalletClient({
      account: privateKeyToAccount(DEV_KEYS[1]),
      chain: hardhat,
      transport: http(node.url),
    });
    const reader = createPublicClient({ chain: hardhat, transport: http(node.url) });
    for (const [name, to] of [
      ['right', USER],
      ['elsewhere', OTHER],
    ] as const) {
      hashes[name] = await wallet.sendTransaction({ to, value: 10n ** 18n });
      await reader.waitForTransactionReceipt({ hash: hashes[name] });
    }
    await createTestClient({ chain: hardhat, mode: 'hardhat', transport: http(node.url) }).mine({
      blocks: 2,
    });

    log = await freshEventLog(2);
    live = uniqueName('chainwatch', '_');
    await migrateProjection(stack.databaseUrl, live);
    pool = createPool(stack.databaseUrl, { searchPath: live });
    running = await startProjector(projectionConfig(log, live), logger);
    const request = { payoutAddress: USER, payloadCurrencyTo: 'ETH', currencyTo: 'eth' };
    const finished = (id: string, payout: string) => [
      swapCreated(id, { request }),
      statusReported(id, 'FINISHED', { amount: '1', payinTransactionId: null, payoutTransactionId: payout }),
    ];
    await log.append([
      ...finished('w-right', hashes.right!),
      ...finished('w-elsewhere', hashes.elsewhere!),
      ...finished('w-unknown', `0x${'42'.repeat(32)}`),
    ]);
    await waitForProjection(pool, log.topic);
  }, 180_000);

  afterAll(async () => {
    await running?.stop();
    await pool?.end();
    await log?.close();
    await node?.stop();
  });

  it('a node that is down: each lookup fails, counted, nothing appended, looked up again later', async () => {
    const sources = parseChainSources(sourcesDoc);
    const metrics = createChainWatchMetrics(new MetricsRegistry());
    const watcher = new ChainWatcher({
      projection: pool,
      appender: log.appender,
      sources,
      clients: chainClients(sources, { LOCAL_EVM_URL: 'http://127.0.0.1:9' }),
      logger,
      metrics,
    });
    const r = await watcher.round();
    expect(r).toMatchObject({ watched: 3, looked: 3, appended: 0, failed: 3 });
    expect(await valueOf(metrics.sourceFailures, { source: 'local' })).toBe(3);
    expect(await valueOf(metrics.lookups, { source: 'local', outcome: 'error' })).toBe(3);
    // Backoff: not due again at once.
    expect((await watcher.round()).looked).toBe(0);
  });

  it('looks each reported payout up, appends what it saw, and the evidence judges each swap', async () => {
    const sources = parseChainSources(sourcesDoc);
    const metrics = createChainWatchMetrics(new MetricsRegistry());
    const watcher = new ChainWatcher({
      projection: pool,
      appender: log.appender,
      sources,
      clients: chainClients(sources, { LOCAL_EVM_URL: node.url }),
      logger,
      metrics,
      baseBackoffMs: 0,
    });
    const r = await watcher.round();
    expect(r).toMatchObject({ watched: 3, looked: 3, appended: 3, failed: 0 });
    await waitForProjection(pool, log.topic);
    const rows = await pool.query(
      `select swap_id, status, deadline_passed, proven from chain_observations order by swap_id`,
    );
    // The swaps ended at the test clock's time, long before now: the unknown hash is past its deadline.
    expect(rows.rows).toEqual([
      { swap_id: 'w-elsewhere', status: 'found', deadline_passed: true, proven: true },
      { swap_id: 'w-right', status: 'found', deadline_passed: true, proven: true },
      { swap_id: 'w-unknown', status: 'not_found', deadline_passed: true, proven: false },
    ]);
    const queued = await pool.query(`select swap_id, reason from reconciliation_queue order by swap_id`);
    expect(queued.rows).toEqual([
      { swap_id: 'w-elsewhere', reason: 'chain' },
      { swap_id: 'w-right', reason: 'chain' },
      { swap_id: 'w-unknown', reason: 'chain' },
    ]);
    // Settled transactions are not watched any more; nothing new to append.
    expect(await watcher.round()).toMatchObject({ watched: 0, appended: 0 });

    const refs = ['w-right', 'w-elsewhere', 'w-unknown'].map((swapId) => ({
      providerId: 'partner-a',
      swapId,
    }));
    const evidence = await loadChainEvidence(pool, refs, sources);
    expect(evidence.size).toBe(3);
    // No chain source configured at all: no evidence, so no chain checks (verdicts as before).
    expect((await loadChainEvidence(pool, refs, NO_CHAIN_SOURCES)).size).toBe(0);
    const verdictOf = (swapId: string, txid: string) => {
      const i = {
        ...input({
          request: { payoutAddress: USER, payloadCurrencyTo: 'ETH' },
          decoded: { payout_address: USER, currency_to: 'ETH' },
          final: { amount: '1', payoutTransactionId: txid },
        }),
        chain: evidence.get(`partner-a/${swapId}`)!,
      };
      return chainChecks(i, 'FINISHED').find((c) => c.name === 'chain.payout')!;
    };
    expect(verdictOf('w-right', hashes.right!).verdict).toBe('MATCHED');
    expect(verdictOf('w-elsewhere', hashes.elsewhere!)).toMatchObject({
      verdict: 'MISMATCH',
      detail: expect.stringMatching(/does not pay the signed payout address/),
    });
    expect(verdictOf('w-unknown', `0x${'42'.repeat(32)}`)).toMatchObject({
      verdict: 'MISMATCH',
      detail: expect.stringMatching(/not found on the chain by the deadline/),
    });
  });

  it('the reconciler reads the evidence with its round when chain sources are configured, and judges it', async () => {
    await migratePlatform(stack.databaseUrl);
    const judge = (chainSources?: ReturnType<typeof parseChainSources>) =>
      new Reconciler({
        projection: pool,
        platform: pool,
        appender: log.appender,
        policy: DEFAULT_RECONCILIATION_POLICY,
        logger: createLogger({ level: 'silent' }),
        ...(chainSources ? { chainSources } : {}),
      });
    const payout = async (swapId: string, r: Reconciler) =>
      (await r.check({ providerId: 'partner-a', swapId })).result.checks.find(
        (c) => c.name === 'chain.payout',
      );
    const configured = judge(parseChainSources(sourcesDoc));
    expect((await payout('w-right', configured))?.verdict).toBe('MATCHED');
    expect((await payout('w-elsewhere', configured))?.verdict).toBe('MISMATCH');
    // No sources configured: no evidence read, no chain check (verdicts as before the watcher).
    expect(await payout('w-elsewhere', judge())).toBeUndefined();
  });

  it('finance sees the chain evidence per swap, and "reported but not on chain" as a ledger exception', async () => {
    const finance = `${live}_fin`;
    const client = await pool.connect();
    try {
      await ensureFinanceViews(client, live, finance);
      const evidence = await client.query(
        `select swap_id, role, chain_status, signed_address from ${finance}.chain_evidence where role = 'payout' order by swap_id`,
      );
      expect(evidence.rows).toEqual([
        { swap_id: 'w-elsewhere', role: 'payout', chain_status: 'found', signed_address: USER },
        { swap_id: 'w-right', role: 'payout', chain_status: 'found', signed_address: USER },
        { swap_id: 'w-unknown', role: 'payout', chain_status: 'not_found', signed_address: USER },
      ]);
      const exceptions = await client.query(
        `select swap_id, reason from ${finance}.ledger_exceptions where reason like 'reported but not on chain%'`,
      );
      expect(exceptions.rows).toEqual([
        {
          swap_id: 'w-unknown',
          reason: `reported but not on chain: the payout transaction 0x${'42'.repeat(32)} was not found on local by its deadline`,
        },
      ]);
    } finally {
      client.release();
    }
  });

  it("the console's swap page shows the chain evidence", async () => {
    const db = new ConsoleDb(stack.databaseUrl, live, 'finance', logger);
    try {
      const page = String(await swapLive(db, 'partner-a', 'w-elsewhere'));
      expect(page).toContain('<h2>Chain evidence</h2>');
      expect(page).toContain(hashes.elsewhere!);
      expect(page).toContain(OTHER);
      expect(page).toContain('past the deadline');
    } finally {
      await db.close();
    }
  });

  it('`swap-ledger chain watch --once`: one round from the configuration; a bad sources file is refused (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chain-watch-'));
    const file = join(dir, 'chains.yaml');
    writeFileSync(
      file,
      'sources:\n  local: { family: evm, urlEnv: LOCAL_EVM_URL }\ncurrencies:\n  ETH: { source: local, confirmations: 2, decimals: 18 }\n',
    );
    const env = {
      ...projectionConfig(log, live),
      CHAIN_SOURCES_FILE: file,
      LOCAL_EVM_URL: node.url,
      LOG_LEVEL: 'silent',
    };
    const ok = await runCli(['chain', 'watch', '--once'], env);
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toMatch(/watched 0, looked up 0, appended 0 observation\(s\), 0 lookup\(s\) failed/);
    expect(ok.code).toBe(0);
    writeFileSync(file, 'sources:\n  local: { family: solana, urlEnv: X }\n');
    const bad = await runCli(['chain', 'watch', '--once'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/sources\.local\.family: must be evm or utxo/);
  });
});
