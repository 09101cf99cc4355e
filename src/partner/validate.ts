import { isDecimalText, parseDecimal } from '../money/decimal.ts';
import { PartnerResponseError } from './errors.ts';
import type {
  Currency,
  CurrencyListResponse,
  CurrencyNetwork,
  Pair,
  PairListResponse,
  ProviderSig,
  QuoteRequest,
  QuoteResponse,
  SwapResponse,
  SwapStatus,
} from './types.ts';
import { finding, type Finding } from '../payload/findings.ts';
import { Checker, describe, join, kindOf, type Obj, type ValidationContext } from './checker.ts';

/**
 * Hand-rolled validators of the partner's 2xx bodies. Each returns a shallow copy of the body (unknown
 * extra fields kept, optional nulls dropped) or throws a PartnerResponseError naming the field path.
 */

const INT32_MAX = 2 ** 31 - 1;
/** The signed payload is longer than ids; still bounded. */
const MAX_SIG_TEXT = 16_384;

export function validateCurrency(v: unknown, path: string, ctx: ValidationContext): Currency {
  const c = new Checker(ctx);
  const o = c.object(v, path);
  const out: Obj = { ...o };
  out.id = c.string(o, 'id', path);
  if (o.type !== 'coin' && o.type !== 'token')
    c.fail(join(path, 'type'), `expected "coin" or "token", got ${describe(o.type)}`);
  setOptional(out, 'chainId', undefined);
  if (o.chainId !== undefined && o.chainId !== null) {
    if (
      typeof o.chainId !== 'number' ||
      !Number.isInteger(o.chainId) ||
      o.chainId < 1 ||
      o.chainId > INT32_MAX
    ) {
      c.fail(join(path, 'chainId'), `expected a positive int32 EVM chain id, got ${describe(o.chainId)}`);
    }
    out.chainId = o.chainId;
  }
  // When chainId is defined, blockchain is ignored: only its type is checked then.
  const blockchain = c.optionalString(o, 'blockchain', path);
  setOptional(out, 'blockchain', blockchain);
  if (out.chainId === undefined && (blockchain === undefined || blockchain.trim() === '')) {
    c.fail(join(path, 'blockchain'), 'blockchain or chainId must be defined');
  }
  const contract = c.optionalString(o, 'contract', path);
  if (contract !== undefined && o.type !== 'token') {
    c.fail(join(path, 'contract'), `present only for tokens, but type is "${String(o.type)}"`);
  }
  if (contract !== undefined && contract.trim() === '') c.fail(join(path, 'contract'), 'must not be empty');
  setOptional(out, 'contract', contract);
  return out as unknown as Currency;
}

/** The interface's rule: chainId wins; blockchain otherwise. */
export function currencyNetwork(currency: Currency): CurrencyNetwork {
  if (currency.chainId !== undefined) return { kind: 'evm', chainId: currency.chainId };
  return { kind: 'named', blockchain: currency.blockchain ?? '' };
}

export function validateCurrencyListResponse(body: unknown, ctx: ValidationContext): CurrencyListResponse {
  const c = new Checker(ctx);
  const o = c.object(body, '');
  const list = c.array(o.currencies, 'currencies');
  return {
    ...o,
    currencies: list.map((item, i) => validateCurrency(item, `currencies[${i}]`, ctx)),
    next_cursor: c.cursor(o, ''),
  };
}

export function validatePair(v: unknown, path: string, ctx: ValidationContext): Pair {
  const c = new Checker(ctx);
  const o = c.object(v, path);
  const methods = c.array(o.tradeMethod, join(path, 'tradeMethod'));
  if (methods.length === 0) c.fail(join(path, 'tradeMethod'), 'must list at least one trade method');
  const min = c.decimal(o, 'minSwapAmount', path);
  const max = c.decimal(o, 'maxSwapAmount', path);
  if (parseDecimal(min).gt(parseDecimal(max))) {
    c.fail(join(path, 'maxSwapAmount'), `"${max}" is below minSwapAmount "${min}"`);
  }
  return {
    ...o,
    from: c.string(o, 'from', path),
    to: c.string(o, 'to', path),
    tradeMethod: methods.map((m, i) => c.tradeMethod(m, `${join(path, 'tradeMethod')}[${i}]`)),
    minSwapAmount: min,
    maxSwapAmount: max,
  };
}

