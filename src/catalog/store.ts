import type pg from 'pg';
import type { CatalogChange, StoredCurrency, StoredPair } from './diff.ts';

/** A pool or a client inside the caller's transaction. */
export type Db = pg.Pool | pg.ClientBase;

interface CurrencyRow {
  currency_id: string;
  type: string;
  blockchain: string | null;
  chain_id: number | null;
  contract: string | null;
  enabled: boolean;
  last_seen_at: string;
}

interface PairRow {
  currency_from: string;
  currency_to: string;
  trade_methods: string[];
  min_amount: string;
  max_amount: string;
  enabled: boolean;
  last_seen_at: string;
}

export type CurrencyView = StoredCurrency & { readonly lastSeenAt: string };
export type PairView = StoredPair & { readonly lastSeenAt: string };

const currencyOf = (r: CurrencyRow): CurrencyView => ({
  id: r.currency_id,
  type: r.type,
  blockchain: r.blockchain,
  chainId: r.chain_id,
  contract: r.contract,
  enabled: r.enabled,
  lastSeenAt: r.last_seen_at,
});

const pairOf = (r: PairRow): PairView => ({
  from: r.currency_from,
  to: r.currency_to,
  tradeMethods: r.trade_methods,
  minAmount: r.min_amount,
  maxAmount: r.max_amount,
  enabled: r.enabled,
  lastSeenAt: r.last_seen_at,
});

export async function readCurrencies(
  db: Db,
  providerId: string,
  options: { includeDisabled?: boolean } = {},
): Promise<CurrencyView[]> {
  const r = await db.query<CurrencyRow>(
    `select currency_id, type, blockchain, chain_id, contract, enabled, last_seen_at
     from platform.catalog_currencies where provider_id = $1 ${options.includeDisabled ? '' : 'and enabled'}
     order by currency_id`,
    [providerId],
  );
  return r.rows.map(currencyOf);
}

export async function readPairs(
  db: Db,
  providerId: string,
  options: { includeDisabled?: boolean; from?: string; to?: string } = {},
): Promise<PairView[]> {
  const r = await db.query<PairRow>(
    `select currency_from, currency_to, trade_methods, min_amount, max_amount, enabled, last_seen_at
     from platform.catalog_pairs where provider_id = $1 ${options.includeDisabled ? '' : 'and enabled'}
       and ($2::text is null or currency_from = $2) and ($3::text is null or currency_to = $3)
     order by currency_from, currency_to`,
    [providerId, options.from ?? null, options.to ?? null],
  );
  return r.rows.map(pairOf);
}

/** One pair, enabled or not; undefined when the catalog never saw it. */
export async function findPair(
  db: Db,
  providerId: string,
  from: string,
  to: string,
): Promise<PairView | undefined> {
  const r = await db.query<PairRow>({
    name: 'catalog-find-pair',
    text: `select currency_from, currency_to, trade_methods, min_amount, max_amount, enabled, last_seen_at
           from platform.catalog_pairs where provider_id = $1 and currency_from = $2 and currency_to = $3`,
    values: [providerId, from, to],
  });
  return r.rows[0] && pairOf(r.rows[0]);
}

export interface SyncRecord {
  readonly syncId: string;
  readonly providerId: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly outcome: 'ok' | 'failed';
  readonly currencies: number | null;
  readonly pairs: number | null;
  readonly changes: number | null;
  readonly error: string | null;
}

/** The latest sync of a provider (ok or failed). */
export async function lastSync(db: Db, providerId: string): Promise<SyncRecord | undefined> {
  const r = await db.query<{
    sync_id: string;
    provider_id: string;
    started_at: string;
    finished_at: string;
    outcome: 'ok' | 'failed';
    currencies: number | null;
    pairs: number | null;
    changes: number | null;
    error: string | null;
  }>(
    `select sync_id, provider_id, started_at, finished_at, outcome, currencies, pairs, changes, error
     from platform.catalog_syncs where provider_id = $1 order by sync_id desc limit 1`,
    [providerId],
  );
  // Columns mapped by hand, as every platform read (gateway/idempotency.ts, gateway/quotes.ts).
  const row = r.rows[0];
  return (
    row && {
      syncId: row.sync_id,
      providerId: row.provider_id,
      startedAt: row.started_at,
      finishedAt: row.finished_at,
      outcome: row.outcome,
      currencies: row.currencies,
      pairs: row.pairs,
      changes: row.changes,
      error: row.error,
    }
  );
}

export type ChangeView = CatalogChange & { readonly syncId: string; readonly changedAt: string };

export async function readChanges(
  db: Db,
  providerId: string,
  options: { limit?: number } = {},
): Promise<ChangeView[]> {
  const r = await db.query<{
    sync_id: string;
    item_kind: 'currency' | 'pair';
    item: string;
    change: CatalogChange['change'];
    old_value: string | null;
    new_value: string | null;
    changed_at: string;
  }>(
    `select sync_id, item_kind, item, change, old_value, new_value, changed_at from platform.catalog_changes
     where provider_id = $1 order by change_id desc limit $2`,
    [providerId, options.limit ?? 100],
  );
  return r.rows.map((row) => ({
    syncId: row.sync_id,
    itemKind: row.item_kind,
    item: row.item,
    change: row.change,
    oldValue: row.old_value,
    newValue: row.new_value,
    changedAt: row.changed_at,
  }));
}
