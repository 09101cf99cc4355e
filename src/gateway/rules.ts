import { Decimal, isDecimalText } from '../money/decimal.ts';
import { partnerTextProblem } from '../swap/text.ts';
import type { QuoteTerms } from '../events/types.ts';
import type { QuoteResponse } from '../partner/types.ts';

/**
 * The gateway's own rules for a swap request, pure (checked before anything is stored or the partner
 * is called): the quote it names must be usable (this provider, this pair, not expired) and the
 * slippage must be a ratio from 0 to 1 inside the quote's min/max.
 */

/** A refusal at the edge: the HTTP answer and a bounded reason code for the metric and the log. */
export interface Refusal {
  readonly status: number;
  readonly reason: string;
  readonly error: string;
  readonly messageKey?: string;
  readonly additionalFields?: Readonly<Record<string, string>>;
}

/** The gateway's record of a quote (platform.gateway_quotes). */
export interface StoredQuote {
  readonly quoteRef: string;
  readonly providerId: string;
  readonly quoteId: string | null;
  readonly tradeMethod: 'fixed' | 'float';
  readonly from: string;
  readonly to: string;
  /** ISO-8601, or null. */
  readonly expiry: string | null;
  readonly minSlippage: string | null;
  readonly maxSlippage: string | null;
  readonly terms: QuoteTerms;
  /** The partner's QuoteResponse as received. */
  readonly response: QuoteResponse;
}

export interface SwapBody {
  readonly providerId: string;
  readonly tradeMethod: 'fixed' | 'float';
  readonly quoteRef?: string;
  readonly from?: string;
  readonly to?: string;
  readonly amount?: string;
  readonly payoutAddress: string;
  readonly payoutAddressExtraId?: string;
  readonly refundAddress: string;
  readonly refundAddressExtraId?: string;
  readonly nonce: string;
  readonly slippage?: string;
}

const SWAP_TEXT = [
  'providerId',
  'quoteRef',
  'from',
  'to',
  'payoutAddress',
  'payoutAddressExtraId',
  'refundAddress',
  'refundAddressExtraId',
] as const;
const QUOTE_TEXT = ['providerId', 'from', 'to'] as const;

/** The first text field of a body that is not printable, bounded text, as a 400; undefined when all are. */
export function checkBodyText(
  body: Readonly<Record<string, unknown>>,
  fields: readonly string[],
): Refusal | undefined {
  for (const field of fields) {
    const v = body[field];
    if (typeof v !== 'string') continue;
    const problem = partnerTextProblem(v);
    if (problem) return { status: 400, reason: 'invalid_body', error: `${field} ${problem}` };
  }
  return undefined;
}

/** A quote request's amount and text within the input bounds (the JSON schema checks them first). */
export function checkQuoteBody(body: {
  readonly providerId: string;
  readonly from: string;
  readonly to: string;
  readonly amount: string;
}): Refusal | undefined {
  const text = checkBodyText(body, QUOTE_TEXT);
  if (text) return text;
  if (!isDecimalText(body.amount) || !new Decimal(body.amount).gt(0))
    return {
      status: 400,
      reason: 'invalid_body',
      error: 'amount must be a decimal string above zero (at most 40 integer and 36 fraction digits)',
    };
  return undefined;
}

/** What the JSON schema cannot say: which fields each trade method needs. */
export function checkSwapShape(body: SwapBody): Refusal | undefined {
  const bad = (error: string): Refusal => ({ status: 400, reason: 'invalid_body', error });
  const text = checkBodyText(body as unknown as Readonly<Record<string, unknown>>, SWAP_TEXT);
  if (text) return text;
  if (body.tradeMethod === 'fixed') {
    if (!body.quoteRef) return bad('a fixed swap needs quoteRef (from POST /v1/quotes)');
    if (body.amount !== undefined) return bad('a fixed swap takes its amount from the quote: send no amount');
  } else {
    if (!body.from || !body.to) return bad('a float swap needs from and to');
    if (body.amount === undefined) return bad('a float swap needs amount');
  }
  if (body.amount !== undefined && (!isDecimalText(body.amount) || !new Decimal(body.amount).gt(0)))
    return bad('amount must be a decimal string above zero');
  if (body.slippage !== undefined) {
    if (!isDecimalText(body.slippage)) return bad('slippage must be a decimal string (a ratio, 0.1 is 10%)');
    const s = new Decimal(body.slippage);
    if (s.lt(0) || s.gt(1)) return bad('slippage must be a ratio from 0 to 1');
  }
  return undefined;
}

/**
 * The quote a swap names: it must exist for this provider, match the trade method and pair, and a
 * fixed quote must still be valid for at least `minValidityMs`.
 */
export function checkQuoteForSwap(
  body: SwapBody,
  quote: StoredQuote | undefined,
  nowMs: number,
  minValidityMs: number,
): Refusal | undefined {
  if (!body.quoteRef) return undefined;
  if (!quote || quote.providerId !== body.providerId) {
    return {
      status: 404,
      reason: 'quote_not_found',
      messageKey: 'SWAP_QUOTE_NOT_FOUND_ERROR',
      error: `no quote ${body.quoteRef} of provider ${body.providerId}`,
    };
  }
  if (quote.tradeMethod !== body.tradeMethod) {
    return {
      status: 422,
      reason: 'quote_trade_method',
      error: `quote ${quote.quoteRef} is a ${quote.tradeMethod} quote, not ${body.tradeMethod}`,
    };
  }
  if (
    (body.from !== undefined && body.from !== quote.from) ||
    (body.to !== undefined && body.to !== quote.to)
  ) {
    return {
      status: 422,
      reason: 'quote_pair',
      error: `quote ${quote.quoteRef} is for ${quote.from}/${quote.to}`,
    };
  }
  if (quote.tradeMethod === 'fixed') {
    if (!quote.quoteId)
      return { status: 422, reason: 'quote_unusable', error: `quote ${quote.quoteRef} has no quoteId` };
    const expiry = quote.expiry === null ? Number.NaN : Date.parse(quote.expiry);
    if (!Number.isFinite(expiry) || expiry - nowMs < minValidityMs) {
      return {
        status: 422,
        reason: 'quote_expired',
        error: `quote ${quote.quoteRef} expired (expiry ${quote.expiry ?? 'unknown'}); ask for a new quote`,
      };
    }
  }
  return undefined;
}

/** Slippage inside the quote's [minSlippage, maxSlippage] where the quote gives them. */
export function checkSlippage(
  slippage: string | undefined,
  quote: StoredQuote | undefined,
): Refusal | undefined {
  if (slippage === undefined || !quote) return undefined;
  const s = new Decimal(slippage);
  const min = quote.minSlippage !== null && isDecimalText(quote.minSlippage) ? quote.minSlippage : undefined;
  const max = quote.maxSlippage !== null && isDecimalText(quote.maxSlippage) ? quote.maxSlippage : undefined;
  if ((min !== undefined && s.lt(new Decimal(min))) || (max !== undefined && s.gt(new Decimal(max)))) {
    return {
      status: 422,
      reason: 'slippage_out_of_range',
      error: `slippage ${slippage} is outside the quote's range ${min ?? '0'}..${max ?? '1'}`,
      additionalFields: {
        ...(min !== undefined ? { minSlippage: min } : {}),
        ...(max !== undefined ? { maxSlippage: max } : {}),
      },
    };
  }
  return undefined;
}
