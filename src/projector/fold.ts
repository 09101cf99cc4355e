import { Decimal, isDecimalText } from '../money/decimal.ts';
import type { EventType, PayloadByType, SwapEvent, SwapEventOf } from '../events/types.ts';
import { ledgerPostings, type PostingCause } from '../ledger/postings.ts';
import type {
  Changes,
  DeadLetterRow,
  JournalOutcome,
  JournalRow,
  Position,
  SwapRow,
  UndecodableMessage,
  WorkingSet,
} from './state.ts';

/**
 * The fold: a pure function of the event and the state before it. No clock, no randomness, no
 * configuration: times come from the event, decisions (mapped status, final flag) were taken at ingest.
 * Replaying the same events therefore rebuilds the same state, column for column.
 */

export const CREATED_STATUS = 'CREATED';

interface Verdict {
  outcome: JournalOutcome;
  reason?: string;
  changes?: Changes;
}

const applied = (changes: Changes, reason?: string): Verdict => ({ outcome: 'applied', changes, reason });
const rejected = (reason: string): Verdict => ({ outcome: 'rejected', reason });
const noop = (reason: string): Verdict => ({ outcome: 'noop', reason });

/** "As soon as known" fields may be empty before the swap is final: empty means unknown. */
function known(value: string | null | undefined): string | null {
  return value === null || value === undefined || value.trim() === '' ? null : value;
}

function sameMoney(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  if (isDecimalText(a) && isDecimalText(b)) return new Decimal(a).eq(new Decimal(b));
  return a === b;
}

const MONEY_FIELDS = ['amountTo', 'providerFees', 'referralFees', 'payoutNetworkFees'] as const;
const HASH_FIELDS = ['payinTransactionId', 'payoutTransactionId'] as const;
type ValueField = (typeof MONEY_FIELDS)[number] | (typeof HASH_FIELDS)[number];

function reportedValues(p: PayloadByType['StatusReported']): Record<ValueField, string | null> {
  return {
    amountTo: known(p.amount),
    providerFees: known(p.providerFees),
    referralFees: known(p.referralFees),
    payoutNetworkFees: known(p.payoutNetworkFees),
    payinTransactionId: known(p.payinTransactionId),
    payoutTransactionId: known(p.payoutTransactionId),
  };
}

const sameValue = (field: ValueField, a: string | null, b: string | null) =>
  (MONEY_FIELDS as readonly string[]).includes(field) ? sameMoney(a, b) : a === b;

function touch(ws: WorkingSet, swap: SwapRow, event: SwapEvent): void {
  swap.version += 1;
  swap.lastEventId = event.eventId;
  swap.updatedAt = event.recordedAt;
  ws.swaps.set(swap.swapId, swap);
  ws.dirty.swaps.add(swap.swapId);
}

/** Adds the ledger postings of one applied event of a swap (before → after): see src/ledger/postings.ts. */
function post(ws: WorkingSet, event: SwapEvent, kind: PostingCause['kind'], before: SwapRow, after: SwapRow) {
  const existing = ws.postings.get(after.swapId) ?? [];
  const rows = ledgerPostings(
    { kind, eventId: event.eventId, recordedAt: event.recordedAt },
    before,
    after,
    existing,
  );
  if (rows.length === 0) return;
  ws.postings.set(after.swapId, [...existing, ...rows]);
  ws.newPostings.push(...rows);
}

function queueForReconciliation(ws: WorkingSet, event: SwapEvent, swapId: string, reason: string): void {
  ws.queue.set(swapId, { swapId, queuedByEventId: event.eventId, queuedAt: event.occurredAt, reason });
  ws.dirty.queue.add(swapId);
}

function ownedSwap(ws: WorkingSet, event: SwapEvent): SwapRow | string {
  if (!event.swapId) return `${event.eventType} carries no swapId`;
  const swap = ws.swaps.get(event.swapId);
  if (!swap) return `unknown swap ${event.swapId}: no SwapCreated was applied for it`;
  if (swap.providerId !== event.providerId) {
    return `swap ${event.swapId} belongs to provider ${swap.providerId}, not ${event.providerId}`;
  }
  return { ...swap };
}

