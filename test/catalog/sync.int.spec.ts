import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncCatalog } from '../../src/catalog/sync.ts';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import {
  DEFAULT_CURRENCIES,
  DEFAULT_PAIRS,
  startPartnerSimulator,
  type PartnerSimulator,
} from '../../src/simulator/index.ts';
import { ProviderClients } from '../../src/providers/clients.ts';
import { readProvidersFile } from '../../src/providers/file.ts';
import { loadProviders } from '../../src/providers/store.ts';
import { runCli } from '../support/cli.ts';
import { testStack, uniqueName } from '../support/context.ts';

/** Catalog sync against the simulator over real HTTP, into the platform tables of the run's database. */
describe('catalog sync', () => {
  const stack = testStack();
  const providerId = uniqueName('catalog');
  let sim: PartnerSimulator;
  let pool: pg.Pool;
  let clients: ProviderClients;

  beforeAll(async () => {
    await migratePlatform(stack.databaseUrl);
    pool = createPool(stack.databaseUrl, { max: 2 });
    // Small pages: the sync must follow every cursor.
    sim = await startPartnerSimulator({ providerId, defaultPageSize: 10 });
    const file = join(mkdtempSync(join(tmpdir(), 'catalog-')), 'providers.yaml');
    writeFileSync(
      file,
      `providers:\n  - id: ${providerId}\n    client: { baseUrl: "${sim.url}", retry: { maxAttempts: 2, baseDelayMs: 10 } }\n`,
    );
    await loadProviders(pool, readProvidersFile(file, {}));
    clients = new ProviderClients(pool, { refreshMs: 60_000 });
  });

  afterAll(async () => {
    await sim?.close();
    await pool?.end();
  });

  const sync = async () => syncCatalog(pool, (await clients.get(providerId))!.client, providerId);
  const pair = async (from: string, to: string) =>
    (
      await pool.query(
        `select trade_methods, min_amount, max_amount, enabled from platform.catalog_pairs
         where provider_id = $1 and currency_from = $2 and currency_to = $3`,
        [providerId, from, to],
      )
    ).rows[0];
  const changesOf = async (syncId: string) =>
    (
      await pool.query<{ item: string; change: string; old_value: string | null; new_value: string | null }>(
        `select item, change, old_value, new_value from platform.catalog_changes
         where provider_id = $1 and sync_id = $2 order by change_id`,
        [providerId, syncId],
      )
    ).rows;

  it('`catalog sync --provider` reads every page into the catalog tables', async () => {
    const run = await runCli(['catalog', 'sync', '--provider', providerId], {
      DATABASE_URL: stack.databaseUrl,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout.trim()) as Record<string, unknown>;
    expect(report).toMatchObject({ providerId, outcome: 'ok', currencies: 8, pairs: 56, changes: 64 });
    expect(sim.calls('pairs').length).toBe(6); // 56 pairs, 10 a page
    expect(await pair('btc', 'eth')).toEqual({
      trade_methods: ['fixed', 'float'],
      min_amount: '0.0002',
      max_amount: '5',
      enabled: true,
    });
    expect(await pair('btc', 'xrp')).toMatchObject({ trade_methods: ['float'] });
    const usdt = await pool.query(
      `select type, blockchain, chain_id, contract, enabled from platform.catalog_currencies
       where provider_id = $1 and currency_id = 'usdt'`,
      [providerId],
    );
    expect(usdt.rows).toEqual([
      {
        type: 'token',
        blockchain: null,
        chain_id: 1,
        contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
        enabled: true,
      },
    ]);
  });

  it('records what changed and when: limits, trade methods, a pair and a currency gone (disabled, not deleted)', async () => {
    const pairs = DEFAULT_PAIRS.filter(
      (p) => !(p.from === 'eth' && p.to === 'btc') && p.from !== 'sol' && p.to !== 'sol',
    ).map((p) =>
      p.from === 'btc' && p.to === 'eth'
        ? { ...p, minSwapAmount: '0.001', maxSwapAmount: '4' }
        : p.from === 'ltc' && p.to === 'eth'
          ? { ...p, tradeMethod: ['float' as const] }
          : p,
    );
    sim.setPairs(pairs);
    sim.setCurrencies(DEFAULT_CURRENCIES.filter((c) => c.id !== 'sol'));
    const report = await sync();
    expect(report).toMatchObject({ outcome: 'ok', currencies: 7, pairs: 41 });
    const changes = await changesOf(report.syncId);
    expect(changes.filter((c) => c.item === 'btc/eth')).toEqual([
      { item: 'btc/eth', change: 'min_amount', old_value: '0.0002', new_value: '0.001' },
      { item: 'btc/eth', change: 'max_amount', old_value: '5', new_value: '4' },
    ]);
    expect(changes.filter((c) => c.item === 'ltc/eth')).toEqual([
      { item: 'ltc/eth', change: 'trade_methods', old_value: 'fixed,float', new_value: 'float' },
    ]);
    expect(
      changes
        .filter((c) => c.change === 'disabled')
        .map((c) => c.item)
        .sort(),
    ).toEqual(
      [
        'eth/btc',
        'sol',
        ...DEFAULT_PAIRS.filter((p) => p.from === 'sol' || p.to === 'sol').map((p) => `${p.from}/${p.to}`),
      ].sort(),
    );
    expect(changes).toHaveLength(2 + 1 + 1 + 1 + 14);
    expect(await pair('eth', 'btc')).toMatchObject({ enabled: false, min_amount: '0.004' });
    expect(await pair('btc', 'eth')).toMatchObject({ min_amount: '0.001', max_amount: '4', enabled: true });
    const when = await pool.query(
      `select distinct c.changed_at = s.finished_at as same from platform.catalog_changes c
       join platform.catalog_syncs s using (sync_id) where c.sync_id = $1`,
      [report.syncId],
    );
    expect(when.rows).toEqual([{ same: true }]);
    // A sync that changes nothing writes no history.
    expect((await sync()).changes).toBe(0);
  });

  it('a sync whose read fails changes nothing (only a full read disables); a returning pair is enabled again', async () => {
    sim.setPairs(DEFAULT_PAIRS.slice(0, 5));
    sim.injectFault('pairs', { kind: 'server-error' }, { times: 2 }); // the first page and its one retry
    const failed = await sync();
    expect(failed).toMatchObject({ outcome: 'failed' });
    expect(failed.error).toMatch(/HTTP 500/);
    expect(await pair('btc', 'eth')).toMatchObject({ enabled: true });
    const enabled = await pool.query(
      `select count(*)::int as n from platform.catalog_pairs where provider_id = $1 and enabled`,
      [providerId],
    );
    expect(enabled.rows[0].n).toBe(41);

    sim.setPairs(DEFAULT_PAIRS);
    sim.setCurrencies(DEFAULT_CURRENCIES);
    const back = await sync();
    const changes = await changesOf(back.syncId);
    expect(changes.filter((c) => c.change === 'enabled')).toHaveLength(1 + 1 + 14); // eth/btc, sol, sol's pairs
    expect(await pair('eth', 'btc')).toMatchObject({ enabled: true });
    const syncs = await pool.query(
      `select outcome from platform.catalog_syncs where provider_id = $1 order by sync_id`,
      [providerId],
    );
    expect(syncs.rows.map((r) => r.outcome)).toEqual(['ok', 'ok', 'ok', 'failed', 'ok']);
  });

  it('a failed sync is said at info (tried again at the next); failing for five minutes since the last good one is a warning', async () => {
    const lines: { level: number; msg: string; failingForMs?: number }[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const client = (await clients.get(providerId))!.client;
    let at = Date.now() + 86_400_000; // after every sync of the other tests
    const syncAt = (minutes: number) => {
      at += minutes * 60_000;
      const now = new Date(at);
      return syncCatalog(pool, client, providerId, { logger, now: () => now });
    };
    const failingAt = async (minutes: number) => {
      sim.injectFault('currencies', { kind: 'server-error' }, { times: 2 });
      expect(await syncAt(minutes)).toMatchObject({ outcome: 'failed' });
    };
    await failingAt(0);
    await failingAt(4);
    await failingAt(1); // five minutes since the first failure after the last good sync
    expect((await syncAt(1)).outcome).toBe('ok');
    await failingAt(15);
    expect(lines.map((l) => [l.level, l.msg, l.failingForMs])).toEqual([
      [30, 'catalog sync failed; tried again at the next sync, the catalog unchanged', 0],
      [30, 'catalog sync failed; tried again at the next sync, the catalog unchanged', 240_000],
      [40, 'catalog sync still failing', 300_000],
      [30, 'catalog synced', undefined],
      [30, 'catalog sync failed; tried again at the next sync, the catalog unchanged', 0],
    ]);
  });
});
