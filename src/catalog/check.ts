import { Decimal, isDecimalText } from '../money/decimal.ts';
import type { StoredPair } from './diff.ts';

/**
 * Whether the synced catalog allows a quote (or a float swap) at all, decided before the partner is
 * called, with the interface's own error keys so the wallet handles them like the partner's answers:
 *   404 SWAP_PAIR_NOT_FOUND_ERROR: the pair is unknown to the catalog or disabled
 *   400 FROM_CURRENCY_MINIMUM_AMOUNT_ERROR / FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR with
 *       additionalFields { minRequiredAmount, maxRequiredAmount }
 *   400 (no key): the pair does not offer the asked trade method
 */
export interface CatalogRefusal {
  readonly status: 400 | 404;
  readonly error: string;
  readonly messageKey?: string;
  readonly additionalFields?: Readonly<Record<string, string>>;
}

export function checkAgainstCatalog(
  pair: StoredPair | undefined,
  request: { from: string; to: string; amount: string; tradeMethod?: string | undefined },
): CatalogRefusal | undefined {
  const name = `${request.from}/${request.to}`;
  if (!pair || !pair.enabled) {
    return {
      status: 404,
      messageKey: 'SWAP_PAIR_NOT_FOUND_ERROR',
      error: pair ? `pair ${name} is disabled` : `pair ${name} is not in the catalog`,
    };
  }
  if (request.tradeMethod !== undefined && !pair.tradeMethods.includes(request.tradeMethod)) {
    return {
      status: 400,
      error: `pair ${name} does not offer the ${request.tradeMethod} trade method (offers ${pair.tradeMethods.join(', ')})`,
    };
  }
  if (!isDecimalText(request.amount)) return { status: 400, error: 'amount must be a decimal string' };
  const amount = new Decimal(request.amount);
  const limits = { minRequiredAmount: pair.minAmount, maxRequiredAmount: pair.maxAmount };
  if (amount.lt(new Decimal(pair.minAmount))) {
    return {
      status: 400,
      messageKey: 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR',
      error: `amount is below the minimum of ${pair.minAmount} for ${name}`,
      additionalFields: limits,
    };
  }
  if (amount.gt(new Decimal(pair.maxAmount))) {
    return {
      status: 400,
      messageKey: 'FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR',
      error: `amount is above the maximum of ${pair.maxAmount} for ${name}`,
      additionalFields: limits,
    };
  }
  return undefined;
}
