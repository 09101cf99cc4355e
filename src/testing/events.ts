import { newEvent, quoteKey, requestKey } from '../events/keys.ts';
import { DEFAULT_FINAL_STATUSES, statusClassOf } from '../swap/status.ts';
import type { EventSource, PayloadByType, SwapEvent, SwapEventOf, SwapRequest } from '../events/types.ts';

/**
 * Builders of well-formed events for tests and benchmarks. Times are fixed unless given, so folds over
 * built events are reproducible.
 */

const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);
let clock = 0;
/** A deterministic ISO time: T0 plus `seconds`, or the next tick of a shared counter. */
export function at(seconds?: number): string {
  return new Date(T0 + (seconds ?? clock++) * 1000).toISOString();
}

/** newEvent with test defaults: partner-a, source gateway, the next tick of the test clock. */
function envelope<T extends keyof PayloadByType>(
  type: T,
  payload: PayloadByType[T],
  opts: {
    swapId?: string | null;
    /** Default: swapKey(providerId, swapId) for a swap event. */
    aggregateKey?: string;
    providerId?: string;
    source?: EventSource;
    eventId?: string;
    time?: string;
  },
): SwapEventOf<T> {
  return newEvent(type, new Date(opts.time ?? at()), payload, {
    providerId: opts.providerId ?? 'partner-a',
    source: opts.source ?? 'gateway',
    swapId: opts.swapId ?? null,
    ...(opts.aggregateKey !== undefined ? { aggregateKey: opts.aggregateKey } : {}),
    ...(opts.eventId !== undefined ? { eventId: opts.eventId } : {}),
  });
}

export function swapRequest(overrides: Partial<SwapRequest> = {}): SwapRequest {
  return {
    tradeMethod: 'float',
    quoteRef: null,
    quoteId: null,
    amountFrom: '0.015',
    currencyFrom: 'btc',
    currencyTo: 'eth',
    payloadCurrencyFrom: 'BTC',
    payloadCurrencyTo: 'ETH',
    payoutAddress: '0xb794f5ea0ba39494ce839613fffba74279579268',
    payoutAddressExtraId: null,
    refundAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    refundAddressExtraId: null,
    nonce: '350aea0c97f747f1d0f760814614a47523801b1aeb7d0bcbbaa2a4f46bf8184b',
    slippage: null,
    ...overrides,
  };
}

type Opts = { providerId?: string; eventId?: string; time?: string; source?: EventSource };

export function swapCreated(
  swapId: string,
  opts: Opts & {
    requestId?: string;
    request?: Partial<SwapRequest>;
    created?: Partial<PayloadByType['SwapCreated']>;
  } = {},
): SwapEventOf<'SwapCreated'> {
  const requestId = opts.requestId ?? `req-${swapId}`;
  return envelope(
    'SwapCreated',
    {
      requestId,
      request: swapRequest(opts.request),
      quote: null,
      payinAddress: 'bc1qpayin0000000000000000000000000000000',
      createdAt: opts.time ?? at(),
      providerFees: '0.0005',
      referralFees: '0.0001',
      payoutNetworkFees: '0.002',
      providerSigPayload: 'AAAA',
      providerSigSignature: 'BBBB',
      providerSigField: 'signature',
      signatureValid: true,
      keyId: 'key-1',
      decodedPayloadJson: null,
      signedAmountToProvider: '1500000',
      signedAmountToWallet: '250000000000000000',
      findings: [],
      extraFieldsJson: null,
      ...opts.created,
    },
    { swapId, ...opts },
  );
}

export function statusReported(
  swapId: string,
  status: string,
  fields: Partial<PayloadByType['StatusReported']> = {},
  opts: Opts = {},
): SwapEventOf<'StatusReported'> {
  const statusClass = fields.statusClass ?? statusClassOf(status, new Set(DEFAULT_FINAL_STATUSES));
  return envelope(
    'StatusReported',
    {
      providerStatus: status,
      status,
      final: statusClass === 'final',
      statusClass,
      amount: null,
      providerFees: null,
      referralFees: null,
      payoutNetworkFees: null,
      payinTransactionId: null,
      payoutTransactionId: null,
      quoteId: null,
      refundTransactionId: null,
      extraFees: null,
      ...fields,
    },
    { swapId, source: opts.source ?? 'poll', ...opts },
  );
}

export function swapCorrected(
  swapId: string,
  fields: Partial<PayloadByType['SwapCorrected']>,
  opts: Opts = {},
): SwapEventOf<'SwapCorrected'> {
  return envelope(
    'SwapCorrected',
    {
      operator: 'ops@example.com',
      reason: 'partner confirmed a different amount',
      status: null,
      final: null,
      amount: null,
      providerFees: null,
      referralFees: null,
      payoutNetworkFees: null,
      ...fields,
    },
    { swapId, source: 'ops', ...opts },
  );
}

export function swapRequested(requestId: string, opts: Opts & { request?: Partial<SwapRequest> } = {}) {
  return envelope(
    'SwapRequested',
    { requestId, idempotencyKey: `idem-${requestId}`, request: swapRequest(opts.request) },
    { aggregateKey: requestKey(requestId), ...opts },
  );
}

export function swapCreationFailed(
  requestId: string,
  kind: PayloadByType['SwapCreationFailed']['kind'],
  opts: Opts = {},
) {
  return envelope(
    'SwapCreationFailed',
    {
      requestId,
      kind,
      httpStatus: kind === 'partner_error' ? 400 : null,
      errorKey: null,
      message: `failed: ${kind}`,
    },
    { aggregateKey: requestKey(requestId), ...opts },
  );
}

export function quoteReceived(quoteRef: string, opts: Opts = {}) {
  return envelope(
    'QuoteReceived',
    {
      quote: {
        quoteRef,
        quoteId: `q-${quoteRef}`,
        tradeMethod: 'fixed',
        currencyFrom: 'btc',
        currencyTo: 'eth',
        amountFrom: '0.015',
        amountTo: '0.25',
        providerFees: '0.0005',
        referralFees: '0.0001',
        payoutNetworkFees: '0.002',
        expiry: at(600),
        defaultSlippage: '0.01',
        minSlippage: '0',
        maxSlippage: '0.05',
        extraFieldsJson: null,
      },
    },
    { aggregateKey: quoteKey(quoteRef), ...opts },
  );
}

export function swapReconciled(swapId: string, basedOnEventId: string, verdict = 'MATCHED', opts: Opts = {}) {
  return envelope(
    'SwapReconciled',
    { verdict, basedOnEventId, checks: [] },
    { swapId, source: 'reconciler', ...opts },
  );
}

export type AnyEvent = SwapEvent;

/** A report the ingest refused with 405 because it saw the swap final. */
export function statusContradicted(
  swapId: string,
  status: string,
  knownStatus: string,
  fields: Partial<PayloadByType['StatusReported']> = {},
  opts: Opts = {},
): SwapEventOf<'StatusContradicted'> {
  const report = statusReported(swapId, status, fields, opts).payload;
  return envelope('StatusContradicted', { report, knownStatus }, { swapId, source: 'webhook', ...opts });
}
