import { isDecimalText, parseDecimal, type Decimal } from '../money/decimal.ts';
import { parseRetryAfter, type Retryability } from './retry.ts';
import { RATE_LIMITED_STATUS, type DocumentedMessageKey, type PartnerOperation } from './types.ts';

/**
 * Every failure of a partner call is a PartnerError naming the provider and the operation. Callers branch
 * on the class (or on `kind` for API errors); the message is for logs.
 */
export abstract class PartnerError extends Error {
  constructor(
    readonly provider: string,
    readonly operation: PartnerOperation,
    /** undefined when no HTTP answer arrived. */
    readonly httpStatus: number | undefined,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`partner ${provider} ${operation}: ${message}`, options);
    this.name = new.target.name;
  }
}

export type PartnerApiErrorKind =
  | 'amount-below-minimum'
  | 'amount-above-maximum'
  | 'pair-not-found'
  | 'region-restricted'
  | 'currency-region-restricted'
  | 'no-deposit-wallet'
  | 'currency-from-not-found'
  | 'currency-to-not-found'
  | 'quote-not-found'
  | 'undocumented';

const KIND_OF_KEY: Readonly<Record<DocumentedMessageKey, PartnerApiErrorKind>> = {
  FROM_CURRENCY_MINIMUM_AMOUNT_ERROR: 'amount-below-minimum',
  FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR: 'amount-above-maximum',
  SWAP_PAIR_NOT_FOUND_ERROR: 'pair-not-found',
  REGION_RESTRICTED_ERROR: 'region-restricted',
  CURRENCY_REGION_RESTRICTED_ERROR: 'currency-region-restricted',
  NO_DEPOSIT_WALLET_ERROR: 'no-deposit-wallet',
  CURRENCY_FROM_NOT_FOUND_ERROR: 'currency-from-not-found',
  CURRENCY_TO_NOT_FOUND_ERROR: 'currency-to-not-found',
  SWAP_QUOTE_NOT_FOUND_ERROR: 'quote-not-found',
};

/** An ErrorPayload answer. A key the interface does not document keeps kind 'undocumented' and its key. */
export class PartnerApiError extends PartnerError {
  readonly kind: PartnerApiErrorKind;
  constructor(
    provider: string,
    operation: PartnerOperation,
    httpStatus: number,
    readonly messageKey: string,
    /** The partner's own description. */
    readonly partnerMessage: string,
    readonly additionalFields: Readonly<Record<string, unknown>>,
  ) {
    super(
      provider,
      operation,
      httpStatus,
      `HTTP ${httpStatus} ${messageKey}${partnerMessage ? `: ${partnerMessage}` : ''}`,
    );
    this.kind = (KIND_OF_KEY as Record<string, PartnerApiErrorKind>)[messageKey] ?? 'undocumented';
  }
}

/** FROM_CURRENCY_MINIMUM_AMOUNT_ERROR / FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR. */
export class AmountLimitError extends PartnerApiError {
  readonly limit: 'minimum' | 'maximum';
  /** From additionalFields; undefined when absent or not a decimal string. */
  readonly minRequiredAmount: Decimal | undefined;
  readonly maxRequiredAmount: Decimal | undefined;
  constructor(...args: ConstructorParameters<typeof PartnerApiError>) {
    super(...args);
    this.limit = this.messageKey === 'FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR' ? 'maximum' : 'minimum';
    this.minRequiredAmount = decimalOrUndefined(this.additionalFields.minRequiredAmount);
    this.maxRequiredAmount = decimalOrUndefined(this.additionalFields.maxRequiredAmount);
  }
}

/** SWAP_PAIR_NOT_FOUND_ERROR: the pair is unavailable or a currency is not recognized. */
export class PairNotFoundError extends PartnerApiError {}

/** REGION_RESTRICTED_ERROR (the user's IP) or CURRENCY_REGION_RESTRICTED_ERROR (a swapped currency). */
export class RegionRestrictedError extends PartnerApiError {
  readonly restriction: 'ip' | 'currency';
  constructor(...args: ConstructorParameters<typeof PartnerApiError>) {
    super(...args);
    this.restriction = this.messageKey === 'CURRENCY_REGION_RESTRICTED_ERROR' ? 'currency' : 'ip';
  }
}

/** NO_DEPOSIT_WALLET_ERROR. */
export class NoDepositWalletError extends PartnerApiError {}

