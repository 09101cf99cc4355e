import data from './currencies.json' with { type: 'json' };
import { MAX_DECIMALS } from './atomic.ts';

/** A platform currency and the size of its atomic unit (1 BTC = 10^8 atomic units). */
export interface CurrencyMagnitude {
  /** Platform currency id, as in payloadCurrencyFrom / currency_from. */
  readonly id: string;
  readonly decimals: number;
  readonly network: string;
}

/** Decimals of a platform currency id, or undefined when it is not known. */
export type DecimalsLookup = (platformCurrencyId: string) => number | undefined;

const table: ReadonlyMap<string, CurrencyMagnitude> = (() => {
  const map = new Map<string, CurrencyMagnitude>();
  for (const [id, entry] of Object.entries(
    data.currencies as Record<string, { decimals: unknown; network: unknown }>,
  )) {
    // A broken data file must stop the process, not shift amounts by powers of ten.
    if (
      !Number.isInteger(entry.decimals) ||
      (entry.decimals as number) < 0 ||
      (entry.decimals as number) > MAX_DECIMALS
    )
      throw new Error(`currencies.json: ${id} has invalid decimals ${String(entry.decimals)}`);
    if (typeof entry.network !== 'string') throw new Error(`currencies.json: ${id} has no network`);
    map.set(id, Object.freeze({ id, decimals: entry.decimals as number, network: entry.network }));
  }
  return map;
})();

/** The platform currency with exactly this id (case-sensitive, as signed), or undefined: never a guess. */
export function platformCurrency(id: string): CurrencyMagnitude | undefined {
  return table.get(id);
}

/** Decimals of a platform currency id, or undefined when the id is unknown. */
export const currencyDecimals: DecimalsLookup = (id) => table.get(id)?.decimals;

/** Every known platform currency, in the data file's order. */
export function platformCurrencies(): readonly CurrencyMagnitude[] {
  return [...table.values()];
}