function foldStatusReported(ws: WorkingSet, event: SwapEventOf<'StatusReported'>): Verdict {
  const swap = ownedSwap(ws, event);
  if (typeof swap === 'string') return rejected(swap);
  const p = event.payload;
  const reported = reportedValues(p);
  const changes: Changes = {};

  if (swap.final) {
    if (p.status !== swap.status) {
      return rejected(`swap is final (${swap.status}); a report of ${p.status} is not applied`);
    }
    for (const field of [...MONEY_FIELDS, ...HASH_FIELDS]) {
      const before = swap[field];
      const after = reported[field];
      if (after === null) continue;
      if (before !== null && !sameValue(field, before, after)) {
        return rejected(`swap is final (${swap.status}); ${field} would change from ${before} to ${after}`);
      }
      if (before === null) changes[field] = [null, after];
    }
    if (Object.keys(changes).length === 0)
      return noop(`swap is final (${swap.status}); nothing new reported`);
    for (const [field, [, after]] of Object.entries(changes))
      (swap as Record<string, unknown>)[field] = after;
    const before = ws.swaps.get(swap.swapId)!;
    touch(ws, swap, event);
    post(ws, event, 'report', before, swap);
    return applied(changes, 'fills values of a final swap that were still unknown');
  }

  if (p.status !== swap.status) changes.status = [swap.status, p.status];
  for (const field of [...MONEY_FIELDS, ...HASH_FIELDS]) {
    const after = reported[field];
    if (after !== null && !sameValue(field, swap[field], after)) changes[field] = [swap[field], after];
  }
  if (p.final) {
    changes.final = [false, true];
    // An amount reported before the final status is the partner's estimate; the final amount is the one
    // the final report carries. Without one it is unknown (a later report may fill it), never the estimate.
    if (reported.amountTo === null && swap.amountTo !== null) changes.amountTo = [swap.amountTo, null];
  }
  if (Object.keys(changes).length === 0)
    return noop(`status ${p.status} and every reported value already known`);

  swap.status = p.status;
  swap.providerStatus = p.providerStatus;
  for (const field of [...MONEY_FIELDS, ...HASH_FIELDS]) {
    if (changes[field]) (swap as Record<string, unknown>)[field] = reported[field];
  }
  if (p.final) {
    swap.final = true;
    swap.finalAt = event.occurredAt;
    queueForReconciliation(ws, event, swap.swapId, 'final');
  }
  const before = ws.swaps.get(swap.swapId)!;
  touch(ws, swap, event);
  post(ws, event, 'report', before, swap);
  return applied(changes);
}