export function validatePairListResponse(body: unknown, ctx: ValidationContext): PairListResponse {
  const c = new Checker(ctx);
  const o = c.object(body, '');
  const list = c.array(o.pairs, 'pairs');
  return {
    ...o,
    pairs: list.map((item, i) => validatePair(item, `pairs[${i}]`, ctx)),
    next_cursor: c.cursor(o, ''),
  };
}

/** The decimals of a quote's two currencies, where known (undefined: the precision is not checked). */
export interface QuoteDecimals {
  readonly from?: number | undefined;
  readonly to?: number | undefined;
}

/**
 * With `request`, the echoed amount and the trade method asked for are checked too. With `decimals`, a figure
 * with more decimal places than its currency has is refused: it is no whole number of atomic units, so no
 * check could compare it without rounding, and no swap may be made from it.
 */
export function validateQuoteResponse(
  body: unknown,
  ctx: ValidationContext,
  request?: QuoteRequest,
  decimals: QuoteDecimals = {},
): QuoteResponse {
  const c = new Checker(ctx);
  const o = c.object(body, '');
  const out: Obj = { ...o };
  const tradeMethod = c.tradeMethod(o.tradeMethod, 'tradeMethod');
  out.tradeMethod = tradeMethod;
  for (const k of ['amountTo', 'providerFees', 'referralFees', 'payoutNetworkFees'])
    out[k] = c.decimal(o, k, '');
  setOptional(out, 'amount', c.optionalDecimal(o, 'amount', ''));
  for (const k of ['defaultSlippage', 'minSlippage', 'maxSlippage']) setOptional(out, k, c.ratio(o, k, ''));
  if (tradeMethod === 'fixed') {
    out.quoteId = c.string(o, 'quoteId', '');
    out.expiry = c.timestamp(o, 'expiry', '');
  } else {
    setOptional(out, 'quoteId', c.optionalString(o, 'quoteId', ''));
    setOptional(
      out,
      'expiry',
      o.expiry === undefined || o.expiry === null ? undefined : c.timestamp(o, 'expiry', ''),
    );
  }
  if (request) {
    if (request.tradeMethod !== undefined && request.tradeMethod !== tradeMethod) {
      c.fail('tradeMethod', `asked for "${request.tradeMethod}", got "${tradeMethod}"`);
    }
    const echo = out.amount as string | undefined;
    if (
      echo !== undefined &&
      isDecimalText(request.amount) &&
      !parseDecimal(echo).eq(parseDecimal(request.amount))
    ) {
      c.fail('amount', `echo "${echo}" differs from the requested amount "${request.amount}"`);
    }
  }
  const precise = (key: string, places: number | undefined, currency: string) => {
    const v = out[key];
    if (places === undefined || typeof v !== 'string') return;
    const found = parseDecimal(v).decimalPlaces();
    if (found > places)
      c.fail(
        key,
        `"${v}" has ${found} decimal places, more than ${currency}'s ${places}: refused, never rounded`,
      );
  };
  for (const k of ['amountTo', 'providerFees', 'referralFees', 'payoutNetworkFees'])
    precise(k, decimals.to, request?.to ?? 'the target currency');
  precise('amount', decimals.from, request?.from ?? 'the source currency');
  return out as unknown as QuoteResponse;
}

