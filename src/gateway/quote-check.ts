import type { Finding, QuoteTerms } from '../events/types.ts';
import { AtomicAmountError, toAtomicUnits } from '../money/atomic.ts';
import { currencyDecimals, type DecimalsLookup } from '../money/currencies.ts';
import { Decimal, isDecimalText } from '../money/decimal.ts';

/**
 * A fixed swap's signed output against its quote (issue 14): the signed `amount_to_wallet` includes the
 * payout network fee, so it should equal the quote's `amountTo + payoutNetworkFees` in atomic units of
 * payloadCurrencyTo. A difference is a finding for the reconciler and finance (`quote.amount_to`), not a
 * refusal: the quote is the partner's estimate of the moment, the signed figure is its commitment.
 */
export const QUOTE_AMOUNT_TO = 'quote.amount_to';

export function quoteAmountToFinding(
  signedAmountToWallet: string | null,
  quote: Pick<QuoteTerms, 'amountTo' | 'payoutNetworkFees'>,
  payloadCurrencyTo: string,
  magnitudes: DecimalsLookup = currencyDecimals,
): Finding {
  const f = (outcome: string, expected: string | null, detail: string): Finding => ({
    check: QUOTE_AMOUNT_TO,
    outcome,
    expected,
    actual: signedAmountToWallet,
    detail,
  });
  if (signedAmountToWallet === null) return f('unverifiable', null, 'no decoded payload');
  if (!isDecimalText(quote.amountTo) || !isDecimalText(quote.payoutNetworkFees))
    return f('unverifiable', null, 'the quote has no decimal amountTo or payoutNetworkFees');
  const decimals = magnitudes(payloadCurrencyTo);
  if (decimals === undefined)
    return f('unverifiable', null, `no decimals known for platform currency ${payloadCurrencyTo}`);
  const sum = new Decimal(quote.amountTo).plus(new Decimal(quote.payoutNetworkFees));
  let expected: bigint;
  try {
    expected = toAtomicUnits(sum, decimals);
  } catch (e) {
    if (e instanceof AtomicAmountError)
      return f('unverifiable', null, `quote amountTo + payoutNetworkFees: ${e.message}`);
    throw e;
  }
  const detail = `quote amountTo ${quote.amountTo} + payoutNetworkFees ${quote.payoutNetworkFees} ${payloadCurrencyTo} at ${decimals} decimals, in atomic units`;
  return f(expected === BigInt(signedAmountToWallet) ? 'ok' : 'mismatch', expected.toString(), detail);
}

/** Findings on the quote's figures inform the reconciler; they never withhold a swap. */
export function isQuoteFinding(f: Pick<Finding, 'check'>): boolean {
  return f.check.startsWith('quote.');
}