function foldSwapCreated(ws: WorkingSet, event: SwapEventOf<'SwapCreated'>): Verdict {
  if (!event.swapId) return rejected('SwapCreated carries no swapId');
  const existing = ws.swaps.get(event.swapId);
  if (existing) return rejected(`swap ${event.swapId} was already created by event ${existing.lastEventId}`);
  const p = event.payload;
  const r = p.request;
  if (r.tradeMethod !== 'fixed' && r.tradeMethod !== 'float') {
    return rejected(`trade method ${r.tradeMethod} is neither fixed nor float`);
  }
  const swap: SwapRow = {
    swapId: event.swapId,
    providerId: event.providerId,
    requestId: p.requestId,
    tradeMethod: r.tradeMethod,
    quoteRef: r.quoteRef ?? p.quote?.quoteRef ?? null,
    quoteId: r.quoteId ?? p.quote?.quoteId ?? null,
    currencyFrom: r.currencyFrom,
    currencyTo: r.currencyTo,
    payloadCurrencyFrom: r.payloadCurrencyFrom,
    payloadCurrencyTo: r.payloadCurrencyTo,
    amountFrom: r.amountFrom ?? p.quote?.amountFrom ?? null,
    quotedAmountTo: p.quote?.amountTo ?? null,
    slippage: r.slippage ?? p.quote?.defaultSlippage ?? null,
    payinAddress: p.payinAddress,
    payoutAddress: r.payoutAddress,
    payoutExtraId: r.payoutAddressExtraId,
    refundAddress: r.refundAddress,
    refundExtraId: r.refundAddressExtraId,
    nonce: r.nonce,
    createdAt: p.createdAt,
    createdProviderFees: p.providerFees,
    createdReferralFees: p.referralFees,
    createdPayoutNetworkFees: p.payoutNetworkFees,
    signedAmountToProvider: p.signedAmountToProvider,
    signedAmountToWallet: p.signedAmountToWallet,
    signatureValid: p.signatureValid,
    status: CREATED_STATUS,
    providerStatus: null,
    final: false,
    finalAt: null,
    amountTo: null,
    providerFees: null,
    referralFees: null,
    payoutNetworkFees: null,
    payinTransactionId: null,
    payoutTransactionId: null,
    corrected: false,
    lastCorrectionEventId: null,
    version: 0,
    lastEventId: event.eventId,
    updatedAt: event.recordedAt,
  };
  touch(ws, swap, event);
  return applied({ status: [null, CREATED_STATUS] });
}

function foldSwapCorrected(ws: WorkingSet, event: SwapEventOf<'SwapCorrected'>): Verdict {
  const swap = ownedSwap(ws, event);
  if (typeof swap === 'string') return rejected(swap);
  const p = event.payload;
  const changes: Changes = {};
  const wanted: [keyof SwapRow, string | boolean | null][] = [
    ['status', p.status],
    ['final', p.final],
    ['amountTo', p.amount],
    ['providerFees', p.providerFees],
    ['referralFees', p.referralFees],
    ['payoutNetworkFees', p.payoutNetworkFees],
  ];
  for (const [field, after] of wanted) {
    if (after === null) continue;
    const before = swap[field];
    const same =
      typeof after === 'string' && field !== 'status'
        ? sameMoney(before as string | null, after)
        : before === after;
    if (!same) changes[field] = [before, after];
  }
  if (Object.keys(changes).length === 0) return noop('the correction matches the current state');
  for (const [field, [, after]] of Object.entries(changes)) (swap as Record<string, unknown>)[field] = after;
  if (changes.final) swap.finalAt = swap.final ? event.occurredAt : null;
  swap.corrected = true;
  swap.lastCorrectionEventId = event.eventId;
  if (swap.final) queueForReconciliation(ws, event, swap.swapId, 'corrected');
  const before = ws.swaps.get(swap.swapId)!;
  touch(ws, swap, event);
  post(ws, event, 'correction', before, swap);
  return applied(changes, `corrected by ${p.operator}: ${p.reason}`);
}

function foldSwapReconciled(ws: WorkingSet, event: SwapEventOf<'SwapReconciled'>): Verdict {
  const swap = ownedSwap(ws, event);
  if (typeof swap === 'string') return rejected(swap);
  const p = event.payload;
  const before = ws.reconciliations.get(swap.swapId);
  ws.reconciliations.set(swap.swapId, {
    swapId: swap.swapId,
    eventId: event.eventId,
    basedOnEventId: p.basedOnEventId,
    verdict: p.verdict,
    checks: p.checks,
    reconciledAt: event.occurredAt,
  });
  ws.dirty.reconciliations.add(swap.swapId);
  // The queue entry is done only if no newer final event or correction queued the swap meanwhile.
  if (ws.queue.get(swap.swapId)?.queuedByEventId === p.basedOnEventId) {
    ws.queue.set(swap.swapId, undefined);
    ws.dirty.queue.add(swap.swapId);
  }
  return applied({ verdict: [before?.verdict ?? null, p.verdict] });
}

