import type { SwapEventOf } from '../events/types.ts';
import type { WorkingSet } from './state.ts';
import { applied, rejected, type FoldDecision } from './decision.ts';

/**
 * The folds of what happens before a swap exists: quotes (key quote:<ref>) and swap requests (key
 * request:<id>). Each row is owned by one key, so by one partition.
 */

export function foldSwapRequested(ws: WorkingSet, event: SwapEventOf<'SwapRequested'>): FoldDecision {
  const p = event.payload;
  if (ws.requests.get(p.requestId)) return rejected(`request ${p.requestId} was already recorded`);
  ws.requests.set(p.requestId, {
    requestId: p.requestId,
    providerId: event.providerId,
    idempotencyKey: p.idempotencyKey,
    tradeMethod: p.request.tradeMethod,
    quoteRef: p.request.quoteRef,
    amountFrom: p.request.amountFrom,
    currencyFrom: p.request.currencyFrom,
    currencyTo: p.request.currencyTo,
    requestedAt: event.occurredAt,
    outcome: 'requested',
    failureKind: null,
    failureReason: null,
    httpStatus: null,
    errorKey: null,
  });
  ws.dirty.requests.add(p.requestId);
  return applied({ outcome: [null, 'requested'] });
}

export function foldSwapCreationFailed(
  ws: WorkingSet,
  event: SwapEventOf<'SwapCreationFailed'>,
): FoldDecision {
  const p = event.payload;
  const request = ws.requests.get(p.requestId);
  if (!request) return rejected(`unknown request ${p.requestId}: no SwapRequested was applied for it`);
  if (request.outcome !== 'requested')
    return rejected(`request ${p.requestId} already ended as ${request.outcome}`);
  const outcome = p.kind === 'outcome_unknown' ? 'unknown' : 'failed';
  ws.requests.set(p.requestId, {
    ...request,
    outcome,
    failureKind: p.kind,
    failureReason: p.message,
    httpStatus: p.httpStatus,
    errorKey: p.errorKey,
  });
  ws.dirty.requests.add(p.requestId);
  return applied({ outcome: ['requested', outcome] });
}

export function foldQuote(
  ws: WorkingSet,
  event: SwapEventOf<'QuoteReceived'> | SwapEventOf<'QuoteRejected'>,
): FoldDecision {
  const ref = event.eventType === 'QuoteReceived' ? event.payload.quote.quoteRef : event.payload.quoteRef;
  if (ws.quotes.get(ref)) return rejected(`quote ${ref} was already recorded`);
  if (event.eventType === 'QuoteReceived') {
    const q = event.payload.quote;
    ws.quotes.set(ref, {
      quoteRef: ref,
      providerId: event.providerId,
      outcome: 'received',
      tradeMethod: q.tradeMethod,
      quoteId: q.quoteId,
      currencyFrom: q.currencyFrom,
      currencyTo: q.currencyTo,
      amountFrom: q.amountFrom,
      amountTo: q.amountTo,
      providerFees: q.providerFees,
      referralFees: q.referralFees,
      payoutNetworkFees: q.payoutNetworkFees,
      expiry: q.expiry,
      defaultSlippage: q.defaultSlippage,
      minSlippage: q.minSlippage,
      maxSlippage: q.maxSlippage,
      errorKey: null,
      errorMessage: null,
      receivedAt: event.occurredAt,
    });
  } else {
    const q = event.payload;
    ws.quotes.set(ref, {
      quoteRef: ref,
      providerId: event.providerId,
      outcome: 'rejected',
      tradeMethod: q.tradeMethod,
      quoteId: null,
      currencyFrom: q.currencyFrom,
      currencyTo: q.currencyTo,
      amountFrom: q.amountFrom,
      amountTo: null,
      providerFees: null,
      referralFees: null,
      payoutNetworkFees: null,
      expiry: null,
      defaultSlippage: null,
      minSlippage: null,
      maxSlippage: null,
      errorKey: q.errorKey,
      errorMessage: q.message,
      receivedAt: event.occurredAt,
    });
  }
  ws.dirty.quotes.add(ref);
  return applied({ outcome: [null, event.eventType === 'QuoteReceived' ? 'received' : 'rejected'] });
}