/** CURRENCY_FROM_NOT_FOUND_ERROR / CURRENCY_TO_NOT_FOUND_ERROR. */
export class CurrencyNotFoundError extends PartnerApiError {
  readonly side: 'from' | 'to';
  constructor(...args: ConstructorParameters<typeof PartnerApiError>) {
    super(...args);
    this.side = this.messageKey === 'CURRENCY_TO_NOT_FOUND_ERROR' ? 'to' : 'from';
  }
}

/** SWAP_QUOTE_NOT_FOUND_ERROR. */
export class QuoteNotFoundError extends PartnerApiError {}

/** 404 on GET /status, whether the body is `{message}` or an ErrorPayload. */
export class SwapNotFoundError extends PartnerError {
  constructor(
    provider: string,
    readonly swapId: string,
    readonly partnerMessage: string,
    readonly messageKey: string | undefined,
  ) {
    super(provider, 'status', 404, `swap ${swapId} not found${partnerMessage ? `: ${partnerMessage}` : ''}`);
  }
}

/** 420: the interface's rate-limit answer. Header values are undefined when absent or unreadable. */
export class RateLimitedError extends PartnerError {
  constructor(
    provider: string,
    operation: PartnerOperation,
    /** From Retry-After (seconds or HTTP date). */
    readonly retryAfterMs: number | undefined,
    /** X-RateLimit-Limit. */
    readonly limit: number | undefined,
    /** X-RateLimit-Remaining. */
    readonly remaining: number | undefined,
    /** X-RateLimit-Reset as sent (the interface does not say whether epoch or delta seconds). */
    readonly reset: number | undefined,
    readonly body: string,
  ) {
    super(
      provider,
      operation,
      RATE_LIMITED_STATUS,
      `HTTP 420 rate limited${retryAfterMs !== undefined ? `, retry after ${retryAfterMs} ms` : ''}`,
    );
  }
}

/** Any other non-2xx answer. `serverError` is set when the body was a ServerError `{code, message}`. */
export class PartnerHttpError extends PartnerError {
  constructor(
    provider: string,
    operation: PartnerOperation,
    readonly status: number,
    /** Truncated. */
    readonly body: string,
    readonly serverError: { readonly code: number; readonly message: string } | undefined,
  ) {
    super(
      provider,
      operation,
      status,
      `HTTP ${status}${serverError ? ` (code ${serverError.code}: ${serverError.message})` : body ? `: ${body}` : ''}`,
    );
  }
}

/** No HTTP answer: connection failure or timeout. */
export class PartnerNetworkError extends PartnerError {
  constructor(
    provider: string,
    operation: PartnerOperation,
    readonly timedOut: boolean,
    /**
     * The request may have reached the partner (anything but a refused or unresolved connection). For a
     * swap this means a swap may exist that the platform has no id for.
     */
    readonly outcomeUnknown: boolean,
    cause: unknown,
  ) {
    super(
      provider,
      operation,
      undefined,
      `${timedOut ? 'timed out' : 'network error'}: ${causeMessage(cause)}`,
      { cause },
    );
  }
}

/**
 * A 2xx answer that breaks the interface; `field` is the path of the offending field ('' for the body).
 * `received` keeps the parsed body: after a swap call the swap may exist, and its id is in there.
 */
export class PartnerResponseError extends PartnerError {
  received: unknown;
  constructor(
    provider: string,
    operation: PartnerOperation,
    readonly field: string,
    readonly reason: string,
    httpStatus = 200,
  ) {
    super(provider, operation, httpStatus, `malformed response${field ? ` at ${field}` : ''}: ${reason}`);
  }
}

/** A list whose next_cursor repeats an earlier one: stopped instead of looping forever. */
export class PartnerCursorLoopError extends PartnerResponseError {
  constructor(
    provider: string,
    operation: PartnerOperation,
    readonly cursor: string,
    readonly page: number,
  ) {
    super(provider, operation, 'next_cursor', `cursor "${truncate(cursor, 80)}" repeats (page ${page})`);
  }
}

/** A request refused before sending (it would break the interface). */
export class PartnerRequestError extends PartnerError {
  constructor(
    provider: string,
    operation: PartnerOperation,
    readonly field: string,
    readonly reason: string,
  ) {
    super(provider, operation, undefined, `invalid request at ${field}: ${reason}`);
  }
}

