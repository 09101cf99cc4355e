import type { CreationFailureKind, QuoteTerms, SwapCreated } from '../events/types.ts';
import {
  PartnerApiError,
  PartnerError,
  PartnerHttpError,
  PartnerNetworkError,
  PartnerRequestError,
  PartnerResponseError,
  RateLimitedError,
} from '../partner/errors.ts';
import { visibleStrings } from './events.ts';
import type { IdempotencyDecision } from './idempotency.ts';
import type { Refusal } from './rules.ts';
import { isQuoteFinding } from './quote-check.ts';

/**
 * The gateway's HTTP answers that follow from recorded facts, pure: the answer to a created swap is a
 * function of its SwapCreated alone, so the gateway, a replayed Idempotency-Key and an operator's
 * `requests resolve` all give the wallet the same answer for the same swap.
 */

/** An HTTP answer of the gateway, with what the log line and the metrics need. */
export interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers?: Readonly<Record<string, string>>;
  /** Bounded code of a refusal (metric label); undefined on success. */
  readonly reason?: string;
}

/** Findings that stop a swap from being handed to the wallet: the signature or content does not match. */
export function blockingEventFindings(created: SwapCreated): SwapCreated['findings'] {
  return created.findings.filter(
    (f) => (f.outcome === 'mismatch' || f.outcome === 'violation') && !isQuoteFinding(f),
  );
}

function payinExtraId(created: SwapCreated): string | null {
  if (!created.decodedPayloadJson) return null;
  try {
    const decoded = JSON.parse(created.decodedPayloadJson) as { payin_extra_id?: unknown };
    return typeof decoded.payin_extra_id === 'string' && decoded.payin_extra_id !== ''
      ? decoded.payin_extra_id
      : null;
  } catch {
    return null;
  }
}

/**
 * 201 with the swap the wallet may hand out, or 502 when its signed payload does not verify or match
 * (the swap exists and is recorded, but is withheld). A fee the partner did not send as decimal text is
 * null (its `response.fee_format` finding says so).
 */
export function createdSwapAnswer(providerId: string, swapId: string, created: SwapCreated): Answer {
  const problems = blockingEventFindings(created);
  if (!created.signatureValid || problems.length > 0) {
    return {
      status: 502,
      reason: 'payload_mismatch',
      body: {
        error: created.signatureValid
          ? "the partner's signed payload does not match the request; the swap is not handed out"
          : "the partner's payload signature does not verify; the swap is not handed out",
        requestId: created.requestId,
        swapId,
        signatureValid: created.signatureValid,
        findings: problems.length > 0 ? problems : created.findings.filter((f) => f.outcome !== 'ok'),
      },
    };
  }
  const unknownFees = new Set(
    created.findings
      .filter((f) => f.check === 'response.fee_format')
      .map((f) => /^(\w+) /.exec(f.detail ?? '')?.[1]),
  );
  const fee = (name: 'providerFees' | 'referralFees' | 'payoutNetworkFees') =>
    unknownFees.has(name) ? null : created[name];
  const { request, quote } = created;
  return {
    status: 201,
    body: {
      requestId: created.requestId,
      swapId,
      providerId,
      tradeMethod: request.tradeMethod,
      quoteRef: request.quoteRef,
      quoteId: request.quoteId,
      from: request.currencyFrom,
      to: request.currencyTo,
      payloadCurrencyFrom: request.payloadCurrencyFrom,
      payloadCurrencyTo: request.payloadCurrencyTo,
      amountFrom: request.amountFrom ?? quote?.amountFrom ?? null,
      quotedAmountTo: quote?.amountTo ?? null,
      payinAddress: created.payinAddress,
      payinExtraId: payinExtraId(created),
      createdAt: created.createdAt,
      providerFees: fee('providerFees'),
      referralFees: fee('referralFees'),
      payoutNetworkFees: fee('payoutNetworkFees'),
      providerSig: { payload: created.providerSigPayload, signature: created.providerSigSignature },
      signatureValid: created.signatureValid,
      keyId: created.keyId,
    },
  };
}

/** 409 for a request whose outcome nobody knows (a crash between the partner call and the record). */
export function outcomeUnknownAnswer(requestId: string, detail: string): Answer {
  return {
    status: 409,
    reason: 'idempotency_outcome_unknown',
    body: {
      error: `the outcome of this request is unknown: ${detail}; do not retry with a new key before an operator settles it (swap-ledger requests resolve ${requestId})`,
      requestId,
      outcome: 'unknown',
    },
  };
}

export function refusal(r: Refusal): Answer {
  return {
    status: r.status,
    reason: r.reason,
    body: {
      error: r.error,
      ...(r.messageKey ? { messageKey: r.messageKey } : {}),
      ...(r.additionalFields && Object.keys(r.additionalFields).length > 0
        ? { additionalFields: r.additionalFields }
        : {}),
    },
  };
}

/** How a partner failure is recorded and answered. */
export interface PartnerFailure {
  readonly answer: Answer;
  readonly kind: CreationFailureKind;
  readonly httpStatus: number | null;
  readonly errorKey: string | null;
  readonly message: string;
  readonly additionalFields?: Readonly<Record<string, unknown>>;
}

/**
 * The gateway's answer to a partner failure: the partner's own key for documented refusals. Partner text
 * in it is made visible (visibleStrings): the answer is stored with the Idempotency-Key (jsonb).
 */
