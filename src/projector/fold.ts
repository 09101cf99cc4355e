import type { EventType, SwapEvent, SwapEventOf } from '../events/types.ts';
import { swapKey } from '../events/keys.ts';
import { inadmissible, storablePayload } from './admissible.ts';
import { blockingDeadLetter, resolveDeadLetter } from './parking.ts';
import { foldQuote, foldSwapCreationFailed, foldSwapRequested } from './requests.ts';
import type { JournalRow, Position, WorkingSet } from './state.ts';
import {
  foldStatusContradicted,
  foldStatusReported,
  foldSwapCorrected,
  foldSwapCreated,
  foldSwapReconciled,
} from './swaps.ts';
import { rejected, type FoldDecision } from './decision.ts';
import { carriedEvent, foldEventReapplied } from './reapply.ts';
import { foldChainTransactionObserved } from './chain.ts';
import { foldInvoiceIssued, foldInvoiceSettled, foldPeriodEvent, foldStatementImported } from './monthend.ts';
import { foldCaseActed } from './cases.ts';

export { deadLetterId, foldUndecodable } from './parking.ts';

/**
 * The fold's dispatcher: a pure function of the event and the state before it. No clock, no randomness,
 * no configuration: times come from the event, decisions (mapped status, its class) were taken at ingest.
 * Replaying the same events therefore rebuilds the same state, column for column. The rules live beside
 * it: swaps.ts (a swap's own events), requests.ts (quotes and requests), parking.ts (dead letters).
 */

const folds: { [T in EventType]: (ws: WorkingSet, e: SwapEventOf<T>) => FoldDecision } = {
  QuoteReceived: foldQuote,
  QuoteRejected: foldQuote,
  SwapRequested: foldSwapRequested,
  SwapCreated: foldSwapCreated,
  SwapCreationFailed: foldSwapCreationFailed,
  StatusReported: foldStatusReported,
  StatusContradicted: foldStatusContradicted,
  SwapReconciled: foldSwapReconciled,
  SwapCorrected: foldSwapCorrected,
  DeadLetterRetried: (ws, e) => resolveDeadLetter(ws, e, foldEvent, release),
  DeadLetterDiscarded: (ws, e) => resolveDeadLetter(ws, e, foldEvent, release),
  EventReapplied: (ws, e) => foldEventReapplied(ws, e, foldCarried),
  ChainTransactionObserved: foldChainTransactionObserved,
  StatementImported: foldStatementImported,
  PeriodClosed: foldPeriodEvent,
  PeriodReopened: foldPeriodEvent,
  CaseActed: foldCaseActed,
  InvoiceIssued: foldInvoiceIssued,
  InvoiceSettled: foldInvoiceSettled,
};

/** A reapplied event's fold: its input bounds, then its own rule (parking was the reapply's, at dispatch). */
function foldCarried(ws: WorkingSet, event: SwapEvent): FoldDecision {
  const problem = inadmissible(event);
  if (problem) return rejected(`refused by the fold's input bounds: ${problem}`);
  return (folds[event.eventType] as (ws: WorkingSet, e: SwapEvent) => FoldDecision)(ws, event);
}

function dispatch(ws: WorkingSet, event: SwapEvent, position: Position): FoldDecision {
  // First: an event no state could hold is rejected, never parked (its journal row must be storable).
  const problem = inadmissible(event);
  if (problem) return rejected(`refused by the fold's input bounds: ${problem}`);
  const blocking =
    event.eventType === 'DeadLetterRetried' || event.eventType === 'DeadLetterDiscarded'
      ? undefined
      : blockingDeadLetter(ws, event.aggregateKey, position);
  if (blocking) {
    const held = ws.parked.get(blocking.aggregateKey) ?? [];
    held.push({ event, position });
    ws.parked.set(blocking.aggregateKey, held);
    return { outcome: 'parked', reason: `held behind dead letter ${blocking.deadLetterId}` };
  }
  const fold = folds[event.eventType] as (ws: WorkingSet, e: SwapEvent) => FoldDecision;
  return fold(ws, event);
}

export function journalRow(event: SwapEvent, position: Position, verdict: FoldDecision): JournalRow {
  return {
    eventId: event.eventId,
    topic: position.topic,
    partition: position.partition,
    offset: position.offset,
    eventType: event.eventType,
    swapId: event.swapId === null ? null : (storablePayload(event.swapId) as string),
    aggregateKey: storablePayload(event.aggregateKey) as string,
    providerId: event.providerId,
    source: event.source,
    occurredAt: event.occurredAt,
    recordedAt: event.recordedAt,
    outcome: verdict.outcome,
    reason: verdict.reason ?? null,
    changes: verdict.changes ? (storablePayload(verdict.changes) as JournalRow['changes']) : null,
    payload: verdict.outcome === 'rejected' ? storablePayload(event.payload) : event.payload,
  };
}

const release = (ws: WorkingSet, event: SwapEvent, position: Position) =>
  journalRow(event, position, dispatch(ws, event, position));

/**
 * Folds one event into the working set and returns its journal row, or undefined for an event id
 * already seen (a redelivery or a resend: ignored, not journaled twice). An event whose key waits
 * behind an open dead letter is journaled as parked and held.
 */
export function foldEvent(ws: WorkingSet, event: SwapEvent, position: Position): JournalRow | undefined {
  if (ws.seenEventIds.has(event.eventId)) return undefined;
  ws.seenEventIds.add(event.eventId);
  const verdict = dispatch(ws, event, position);
  // A verdict may be based on an event that changed the swap: where it stands in the log orders verdicts.
  if (verdict.outcome === 'applied' || verdict.outcome === 'contradicted')
    ws.offsets.set(event.eventId, position.offset);
  return journalRow(event, position, verdict);
}

/** The event a journal row recorded, its envelope and payload (an operator's reapply carries it whole). */
export function journaledEvent(
  row: Pick<
    JournalRow,
    | 'eventId'
    | 'eventType'
    | 'swapId'
    | 'aggregateKey'
    | 'providerId'
    | 'source'
    | 'occurredAt'
    | 'recordedAt'
    | 'payload'
  >,
): SwapEvent {
  return {
    eventId: row.eventId,
    eventType: row.eventType,
    swapId: row.swapId,
    aggregateKey: row.aggregateKey,
    providerId: row.providerId,
    source: row.source,
    occurredAt: row.occurredAt,
    recordedAt: row.recordedAt,
    payload: row.payload,
  } as SwapEvent;
}

/** Rebuilds the event a journal row recorded (held events are released from their journal rows). */
export function eventFromJournal(row: JournalRow): { event: SwapEvent; position: Position } {
  return {
    event: journaledEvent(row),
    position: { topic: row.topic, partition: row.partition, offset: BigInt(row.offset) },
  };
}

/** The keys of the rows an event may read or write, so a batch loads them all in one query each. */
export function rowKeys(event: SwapEvent): {
  swap?: { providerId: string; swapId: string; key: string };
  requestId?: string;
  quoteRef?: string;
} {
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
    case 'EventReapplied': {
      // The rows of the event it carries (an unreadable one is rejected by the fold: nothing to load).
      const carried = carriedEvent(event);
      return typeof carried === 'string' ? {} : rowKeys(carried);
    }
    default:
      return event.swapId
        ? {
            swap: {
              providerId: event.providerId,
              swapId: event.swapId,
              key: swapKey(event.providerId, event.swapId),
            },
          }
        : {};
  }
}
