import { expect } from 'vitest';
import type { SwapEvent } from '../events/types.ts';
import { swapKey } from '../events/keys.ts';
import { sumsByCurrency } from '../ledger/postings.ts';
import { foldEvent } from '../projector/fold.ts';
import {
  WorkingSet,
  type Changes,
  type JournalOutcome,
  type JournalRow,
  type PostingRow,
  type QueueRow,
  type ReconciliationHistoryRow,
  type ReconciliationRow,
  type StatusConflictRow,
  type SwapRow,
} from '../projector/state.ts';

/**
 * Fold specifications in Emmett's given/when/then shape: the `given` events are folded first, then the
 * `when` event, and `then` checks what that one event decided and changed. Each spec owns its clock: every
 * event is stamped (occurredAt = recordedAt) one second after the previous one when handed to given/when,
 * and folded at the next offset of one partition, so a spec reads and replays the same way every time.
 * Invariants checked by every `then`: the journal row is storable (no U+0000), an event that is rejected,
 * a no-op or parked changes nothing, a contradiction never changes the swap, and every entry balances.
 */

export const SPEC_T0 = Date.UTC(2026, 10, 1, 12, 0, 0);

export interface Expected {
  outcome: JournalOutcome;
  /** A part of the journal row's reason. */
  reason?: string;
  changes?: Changes;
  /** The `when` event's swap: a partial row, or 'unchanged' (version included). */
  swap?: Partial<SwapRow> | 'unchanged';
  /** Its reconciliation queue entry: a partial row, null for none, or 'unchanged'. */
  queue?: Partial<QueueRow> | null | 'unchanged';
  /** The status conflicts the `when` event recorded, in order (exactly these). */
  conflicts?: Partial<StatusConflictRow>[];
  /** The ledger entries the `when` event posted, by kind, in order (e.g. ['final']; [] for none). */
  postings?: string[];
  /** The swap's latest verdict (null for none), and the verdict history rows the event added. */
  reconciliation?: Partial<ReconciliationRow> | null;
  verdicts?: Partial<ReconciliationHistoryRow>[];
}

export interface SpecResult {
  ws: WorkingSet;
  /** The `when` event's journal row. */
  row: JournalRow;
  /** The journal rows of the `given` events (undefined for a redelivered id). */
  givenRows: (JournalRow | undefined)[];
  /** What the `when` event added. */
  postings: PostingRow[];
  conflicts: StatusConflictRow[];
}

/** The working set without its seen ids, as a comparable copy. */
function snapshot(ws: WorkingSet): unknown {
  const { seenEventIds: _seen, ...state } = ws;
  return structuredClone(state);
}

const entryKinds = (rows: PostingRow[]) => [
  ...new Map(rows.map((r) => [`${r.entryId}:${r.entryKind}`, r.entryKind])).values(),
];

export class FoldSpecification {
  private tick = 0;
  private readonly givenEvents: SwapEvent[] = [];
  private whenEvent: SwapEvent | undefined;

  /** The spec's next instant (ISO-8601), also usable for payload times. */
  at(): string {
    return new Date(SPEC_T0 + this.tick++ * 1000).toISOString();
  }

  private stamp(event: SwapEvent): SwapEvent {
    event.occurredAt = event.recordedAt = this.at();
    return event;
  }

  given(...events: SwapEvent[]): this {
    this.givenEvents.push(...events.map((e) => this.stamp(e)));
    return this;
  }

  when(event: SwapEvent): this {
    this.whenEvent = this.stamp(event);
    return this;
  }

  then(expected: Expected): SpecResult {
    const event = this.whenEvent;
    if (!event) throw new Error('a fold specification needs a when(event) before then()');
    const ws = new WorkingSet();
    const position = (offset: number) => ({ topic: 'swap-events', partition: 0, offset: BigInt(offset) });
    const givenRows = this.givenEvents.map((e, i) => foldEvent(ws, e, position(i)));
    const key = event.swapId === null ? undefined : swapKey(event.providerId, event.swapId);
    const swapBefore = key ? structuredClone(ws.swaps.get(key)) : undefined;
    const queueBefore = key ? structuredClone(ws.queue.get(key)) : undefined;
    const before = snapshot(ws);
    const [postingsFrom, conflictsFrom, verdictsFrom] = [
      ws.newPostings.length,
      ws.newConflicts.length,
      ws.newVerdicts.length,
    ];

    const row = foldEvent(ws, event, position(this.givenEvents.length));
    if (!row) throw new Error(`the when event ${event.eventId} was folded before (a redelivery)`);
    const postings = ws.newPostings.slice(postingsFrom);
    const conflicts = ws.newConflicts.slice(conflictsFrom);
    const verdicts = ws.newVerdicts.slice(verdictsFrom);
    const swap = key ? ws.swaps.get(key) : undefined;

    expect(row.outcome, `outcome (reason: ${row.reason})`).toBe(expected.outcome);
    if (expected.reason !== undefined) expect(row.reason).toContain(expected.reason);
    if (expected.changes !== undefined) expect(row.changes).toEqual(expected.changes);
    if (expected.swap === 'unchanged') expect(swap).toEqual(swapBefore);
    else if (expected.swap !== undefined) expect(swap).toMatchObject(expected.swap);
    const queue = key ? ws.queue.get(key) : undefined;
    if (expected.queue === 'unchanged') expect(queue).toEqual(queueBefore);
    else if (expected.queue === null) expect(queue).toBeUndefined();
    else if (expected.queue !== undefined) expect(queue).toMatchObject(expected.queue);
    if (expected.conflicts !== undefined) expect(conflicts).toMatchObject(expected.conflicts);
    if (expected.postings !== undefined) expect(entryKinds(postings)).toEqual(expected.postings);
    if (expected.reconciliation === null) expect(key && ws.reconciliations.get(key)).toBeFalsy();
    else if (expected.reconciliation !== undefined)
      expect(key && ws.reconciliations.get(key)).toMatchObject(expected.reconciliation);
    if (expected.verdicts !== undefined) expect(verdicts).toMatchObject(expected.verdicts);

    // Invariants of every fold step.
    const stored = JSON.stringify([row.payload, row.changes, row.reason, row.swapId, row.aggregateKey]);
    expect(stored, 'journal row must be storable').not.toContain('\\u0000');
    if (row.outcome === 'rejected' || row.outcome === 'noop') expect(snapshot(ws)).toEqual(before);
    if (row.outcome === 'contradicted')
      expect(swap, 'a contradiction never changes the swap').toEqual(swapBefore);
    for (const [currency, sum] of sumsByCurrency(postings))
      expect(sum, `the event's postings balance in ${currency}`).toBe('0');
    return { ws, row, givenRows, postings, conflicts };
  }

  /** The event is rejected with a reason containing `reasonPart`, and nothing changes. */
  thenRejected(reasonPart: string): SpecResult {
    return this.then({ outcome: 'rejected', reason: reasonPart, swap: 'unchanged', postings: [] });
  }
}

export const spec = (): FoldSpecification => new FoldSpecification();
