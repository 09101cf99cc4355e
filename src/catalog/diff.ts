import { Decimal } from '../money/decimal.ts';
import type { Currency, Pair } from '../partner/types.ts';

/**
 * The catalog diff, pure: what a full read of a partner's currencies and pairs changes in the stored
 * catalog, as rows to write and as history lines (catalog_changes). Nothing is ever deleted: an item
 * missing from a full read is disabled, and enabled again when it comes back.
 */

export interface CatalogCurrency {
  readonly id: string;
  readonly type: string;
  readonly blockchain: string | null;
  readonly chainId: number | null;
  readonly contract: string | null;
}

export interface StoredCurrency extends CatalogCurrency {
  readonly enabled: boolean;
}

export interface CatalogPair {
  readonly from: string;
  readonly to: string;
  /** Sorted, distinct. */
  readonly tradeMethods: readonly string[];
  /** Decimal text as the partner sent it (numeric in Postgres). */
  readonly minAmount: string;
  readonly maxAmount: string;
}

export interface StoredPair extends CatalogPair {
  readonly enabled: boolean;
}

export type CatalogChangeKind =
  | 'added'
  | 'disabled'
  | 'enabled'
  | 'min_amount'
  | 'max_amount'
  | 'trade_methods'
  | 'type'
  | 'network'
  | 'contract';

export interface CatalogChange {
  readonly itemKind: 'currency' | 'pair';
  /** `btc`, or `btc/eth` for a pair. */
  readonly item: string;
  readonly change: CatalogChangeKind;
  readonly oldValue: string | null;
  readonly newValue: string | null;
}

export interface CatalogDiff {
  /** Every currency of the read (all are written: last_seen_at moves), and the ids whose row changed. */
  readonly currencies: readonly CatalogCurrency[];
  readonly changedCurrencies: ReadonlySet<string>;
  readonly disableCurrencies: readonly string[];
  readonly pairs: readonly CatalogPair[];
  /** `from/to` of pairs whose row changed. */
  readonly changedPairs: ReadonlySet<string>;
  readonly disablePairs: readonly (readonly [string, string])[];
  readonly changes: readonly CatalogChange[];
}

export function catalogCurrency(c: Currency): CatalogCurrency {
  return {
    id: c.id,
    type: c.type,
    // The interface's rule: chainId wins over blockchain (which is then ignored).
    blockchain: c.chainId !== undefined ? null : (c.blockchain ?? null),
    chainId: c.chainId ?? null,
    contract: c.contract ?? null,
  };
}

export function catalogPair(p: Pair): CatalogPair {
  return {
    from: p.from,
    to: p.to,
    tradeMethods: [...new Set(p.tradeMethod)].sort(),
    minAmount: p.minSwapAmount,
    maxAmount: p.maxSwapAmount,
  };
}

export const pairName = (from: string, to: string) => `${from}/${to}`;

function network(c: CatalogCurrency): string {
  return c.chainId !== null ? `chainId:${c.chainId}` : `blockchain:${c.blockchain ?? ''}`;
}

function describePair(p: CatalogPair): string {
  return `${p.tradeMethods.join(',')} ${p.minAmount}..${p.maxAmount}`;
}

const sameAmount = (a: string, b: string) => new Decimal(a).eq(new Decimal(b));

/** Later duplicates of an id win (a partner that lists an item twice). */
function byKey<T>(items: readonly T[], key: (t: T) => string): Map<string, T> {
  return new Map(items.map((i) => [key(i), i]));
}

export function diffCatalog(
  stored: { currencies: readonly StoredCurrency[]; pairs: readonly StoredPair[] },
  read: { currencies: readonly CatalogCurrency[]; pairs: readonly CatalogPair[] },
): CatalogDiff {
  const changes: CatalogChange[] = [];
  const change = (
    itemKind: CatalogChange['itemKind'],
    item: string,
    kind: CatalogChangeKind,
    oldValue: string | null,
    newValue: string | null,
  ) => changes.push({ itemKind, item, change: kind, oldValue, newValue });

  const storedCurrencies = byKey(stored.currencies, (c) => c.id);
  const readCurrencies = byKey(read.currencies, (c) => c.id);
  const changedCurrencies = new Set<string>();
  for (const c of readCurrencies.values()) {
    const before = storedCurrencies.get(c.id);
    const n = changes.length;
    if (!before) change('currency', c.id, 'added', null, `${c.type} ${network(c)}`);
    else {
      if (!before.enabled) change('currency', c.id, 'enabled', 'false', 'true');
      if (before.type !== c.type) change('currency', c.id, 'type', before.type, c.type);
      if (network(before) !== network(c)) change('currency', c.id, 'network', network(before), network(c));
      if (before.contract !== c.contract) change('currency', c.id, 'contract', before.contract, c.contract);
    }
    if (changes.length > n) changedCurrencies.add(c.id);
  }
  const disableCurrencies: string[] = [];
  for (const c of storedCurrencies.values()) {
    if (c.enabled && !readCurrencies.has(c.id)) {
      disableCurrencies.push(c.id);
      change('currency', c.id, 'disabled', 'true', 'false');
    }
  }

  const storedPairs = byKey(stored.pairs, (p) => pairName(p.from, p.to));
  const readPairs = byKey(read.pairs, (p) => pairName(p.from, p.to));
  const changedPairs = new Set<string>();
  for (const [name, p] of readPairs) {
    const before = storedPairs.get(name);
    const n = changes.length;
    if (!before) change('pair', name, 'added', null, describePair(p));
    else {
      if (!before.enabled) change('pair', name, 'enabled', 'false', 'true');
      if (!sameAmount(before.minAmount, p.minAmount))
        change('pair', name, 'min_amount', before.minAmount, p.minAmount);
      if (!sameAmount(before.maxAmount, p.maxAmount))
        change('pair', name, 'max_amount', before.maxAmount, p.maxAmount);
      const oldMethods = [...before.tradeMethods].sort().join(',');
      const newMethods = p.tradeMethods.join(',');
      if (oldMethods !== newMethods) change('pair', name, 'trade_methods', oldMethods, newMethods);
    }
    if (changes.length > n) changedPairs.add(name);
  }
  const disablePairs: (readonly [string, string])[] = [];
  for (const [name, p] of storedPairs) {
    if (p.enabled && !readPairs.has(name)) {
      disablePairs.push([p.from, p.to]);
      change('pair', name, 'disabled', 'true', 'false');
    }
  }
  return {
    currencies: [...readCurrencies.values()],
    changedCurrencies,
    disableCurrencies,
    pairs: [...readPairs.values()],
    changedPairs,
    disablePairs,
    changes,
  };
}