export function partnerFailure(e: PartnerError): PartnerFailure {
  return visibleStrings(rawPartnerFailure(e));
}

function rawPartnerFailure(e: PartnerError): PartnerFailure {
  const base = { httpStatus: e.httpStatus ?? null, message: e.message };
  if (e instanceof PartnerApiError) {
    const status =
      e.httpStatus !== undefined && e.httpStatus >= 400 && e.httpStatus < 500 ? e.httpStatus : 502;
    return {
      ...base,
      kind: 'partner_error',
      errorKey: e.messageKey,
      additionalFields: e.additionalFields,
      answer: {
        status,
        reason: `partner:${e.kind}`,
        body: {
          error: e.partnerMessage || `the partner refused: ${e.messageKey}`,
          messageKey: e.messageKey,
          ...(Object.keys(e.additionalFields).length > 0 ? { additionalFields: e.additionalFields } : {}),
        },
      },
    };
  }
  if (e instanceof RateLimitedError) {
    const seconds = Math.max(1, Math.ceil((e.retryAfterMs ?? 1000) / 1000));
    return {
      ...base,
      kind: 'partner_error',
      errorKey: null,
      answer: {
        status: 503,
        reason: 'partner:rate_limited',
        headers: { 'retry-after': String(seconds) },
        body: { error: 'the partner is rate limiting this platform; retry later' },
      },
    };
  }
  if (e instanceof PartnerNetworkError) {
    return {
      ...base,
      kind: e.outcomeUnknown ? 'outcome_unknown' : 'partner_error',
      errorKey: null,
      answer: e.outcomeUnknown
        ? {
            status: 504,
            reason: 'partner:outcome_unknown',
            body: { error: 'the partner did not answer in time; whether it acted on the request is unknown' },
          }
        : { status: 502, reason: 'partner:unreachable', body: { error: 'the partner could not be reached' } },
    };
  }
  if (e instanceof PartnerResponseError) {
    const received = e.received as { swapId?: unknown } | undefined;
    const swapId = typeof received?.swapId === 'string' ? received.swapId : undefined;
    return {
      ...base,
      kind: 'invalid_response',
      errorKey: null,
      message: `${e.message}${swapId ? ` (the answer named swap ${swapId})` : ''}`,
      answer: {
        status: 502,
        reason: 'partner:invalid_response',
        body: {
          error: `the partner answered outside the interface (${e.field || 'body'}: ${e.reason})`,
          ...(swapId ? { swapId } : {}),
        },
      },
    };
  }
  if (e instanceof PartnerRequestError) {
    return {
      ...base,
      kind: 'partner_error',
      errorKey: null,
      answer: { status: 400, reason: 'invalid_body', body: { error: `invalid ${e.field}: ${e.reason}` } },
    };
  }
  const status = e instanceof PartnerHttpError ? e.status : undefined;
  return {
    ...base,
    kind: 'partner_error',
    errorKey: null,
    answer: {
      status: 502,
      reason: 'partner:http_error',
      body: { error: `the partner failed${status ? ` (HTTP ${status})` : ''}` },
    },
  };
}

export function partnerOutcome(e: unknown): string {
  if (e instanceof PartnerApiError) return e.kind;
  if (e instanceof RateLimitedError) return 'rate-limited';
  if (e instanceof PartnerNetworkError) return e.outcomeUnknown ? 'outcome-unknown' : 'unreachable';
  if (e instanceof PartnerResponseError) return 'invalid-response';
  if (e instanceof PartnerError) return 'error';
  return 'exception';
}

export function quoteAnswer(providerId: string, t: QuoteTerms): Record<string, unknown> {
  return {
    quoteRef: t.quoteRef,
    providerId,
    quoteId: t.quoteId,
    tradeMethod: t.tradeMethod,
    from: t.currencyFrom,
    to: t.currencyTo,
    amount: t.amountFrom,
    amountTo: t.amountTo,
    providerFees: t.providerFees,
    referralFees: t.referralFees,
    payoutNetworkFees: t.payoutNetworkFees,
    expiry: t.expiry,
    defaultSlippage: t.defaultSlippage,
    minSlippage: t.minSlippage,
    maxSlippage: t.maxSlippage,
  };
}

export function idempotentAnswer(d: IdempotencyDecision): Answer {
  switch (d.kind) {
    case 'new': // the key was claimed and given back meanwhile: the caller may simply retry
      return {
        status: 409,
        reason: 'idempotency_in_progress',
        headers: { 'retry-after': '1' },
        body: { error: 'a request with this Idempotency-Key was in progress; retry' },
      };
    case 'mismatch':
      return refusal({
        status: 422,
        reason: 'idempotency_mismatch',
        error: 'this Idempotency-Key was used for another request; use a new key for a new request',
      });
    case 'lease_expired': // settled by settleExpired before this is reached
      return outcomeUnknownAnswer(d.requestId, 'in progress beyond its lease');
    case 'in_progress':
      return {
        status: 409,
        reason: 'idempotency_in_progress',
        headers: { 'retry-after': '1' },
        body: { error: 'a request with this Idempotency-Key is in progress', requestId: d.requestId },
      };
    case 'replay':
      return {
        status: d.status,
        headers: { 'idempotent-replayed': 'true' },
        body: (d.body ?? {}) as Record<string, unknown>,
      };
  }
}
