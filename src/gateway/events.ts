import { newEvent, quoteKey, requestKey } from '../events/keys.ts';
import type {
  CreationFailureKind,
  Finding,
  PayloadByType,
  QuoteTerms,
  SwapEventOf,
  SwapRequest,
} from '../events/types.ts';
import type { QuoteResponse, SwapResponse } from '../partner/types.ts';
import { providerSignatureOf } from '../partner/validate.ts';
import { parsePartnerTimestamp } from '../partner/checker.ts';
import { describeSwapPayload, type PayloadInspection } from '../payload/index.ts';
import { partnerCreatedAt } from './created.ts';

/**
 * Builders of the events the gateway records, all through `newEvent`. Keys (src/events/keys.ts): quotes
 * `quote:<quoteRef>`, swap requests and their failures `request:<requestId>`, a created swap `swap:<provider>:<swapId>`.
 */

const QUOTE_FIELDS = new Set([
  'quoteId',
  'amount',
  'amountTo',
  'providerFees',
  'referralFees',
  'payoutNetworkFees',
  'tradeMethod',
  'expiry',
  'defaultSlippage',
  'minSlippage',
  'maxSlippage',
]);

const SWAP_FIELDS = new Set([
  'swapId',
  'payinAddress',
  'createdAt',
  'providerFees',
  'referralFees',
  'payoutNetworkFees',
  'providerSig',
]);

/** The fields of a partner object the interface does not name, as JSON, or null when there are none. */
export function extraFieldsJson(o: object, known: ReadonlySet<string>): string | null {
  const extra = Object.fromEntries(Object.entries(o).filter(([k]) => !known.has(k)));
  return Object.keys(extra).length > 0 ? JSON.stringify(extra) : null;
}

/** ISO-8601 UTC of a partner timestamp (`+0000` and the like), or the text as received if unreadable. */
export function isoTime(text: string | undefined): string | null {
  if (text === undefined) return null;
  return parsePartnerTimestamp(text)?.toISOString() ?? text;
}

export function quoteTerms(
  quoteRef: string,
  request: { from: string; to: string; amount: string },
  q: QuoteResponse,
): QuoteTerms {
  return {
    quoteRef,
    quoteId: q.quoteId ?? null,
    tradeMethod: q.tradeMethod,
    currencyFrom: request.from,
    currencyTo: request.to,
    amountFrom: q.amount ?? request.amount,
    amountTo: q.amountTo,
    providerFees: q.providerFees,
    referralFees: q.referralFees,
    payoutNetworkFees: q.payoutNetworkFees,
    expiry: isoTime(q.expiry),
    defaultSlippage: q.defaultSlippage ?? null,
    minSlippage: q.minSlippage ?? null,
    maxSlippage: q.maxSlippage ?? null,
    extraFieldsJson: extraFieldsJson(q, QUOTE_FIELDS),
  };
}

const UNPRINTABLE_CHARS = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udfff]/gu;

/**
 * A partner's free text (error messages, keys, bodies) made storable: control characters and lone
 * surrogates are written as visible `\uXXXX` escapes (Postgres refuses U+0000 in jsonb), not dropped.
 */
export function visibleText(text: string): string {
  return text.replace(
    UNPRINTABLE_CHARS,
    (c) => `\\u${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`,
  );
}

/** visibleText applied to every string (keys included) of a JSON value. */
export function visibleStrings<T>(value: T): T {
  if (typeof value === 'string') return visibleText(value) as T;
  if (Array.isArray(value)) return value.map(visibleStrings) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [visibleText(k), visibleStrings(v)]),
    ) as T;
  return value;
}

interface Common {
  readonly providerId: string;
  readonly now: Date;
}

/** The gateway's envelope of one of its events: id and time from the same injected clock. */
function gatewayEvent<
  T extends 'QuoteReceived' | 'QuoteRejected' | 'SwapRequested' | 'SwapCreationFailed' | 'SwapCreated',
>(
  c: Common,
  type: T,
  key: { swapId: string } | { aggregateKey: string },
  payload: PayloadByType[T],
): SwapEventOf<T> {
  return newEvent(type, c.now, payload, { providerId: c.providerId, source: 'gateway', ...key });
}

