// The partners' currency and pair catalogs, synced into Postgres (README, "Catalog sync").
export { checkAgainstCatalog, type CatalogRefusal } from './check.ts';
export {
  catalogCurrency,
  catalogPair,
  diffCatalog,
  pairName,
  type CatalogChange,
  type CatalogChangeKind,
  type CatalogCurrency,
  type CatalogDiff,
  type CatalogPair,
  type StoredCurrency,
  type StoredPair,
} from './diff.ts';
export {
  findPair,
  lastSync,
  readChanges,
  readCurrencies,
  readPairs,
  type ChangeView,
  type CurrencyView,
  type PairView,
  type SyncRecord,
} from './store.ts';
export { syncCatalog, type CatalogSyncReport } from './sync.ts';