export interface ErrorResponse {
  readonly provider: string;
  readonly operation: PartnerOperation;
  readonly status: number;
  readonly headers: Headers;
  readonly bodyText: string;
  /** For GET /status. */
  readonly swapId?: string;
  readonly maxBodyChars?: number;
  readonly now?: () => number;
}

/** Maps a non-2xx answer to its typed error. Pure, so every branch is unit-testable. */
export function partnerErrorFromResponse(r: ErrorResponse): PartnerError {
  const max = r.maxBodyChars ?? 500;
  const body = parseJsonObject(r.bodyText);
  if (r.status === RATE_LIMITED_STATUS) {
    const h = r.headers;
    return new RateLimitedError(
      r.provider,
      r.operation,
      parseRetryAfter(h.get('retry-after'), r.now?.() ?? Date.now()),
      intHeader(h.get('x-ratelimit-limit')),
      intHeader(h.get('x-ratelimit-remaining')),
      intHeader(h.get('x-ratelimit-reset')),
      truncate(r.bodyText, max),
    );
  }
  const messageKey =
    typeof body?.messageKey === 'string' && body.messageKey !== '' ? body.messageKey : undefined;
  const message = typeof body?.message === 'string' ? body.message : '';
  // Only the interface's own 404 (a JSON body with `message`) says the swap is unknown; any other 404 body
  // (a proxy's HTML page) says nothing about the swap: a transport failure, retried (partnerRetryability).
  if (r.operation === 'status' && r.status === 404 && typeof body?.message === 'string') {
    return new SwapNotFoundError(
      r.provider,
      r.swapId ?? '',
      message || truncate(r.bodyText, max),
      messageKey,
    );
  }
  if (body && messageKey !== undefined) {
    const fields = body.additionalFields;
    const additional =
      typeof fields === 'object' && fields !== null && !Array.isArray(fields)
        ? (fields as Record<string, unknown>)
        : {};
    const args = [r.provider, r.operation, r.status, messageKey, message, additional] as const;
    switch ((KIND_OF_KEY as Record<string, PartnerApiErrorKind>)[messageKey]) {
      case 'amount-below-minimum':
      case 'amount-above-maximum':
        return new AmountLimitError(...args);
      case 'pair-not-found':
        return new PairNotFoundError(...args);
      case 'region-restricted':
      case 'currency-region-restricted':
        return new RegionRestrictedError(...args);
      case 'no-deposit-wallet':
        return new NoDepositWalletError(...args);
      case 'currency-from-not-found':
      case 'currency-to-not-found':
        return new CurrencyNotFoundError(...args);
      case 'quote-not-found':
        return new QuoteNotFoundError(...args);
      default:
        return new PartnerApiError(...args);
    }
  }
  const serverError =
    body && Number.isInteger(body.code) && typeof body.message === 'string'
      ? { code: body.code as number, message: body.message }
      : undefined;
  return new PartnerHttpError(r.provider, r.operation, r.status, truncate(r.bodyText, max), serverError);
}

/**
 * Which failures of a read are worth another attempt: no answer, 5xx, and 420 (after its Retry-After).
 * Everything else (4xx, a malformed 2xx) would fail the same way again.
 */
export function partnerRetryability(error: unknown): Retryability {
  if (error instanceof RateLimitedError) {
    return error.retryAfterMs === undefined
      ? { retryable: true }
      : { retryable: true, retryAfterMs: error.retryAfterMs };
  }
  if (error instanceof PartnerNetworkError) return { retryable: true };
  if (error instanceof PartnerHttpError && error.operation === 'status' && error.httpStatus === 404)
    return { retryable: true };
  if (
    error instanceof PartnerError &&
    !(error instanceof PartnerResponseError) &&
    (error.httpStatus ?? 0) >= 500
  ) {
    return { retryable: true };
  }
  return { retryable: false };
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function intHeader(v: string | null): number | undefined {
  if (v === null || !/^\s*\d{1,15}\s*$/.test(v)) return undefined;
  return Number.parseInt(v, 10);
}

function decimalOrUndefined(v: unknown): Decimal | undefined {
  return isDecimalText(v) ? parseDecimal(v) : undefined;
}

export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function causeMessage(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = (cause as { cause?: unknown }).cause;
  return inner instanceof Error ? `${cause.message} (${inner.message})` : cause.message;
}
