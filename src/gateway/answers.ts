import type { SwapCreated } from '../events/types.ts';
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
