import { partitionKeyOf } from '../events/keys.ts';
import type { SwapEvent, SwapEventOf } from '../events/types.ts';
import type { DeadLetterRow, JournalRow, Position, UndecodableMessage, WorkingSet } from './state.ts';
import { applied, rejected, type FoldDecision } from './decision.ts';

/**
 * Dead letters and the events parked behind them: an undecodable message parks its key; later events of
 * the key are journaled as parked and held, in order, until an operator retries or discards it. Folding
 * itself is the dispatcher's (`refold`), given as a parameter so this file owns only the parking rules.
 */

/** Folds an event at a position and returns its journal row (undefined when its id was seen). */
export type Refold = (ws: WorkingSet, event: SwapEvent, position: Position) => JournalRow | undefined;
/** Folds an event that is no longer held, returning its journal row. */
export type Release = (ws: WorkingSet, event: SwapEvent, position: Position) => JournalRow;

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

/**
 * The open dead letter of this key that an event at `position` must wait behind, if any. A swap's events
 * written before keys named the provider were keyed by the bare swapId: a dead letter under that old key
 * holds the swap's `swap:<provider>:<swapId>` events too (same partition; held events wait under the dead
 * letter's key).
 */
export function blockingDeadLetter(
  ws: WorkingSet,
  key: string,
  position: Position,
): DeadLetterRow | undefined {
  let first: DeadLetterRow | undefined;
  for (const dl of ws.deadLetters.values()) {
    if (
      dl &&
      dl.status === 'open' &&
      (dl.aggregateKey === key || dl.aggregateKey === partitionKeyOf(key)) &&
      dl.partition === position.partition &&
      dl.offset < position.offset
    ) {
      if (!first || dl.offset < first.offset) first = dl;
    }
  }
  return first;
}

/** Re-folds the events held behind a resolved dead letter, in order, up to the next open one. */
function releaseParked(ws: WorkingSet, key: string, release: Release): number {
  const held = (ws.parked.get(key) ?? []).sort((a, b) => (a.position.offset < b.position.offset ? -1 : 1));
  let released = 0;
  while (held.length > 0 && !blockingDeadLetter(ws, key, held[0]!.position)) {
    const { event, position } = held.shift()!;
    ws.journalUpdates.push(release(ws, event, position));
    released++;
  }
  return released;
}

export function resolveDeadLetter(
  ws: WorkingSet,
  event: SwapEventOf<'DeadLetterRetried'> | SwapEventOf<'DeadLetterDiscarded'>,
  refold: Refold,
  release: Release,
): FoldDecision {
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
    const row = refold(ws, input.event, position);
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
  const released = releaseParked(ws, dl.aggregateKey, release);
  const status = retried ? 'retried' : 'discarded';
  return applied(
    { deadLetter: ['open', status], released: [0, released] },
    `dead letter ${dl.deadLetterId} ${status} by ${p.operator}${p.reason ? `: ${p.reason}` : ''}`,
  );
}
