import { AtomicAmountError, toAtomicUnits } from '../money/atomic.ts';
import { currencyDecimals, type DecimalsLookup } from '../money/currencies.ts';
import type { DecodedSwapPayload } from './decode.ts';
import { normaliseHex, toHex } from './encoding.ts';
import { finding, type Finding } from './findings.ts';

export type TradeMethod = 'fixed' | 'float';

/** What is read from SwapRequestFixed / SwapRequestFloat (partner interface v2). */
export interface SwapRequestFields {
  readonly payloadCurrencyFrom: string;
  readonly payloadCurrencyTo: string;
  /** Hex of the 32-byte nonce; signed as device_transaction_id_ng. */
  readonly nonce: string;
  readonly payoutAddress: string;
  readonly payoutAddressExtraId?: string | null | undefined;
  readonly refundAddress: string;
  readonly refundAddressExtraId?: string | null | undefined;
  /** Float swaps only: the source amount, decimal text. */
  readonly amount?: string | null | undefined;
}

/** What is read from SwapResponse. */
export interface SwapResponseFields {
  readonly payinAddress: string;
}

/** What is read from QuoteResponse: the optional echo of the input amount. */
export interface QuoteFields {
  readonly amount?: string | null | undefined;
}

export interface SwapContext {
  readonly request: SwapRequestFields;
  readonly response: SwapResponseFields;
  /** The quote of a fixed swap; its `amount` echo is the only source of the fixed amount. */
  readonly quote?: QuoteFields | undefined;
  readonly tradeMethod: TradeMethod;
}

function equal(check: string, expected: string, actual: string): Finding {
  if (expected === actual) return finding(check, 'ok', { expected, actual });
  const detail = expected.toLowerCase() === actual.toLowerCase() ? 'differs only in letter case' : undefined;
  return finding(check, 'mismatch', { expected, actual, detail });
}

function nonceFinding(nonce: string, signed: Uint8Array): Finding {
  const actual = toHex(signed);
  const expected = typeof nonce === 'string' ? normaliseHex(nonce) : undefined;
  if (expected === undefined)
    return finding('payload.device_transaction_id_ng', 'mismatch', {
      expected: String(nonce),
      actual,
      detail: 'the request nonce is not hex',
    });
  return finding('payload.device_transaction_id_ng', expected === actual ? 'ok' : 'mismatch', {
    expected,
    actual,
  });
}

function amountFinding(
  decoded: DecodedSwapPayload,
  context: SwapContext,
  magnitudes: DecimalsLookup,
): Finding {
  const check = 'payload.amount_to_provider';
  const actual = decoded.amount_to_provider.toString();
  const unverifiable = (detail: string) => finding(check, 'unverifiable', { actual, detail });
  let amount: string | null | undefined;
  let source: string;
  if (context.tradeMethod === 'float') {
    amount = context.request.amount;
    source = 'request amount';
    if (amount == null || amount === '') return unverifiable('the float request carries no amount');
  } else if (context.tradeMethod === 'fixed') {
    amount = context.quote?.amount;
    source = 'quote amount';
    if (!context.quote) return unverifiable('no quote given for the fixed swap');
    if (amount == null || amount === '') return unverifiable('the fixed quote carries no amount echo');
  } else {
    return unverifiable(`unknown trade method ${JSON.stringify(context.tradeMethod)}`);
  }
  const currency = context.request.payloadCurrencyFrom;
  const decimals = magnitudes(currency);
  if (decimals === undefined)
    return unverifiable(`no decimals known for platform currency ${JSON.stringify(currency)}`);
  let expected: bigint;
  try {
    expected = toAtomicUnits(amount, decimals);
  } catch (e) {
    if (e instanceof AtomicAmountError) return unverifiable(`${source}: ${e.message}`);
    throw e;
  }
  return finding(check, expected === decoded.amount_to_provider ? 'ok' : 'mismatch', {
    expected: expected.toString(),
    actual,
    detail: `${source} ${amount} ${currency} at ${decimals} decimals, in atomic units`,
  });
}

/**
 * Compares the decoded payload with what the platform asked for and was answered, one finding per
 * field, 'ok' ones included. Absent extra ids compare as '' (the proto3 default). Amounts compare in
 * atomic units of payloadCurrencyFrom: the float request's amount, or the fixed quote's `amount`
 * echo ('unverifiable' when the quote has none). `magnitudes` defaults to the platform currency table.
 */
export function checkPayloadAgainstSwap(
  decoded: DecodedSwapPayload,
  context: SwapContext,
  magnitudes: DecimalsLookup = currencyDecimals,
): Finding[] {
  const { request, response } = context;
  return [
    equal('payload.currency_from', request.payloadCurrencyFrom, decoded.currency_from),
    equal('payload.currency_to', request.payloadCurrencyTo, decoded.currency_to),
    nonceFinding(request.nonce, decoded.device_transaction_id_ng),
    equal('payload.payout_address', request.payoutAddress, decoded.payout_address),
    equal('payload.payout_extra_id', request.payoutAddressExtraId ?? '', decoded.payout_extra_id),
    equal('payload.refund_address', request.refundAddress, decoded.refund_address),
    equal('payload.refund_extra_id', request.refundAddressExtraId ?? '', decoded.refund_extra_id),
    equal('payload.payin_address', response.payinAddress, decoded.payin_address),
    amountFinding(decoded, context, magnitudes),
  ];
}
