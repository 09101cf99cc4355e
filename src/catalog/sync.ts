import type pg from 'pg';
import type { Logger } from '../observability/log.ts';
import type { PartnerClient } from '../partner/client.ts';
import {
  catalogCurrency,
  catalogPair,
  diffCatalog,
  pairName,
  type CatalogCurrency,
  type CatalogPair,
} from './diff.ts';
import { readCurrencies, readPairs } from './store.ts';

export interface CatalogSyncReport {
  readonly providerId: string;
  readonly outcome: 'ok' | 'failed';
  readonly syncId: string;
  readonly currencies?: number;
  readonly pairs?: number;
  /** History lines written (added, disabled, enabled, limits changed...). */
  readonly changes?: number;
  readonly error?: string;
}

type Client = Pick<PartnerClient, 'currencies' | 'pairs'>;

/** How long a provider's catalog may fail to sync before it is logged as a warning. */
export const CATALOG_FAILING_WARN_MS = 5 * 60_000;

/**
 * One full sync of a provider's catalog: every page of GET /currencies and GET /pairs is read first;
 * only a complete read changes anything (a failed page leaves the catalog as it was, so a partner
 * hiccup never disables pairs). Then, in one transaction serialised per provider: every item read is
 * upserted (enabled, last_seen_at now), every stored item the read did not list is disabled, and each
 * change is written to catalog_changes. Each sync, ok or failed, is a row of catalog_syncs.
 */