function foldSwapRequested(ws: WorkingSet, event: SwapEventOf<'SwapRequested'>): Verdict {
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

function foldSwapCreationFailed(ws: WorkingSet, event: SwapEventOf<'SwapCreationFailed'>): Verdict {
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

function foldQuote(
  ws: WorkingSet,
  event: SwapEventOf<'QuoteReceived'> | SwapEventOf<'QuoteRejected'>,
): Verdict {
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

export function deadLetterId(position: Position): string {
  return `${position.topic}:${position.partition}:${position.offset}`;
}

/** Records an undecodable message as an open dead letter; its key is parked from here on. */
export function foldUndecodable(ws: WorkingSet, m: UndecodableMessage): void {
  const id = deadLetterId(m.position);
  if (ws.deadLetters.get(id)) return; // read again after a crash: already recorded
  ws.deadLetters.set(id, {
    deadLetterId: id,
    topic: m.position.topic,
    partition: m.position.partition,
    offset: m.position.offset,
    aggregateKey: m.key,
    reason: m.reason,
    valueBase64: m.valueBase64,
    failedAt: m.timestamp,
    status: 'open',
    resolvedByEventId: null,
    resolvedBy: null,
    resolution: null,
  });
  ws.dirty.deadLetters.add(id);
}

/** The open dead letter of this key that an event at `position` must wait behind, if any. */
function blockingDeadLetter(ws: WorkingSet, key: string, position: Position): DeadLetterRow | undefined {
  let first: DeadLetterRow | undefined;
  for (const dl of ws.deadLetters.values()) {
    if (
      dl &&
      dl.status === 'open' &&
      dl.aggregateKey === key &&
      dl.partition === position.partition &&
      dl.offset < position.offset
    ) {
      if (!first || dl.offset < first.offset) first = dl;
    }
  }
  return first;
}

/** Re-folds the events held behind a resolved dead letter, in order, up to the next open one. */
function releaseParked(ws: WorkingSet, key: string): number {
  const held = (ws.parked.get(key) ?? []).sort((a, b) => (a.position.offset < b.position.offset ? -1 : 1));
  let released = 0;
  while (held.length > 0 && !blockingDeadLetter(ws, key, held[0]!.position)) {
    const { event, position } = held.shift()!;
    ws.journalUpdates.push(journalRow(event, position, dispatch(ws, event, position)));
    released++;
  }
  return released;
}

function resolveDeadLetter(
  ws: WorkingSet,
  event: SwapEventOf<'DeadLetterRetried'> | SwapEventOf<'DeadLetterDiscarded'>,
): Verdict {
  const p = event.payload;
  const dl = ws.deadLetters.get(p.deadLetterId);
  if (!dl) return rejected(`unknown dead letter ${p.deadLetterId}`);
  if (dl.status !== 'open') return rejected(`dead letter ${p.deadLetterId} is already ${dl.status}`);
  const retried = event.eventType === 'DeadLetterRetried';
  if (retried) {
    const input = ws.retryInputs.get(p.deadLetterId);
    if (!input) throw new Error(`retry of ${p.deadLetterId} was not prepared before the fold`);
    if ('error' in input)
      return rejected(`dead letter ${p.deadLetterId} still cannot be applied: ${input.error}`);
    ws.deadLetters.set(dl.deadLetterId, {
      ...dl,
      status: 'retried',
      resolvedByEventId: event.eventId,
      resolvedBy: p.operator,
      resolution: p.reason ?? 'retried',
    });
    const position = { topic: dl.topic, partition: dl.partition, offset: dl.offset };
    const row = foldEvent(ws, input.event, position);
    if (row) ws.extraJournal.push(row);
  } else {
    ws.deadLetters.set(dl.deadLetterId, {
      ...dl,
      status: 'discarded',
      resolvedByEventId: event.eventId,
      resolvedBy: p.operator,
      resolution: p.reason,
    });
  }
  ws.dirty.deadLetters.add(dl.deadLetterId);
  const released = releaseParked(ws, dl.aggregateKey);
  const status = retried ? 'retried' : 'discarded';
  return applied(
    { deadLetter: ['open', status], released: [0, released] },
    `dead letter ${dl.deadLetterId} ${status} by ${p.operator}${p.reason ? `: ${p.reason}` : ''}`,
  );
}

const folds: { [T in EventType]: (ws: WorkingSet, e: SwapEventOf<T>) => Verdict } = {
  QuoteReceived: foldQuote,
  QuoteRejected: foldQuote,
  SwapRequested: foldSwapRequested,
  SwapCreated: foldSwapCreated,
  SwapCreationFailed: foldSwapCreationFailed,
  StatusReported: foldStatusReported,
  SwapReconciled: foldSwapReconciled,
  SwapCorrected: foldSwapCorrected,
  DeadLetterRetried: resolveDeadLetter,
  DeadLetterDiscarded: resolveDeadLetter,
};

function dispatch(ws: WorkingSet, event: SwapEvent, position: Position): Verdict {
  const blocking =
    event.eventType === 'DeadLetterRetried' || event.eventType === 'DeadLetterDiscarded'
      ? undefined
      : blockingDeadLetter(ws, event.aggregateKey, position);
  if (blocking) {
    const held = ws.parked.get(event.aggregateKey) ?? [];
    held.push({ event, position });
    ws.parked.set(event.aggregateKey, held);
    return { outcome: 'parked', reason: `held behind dead letter ${blocking.deadLetterId}` };
  }
  const fold = folds[event.eventType] as (ws: WorkingSet, e: SwapEvent) => Verdict;
  return fold(ws, event);
}

function journalRow(event: SwapEvent, position: Position, verdict: Verdict): JournalRow {
  return {
    eventId: event.eventId,
    topic: position.topic,
    partition: position.partition,
    offset: position.offset,
    eventType: event.eventType,
    swapId: event.swapId,
    aggregateKey: event.aggregateKey,
    providerId: event.providerId,
    source: event.source,
    occurredAt: event.occurredAt,
    recordedAt: event.recordedAt,
    outcome: verdict.outcome,
    reason: verdict.reason ?? null,
    changes: verdict.changes ?? null,
    payload: event.payload,
  };
}

/**
 * Folds one event into the working set and returns its journal row, or undefined for an event id
 * already seen (a redelivery or a resend: ignored, not journaled twice). An event whose key waits
 * behind an open dead letter is journaled as parked and held.
 */
export function foldEvent(ws: WorkingSet, event: SwapEvent, position: Position): JournalRow | undefined {
  if (ws.seenEventIds.has(event.eventId)) return undefined;
  ws.seenEventIds.add(event.eventId);
  return journalRow(event, position, dispatch(ws, event, position));
}

/** Rebuilds the event a journal row recorded (held events are released from their journal rows). */
export function eventFromJournal(row: JournalRow): { event: SwapEvent; position: Position } {
  return {
    event: {
      eventId: row.eventId,
      eventType: row.eventType,
      swapId: row.swapId,
      aggregateKey: row.aggregateKey,
      providerId: row.providerId,
      source: row.source,
      occurredAt: row.occurredAt,
      recordedAt: row.recordedAt,
      payload: row.payload,
    } as SwapEvent,
    position: { topic: row.topic, partition: row.partition, offset: BigInt(row.offset) },
  };
}

/** The keys of the rows an event may read or write, so a batch loads them all in one query each. */
export function rowKeys(event: SwapEvent): { swapId?: string; requestId?: string; quoteRef?: string } {
  switch (event.eventType) {
    case 'QuoteReceived':
      return { quoteRef: event.payload.quote.quoteRef };
    case 'QuoteRejected':
      return { quoteRef: event.payload.quoteRef };
    case 'SwapRequested':
    case 'SwapCreationFailed':
      return { requestId: event.payload.requestId };
    case 'DeadLetterRetried':
    case 'DeadLetterDiscarded':
      return {};
    default:
      return event.swapId ? { swapId: event.swapId } : {};
  }
}