export function validateSwapResponse(body: unknown, ctx: ValidationContext): SwapResponse {
  const c = new Checker(ctx);
  const o = c.object(body, '');
  const sig = c.object(o.providerSig, 'providerSig');
  const providerSig: Obj = { ...sig, payload: c.string(sig, 'payload', 'providerSig', MAX_SIG_TEXT) };
  const signature = c.optionalString(sig, 'signature', 'providerSig', MAX_SIG_TEXT);
  const payloadSignature = c.optionalString(sig, 'payload_signature', 'providerSig', MAX_SIG_TEXT);
  setOptional(providerSig, 'signature', signature);
  setOptional(providerSig, 'payload_signature', payloadSignature);
  if (!signature && !payloadSignature)
    c.fail('providerSig.signature', 'missing (neither signature nor payload_signature)');
  return {
    ...o,
    swapId: c.string(o, 'swapId', ''),
    payinAddress: c.string(o, 'payinAddress', ''),
    // The swap exists at the partner whatever its createdAt says: a text that is not a time Postgres can
    // store is kept as sent, and the gateway records the swap with a `response.created_at` finding.
    createdAt: c.string(o, 'createdAt', ''),
    // The swap exists at the partner whatever its fee format: a fee that is not decimal text is unknown
    // (a JSON number has already lost precision, so it is never used as a value); see swapResponseFeeFindings.
    providerFees: c.feeOrUnknown(o, 'providerFees', ''),
    referralFees: c.feeOrUnknown(o, 'referralFees', ''),
    payoutNetworkFees: c.feeOrUnknown(o, 'payoutNetworkFees', ''),
    providerSig: providerSig as unknown as ProviderSig,
  };
}

export const SWAP_RESPONSE_FEES = ['providerFees', 'referralFees', 'payoutNetworkFees'] as const;

/**
 * One `response.fee_format` finding per fee of a swap creation answer that was not decimal text (a number,
 * null or absent): the swap is recorded as created with that fee unknown, and the finding says why.
 */
export function swapResponseFeeFindings(body: unknown): Finding[] {
  if (typeof body !== 'object' || body === null) return [];
  const o = body as Obj;
  return SWAP_RESPONSE_FEES.filter(
    (k) => o[k] === undefined || o[k] === null || typeof o[k] === 'number',
  ).map((k) =>
    finding('response.fee_format', 'unverifiable', {
      expected: 'decimal string',
      actual: typeof o[k] === 'number' ? `number ${String(o[k])}` : kindOf(o[k]),
      detail: `${k} is not decimal text: the fee is unknown (SwapCreated carries 0 for it until its fees may be null)`,
    }),
  );
}

/** `signature` is preferred; `payload_signature` is the sample response's name for it. */
export function providerSignatureOf(sig: ProviderSig): {
  value: string;
  field: 'signature' | 'payload_signature';
} {
  if (sig.signature) return { value: sig.signature, field: 'signature' };
  return { value: sig.payload_signature ?? '', field: 'payload_signature' };
}

export function validateStatusResponse(body: unknown, ctx: ValidationContext): SwapStatus {
  const c = new Checker(ctx);
  const o = c.object(body, '');
  const status = o.status;
  if (typeof status !== 'string') return c.fail('status', `expected a string, got ${kindOf(status)}`);
  const out: Obj = { ...o, status: c.text(status, 'status') };
  setOptional(out, 'quoteId', c.optionalString(o, 'quoteId', ''));
  // Filled "as soon as known": empty, null or absent before the swap is final.
  out.amount = blankToUndefined(o.amount) === undefined ? undefined : c.decimalValue(o.amount, 'amount');
  for (const k of ['payinTransactionId', 'payoutTransactionId']) {
    const v = c.optionalString(o, k, '');
    out[k] = v === undefined || v.trim() === '' ? undefined : v;
  }
  // Fees are filled "as soon as known" too: null, absent or empty is unknown, not a failed poll.
  for (const k of ['providerFees', 'referralFees', 'payoutNetworkFees'])
    out[k] = blankToUndefined(o[k]) === undefined ? null : c.decimalValue(o[k], k);
  return out as unknown as SwapStatus;
}

function setOptional(o: Obj, key: string, v: unknown): void {
  if (v === undefined) delete o[key];
  else o[key] = v;
}

function blankToUndefined(v: unknown): unknown {
  return v === null || v === undefined || (typeof v === 'string' && v.trim() === '') ? undefined : v;
}