export async function syncCatalog(
  pool: pg.Pool,
  client: Client,
  providerId: string,
  options: { logger?: Logger; now?: () => Date } = {},
): Promise<CatalogSyncReport> {
  const now = options.now ?? (() => new Date());
  const startedAt = now().toISOString();
  let currencies: CatalogCurrency[];
  let pairs: CatalogPair[];
  try {
    currencies = [];
    for await (const c of client.currencies()) currencies.push(catalogCurrency(c));
    pairs = [];
    for await (const p of client.pairs()) pairs.push(catalogPair(p));
  } catch (e) {
    const error = (e as Error).message.slice(0, 1000);
    const r = await pool.query<{ sync_id: string; failing_since: Date }>(
      `with last_ok as (
         select max(started_at) as at from platform.catalog_syncs where provider_id = $1 and outcome = 'ok')
       insert into platform.catalog_syncs (provider_id, started_at, finished_at, outcome, error)
       values ($1, $2, $3, 'failed', $4)
       returning sync_id, coalesce(
         (select min(started_at) from platform.catalog_syncs
           where provider_id = $1 and outcome = 'failed'
             and started_at > coalesce((select at from last_ok), '-infinity')), $2) as failing_since`,
      [providerId, startedAt, now().toISOString(), error],
    );
    // A partner not answering for a moment (the demo's simulator still starting when the poller syncs at its
    // start) changes nothing and is tried again at the next sync: said at info. Failing for longer than
    // CATALOG_FAILING_WARN_MS since the last good sync is a partner to look at: a warning.
    const failingMs = Date.parse(startedAt) - new Date(r.rows[0]!.failing_since).getTime();
    const log = { provider: providerId, failingForMs: failingMs, err: e };
    if (failingMs >= CATALOG_FAILING_WARN_MS) options.logger?.warn(log, 'catalog sync still failing');
    else
      options.logger?.info(log, 'catalog sync failed; tried again at the next sync, the catalog unchanged');
    return { providerId, outcome: 'failed', syncId: r.rows[0]!.sync_id, error };
  }

  const connection = await pool.connect();
  try {
    await connection.query('begin');
    await connection.query(`select pg_advisory_xact_lock(hashtext('swap-ledger:catalog:' || $1))`, [
      providerId,
    ]);
    const stored = {
      currencies: await readCurrencies(connection, providerId, { includeDisabled: true }),
      pairs: await readPairs(connection, providerId, { includeDisabled: true }),
    };
    const diff = diffCatalog(stored, { currencies, pairs });
    const at = now().toISOString();
    const sync = await connection.query<{ sync_id: string }>(
      `insert into platform.catalog_syncs (provider_id, started_at, finished_at, outcome, currencies, pairs, changes)
       values ($1, $2, $3, 'ok', $4, $5, $6) returning sync_id`,
      [providerId, startedAt, at, diff.currencies.length, diff.pairs.length, diff.changes.length],
    );
    const syncId = sync.rows[0]!.sync_id;
    const cs = diff.currencies;
    if (cs.length > 0)
      await connection.query(
        `insert into platform.catalog_currencies (provider_id, currency_id, type, blockchain, chain_id,
           contract, enabled, first_seen_at, last_seen_at, updated_at)
         select $1, u.id, u.type, u.blockchain, u.chain_id, u.contract, true, $2, $2, $2
         from unnest($3::text[], $4::text[], $5::text[], $6::int[], $7::text[])
           as u(id, type, blockchain, chain_id, contract)
         on conflict (provider_id, currency_id) do update set type = excluded.type,
           blockchain = excluded.blockchain, chain_id = excluded.chain_id, contract = excluded.contract,
           enabled = true, last_seen_at = excluded.last_seen_at`,
        [
          providerId,
          at,
          cs.map((c) => c.id),
          cs.map((c) => c.type),
          cs.map((c) => c.blockchain),
          cs.map((c) => c.chainId),
          cs.map((c) => c.contract),
        ],
      );
    if (diff.changedCurrencies.size > 0)
      await connection.query(
        `update platform.catalog_currencies set updated_at = $3
         where provider_id = $1 and currency_id = any($2::text[])`,
        [providerId, [...diff.changedCurrencies], at],
      );
    if (diff.disableCurrencies.length > 0)
      await connection.query(
        `update platform.catalog_currencies set enabled = false, updated_at = $3
         where provider_id = $1 and currency_id = any($2::text[])`,
        [providerId, diff.disableCurrencies, at],
      );
    const ps = diff.pairs;
    if (ps.length > 0)
      await connection.query(
        `insert into platform.catalog_pairs (provider_id, currency_from, currency_to, trade_methods,
           min_amount, max_amount, enabled, first_seen_at, last_seen_at, updated_at)
         select $1, u.f, u.t, string_to_array(u.methods, ','), u.min, u.max, true, $2, $2, $2
         from unnest($3::text[], $4::text[], $5::text[], $6::numeric[], $7::numeric[])
           as u(f, t, methods, min, max)
         on conflict (provider_id, currency_from, currency_to) do update set
           trade_methods = excluded.trade_methods, min_amount = excluded.min_amount,
           max_amount = excluded.max_amount, enabled = true, last_seen_at = excluded.last_seen_at`,
        [
          providerId,
          at,
          ps.map((p) => p.from),
          ps.map((p) => p.to),
          ps.map((p) => p.tradeMethods.join(',')),
          ps.map((p) => p.minAmount),
          ps.map((p) => p.maxAmount),
        ],
      );
    const changed = ps.filter((p) => diff.changedPairs.has(pairName(p.from, p.to)));
    if (changed.length > 0)
      await connection.query(
        `update platform.catalog_pairs set updated_at = $4
         where provider_id = $1 and (currency_from, currency_to) in (select * from unnest($2::text[], $3::text[]))`,
        [providerId, changed.map((p) => p.from), changed.map((p) => p.to), at],
      );
    if (diff.disablePairs.length > 0)
      await connection.query(
        `update platform.catalog_pairs set enabled = false, updated_at = $4
         where provider_id = $1 and (currency_from, currency_to) in
           (select * from unnest($2::text[], $3::text[]))`,
        [providerId, diff.disablePairs.map(([f]) => f), diff.disablePairs.map(([, t]) => t), at],
      );
    const ch = diff.changes;
    if (ch.length > 0)
      await connection.query(
        `insert into platform.catalog_changes (sync_id, provider_id, item_kind, item, change, old_value,
           new_value, changed_at)
         select $1, $2, u.kind, u.item, u.change, u.old, u.new, $3
         from unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) as u(kind, item, change, old, new)`,
        [
          syncId,
          providerId,
          at,
          ch.map((c) => c.itemKind),
          ch.map((c) => c.item),
          ch.map((c) => c.change),
          ch.map((c) => c.oldValue),
          ch.map((c) => c.newValue),
        ],
      );
    await connection.query('commit');
    const report: CatalogSyncReport = {
      providerId,
      outcome: 'ok',
      syncId,
      currencies: diff.currencies.length,
      pairs: diff.pairs.length,
      changes: diff.changes.length,
    };
    options.logger?.info(
      {
        ...report,
        disabledPairs: diff.disablePairs.map(([f, t]) => pairName(f, t)).slice(0, 50),
      },
      'catalog synced',
    );
    return report;
  } catch (e) {
    await connection.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    connection.release();
  }
}