export function quoteReceivedEvent(c: Common, terms: QuoteTerms): SwapEventOf<'QuoteReceived'> {
  return gatewayEvent(c, 'QuoteReceived', { aggregateKey: quoteKey(terms.quoteRef) }, { quote: terms });
}

export function quoteRejectedEvent(
  c: Common,
  r: {
    quoteRef: string;
    tradeMethod: string;
    from: string;
    to: string;
    amount: string;
    httpStatus: number | null;
    errorKey: string | null;
    message: string;
    additionalFields?: Readonly<Record<string, unknown>> | undefined;
  },
): SwapEventOf<'QuoteRejected'> {
  return gatewayEvent(
    c,
    'QuoteRejected',
    { aggregateKey: quoteKey(r.quoteRef) },
    {
      quoteRef: r.quoteRef,
      tradeMethod: r.tradeMethod,
      currencyFrom: r.from,
      currencyTo: r.to,
      amountFrom: r.amount,
      httpStatus: r.httpStatus,
      message: visibleText(r.message),
      errorKey: r.errorKey === null ? null : visibleText(r.errorKey),
      additionalFieldsJson:
        r.additionalFields && Object.keys(r.additionalFields).length > 0
          ? visibleText(JSON.stringify(r.additionalFields))
          : null,
    },
  );
}

export function swapRequestedEvent(
  c: Common,
  requestId: string,
  idempotencyKey: string,
  request: SwapRequest,
): SwapEventOf<'SwapRequested'> {
  return gatewayEvent(
    c,
    'SwapRequested',
    { aggregateKey: requestKey(requestId) },
    { requestId, idempotencyKey, request },
  );
}

export function swapCreationFailedEvent(
  c: Common,
  requestId: string,
  f: { kind: CreationFailureKind; httpStatus: number | null; errorKey: string | null; message: string },
): SwapEventOf<'SwapCreationFailed'> {
  return gatewayEvent(
    c,
    'SwapCreationFailed',
    { aggregateKey: requestKey(requestId) },
    {
      requestId,
      ...f,
      errorKey: f.errorKey === null ? null : visibleText(f.errorKey),
      message: visibleText(f.message.slice(0, 2000)),
    },
  );
}

export function eventFinding(f: PayloadInspection['findings'][number]): Finding {
  return {
    check: f.check,
    outcome: f.outcome,
    expected: f.expected ?? null,
    actual: f.actual ?? null,
    detail: f.detail ?? null,
  };
}

export function swapCreatedEvent(
  c: Common,
  s: {
    requestId: string;
    request: SwapRequest;
    quote: QuoteTerms | null;
    response: SwapResponse;
    inspection: PayloadInspection;
  },
): SwapEventOf<'SwapCreated'> {
  const r = s.response;
  const sig = providerSignatureOf(r.providerSig);
  const decoded = s.inspection.decoded;
  const created = partnerCreatedAt(r.createdAt, c.now);
  return gatewayEvent(
    c,
    'SwapCreated',
    { swapId: r.swapId },
    {
      requestId: s.requestId,
      request: s.request,
      quote: s.quote,
      payinAddress: r.payinAddress,
      createdAt: created.createdAt,
      providerFees: r.providerFees,
      referralFees: r.referralFees,
      payoutNetworkFees: r.payoutNetworkFees,
      providerSigPayload: r.providerSig.payload,
      providerSigSignature: sig.value === '' ? null : sig.value,
      providerSigField: sig.field,
      signatureValid: s.inspection.signatureValid,
      keyId: s.inspection.keyId ?? null,
      decodedPayloadJson: decoded ? JSON.stringify(describeSwapPayload(decoded)) : null,
      signedAmountToProvider: decoded ? decoded.amount_to_provider.toString() : null,
      signedAmountToWallet: decoded ? decoded.amount_to_wallet.toString() : null,
      findings: [...s.inspection.findings.map(eventFinding), ...(created.finding ? [created.finding] : [])],
      extraFieldsJson: extraFieldsJson(r, SWAP_FIELDS),
    },
  );
}

/** Findings that stop a swap from being handed to the wallet: the signature or content does not match. */
export function blockingFindings(inspection: PayloadInspection): Finding[] {
  return inspection.findings
    .filter((f) => f.outcome === 'mismatch' || f.outcome === 'violation')
    .map(eventFinding);
}
