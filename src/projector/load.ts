import type pg from 'pg';
import { projection } from '../db/projection.ts';
import { readRows } from '../db/bulk.ts';
import type { SwapEvent } from '../events/types.ts';
import { partitionKeyOf, swapKey } from '../events/keys.ts';
import { inadmissible } from './admissible.ts';
import { deadLetterId, eventFromJournal, rowKeys } from './fold.ts';
import { WorkingSet, type JournalRow, type Position, type UndecodableMessage } from './state.ts';

export interface PositionedEvent {
  position: Position;
  event: SwapEvent;
  /** The message's W3C traceparent: kept on the queue row the event makes, never in the folded state. */
  traceParent?: string | null;
}

/** A message of the batch: a decoded event, or one that could not be decoded (a dead letter). */
export type BatchItem = PositionedEvent | { position: Position; undecodable: UndecodableMessage };

/** Decodes a dead letter's bytes again (a retry after a fix), or validates an operator's repaired event. */
export interface RetryDecoder {
  decode(bytes: Buffer): Promise<SwapEvent>;
  parseReplacement(json: string): SwapEvent;
}

const {
  swaps,
  swapRequests,
  quotes,
  reconciliationQueue,
  reconciliations,
  deadLetters,
  ledgerPostings,
  cases,
} = projection;

/**
 * Loads every row the batch may read: the rows its events name, open dead letters of its keys, and for a
 * dead letter being resolved, its row, what its retry brings and the events held behind it (decoding is
 * I/O, so it happens here, before the pure fold).
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function loadWorkingSet(
  client: pg.ClientBase,
  items: readonly BatchItem[],
  retry: RetryDecoder | undefined,
  /** Take the events as never journaled (FoldOptions.unseen): their ids are not looked up. */
  unseen = false,
): Promise<WorkingSet> {
  const ws = new WorkingSet();
  const events = items.flatMap((i) => ('event' in i ? [i.event] : []));
  const keys = new Set(
    items.flatMap((i) =>
      'event' in i
        ? inadmissible(i.event)
          ? []
          : [i.event.aggregateKey, partitionKeyOf(i.event.aggregateKey)] // an old bare-swapId dead letter too
        : [i.undecodable.key],
    ),
  );

  // Dead letters: open ones of the batch's keys, and the ones resolved by this batch.
  const resolving = events.flatMap((e) =>
    e.eventType === 'DeadLetterRetried' || e.eventType === 'DeadLetterDiscarded' ? [e] : [],
  );
  const dlRows = await client.query<{ dead_letter_id: string }>(
    `select dead_letter_id from dead_letters where (status = 'open' and aggregate_key = any($1::text[]))
     or dead_letter_id = any($2::text[])`,
    [[...keys], resolving.map((e) => e.payload.deadLetterId)],
  );
  for (const r of await readRows<typeof deadLetters.$inferSelect>(
    client,
    deadLetters,
    'deadLetterId',
    dlRows.rows.map((r) => r.dead_letter_id),
  )) {
    ws.deadLetters.set(r.deadLetterId, { ...r, offset: BigInt(r.offset) });
  }

  // A dead letter may be born and resolved in the same batch (replay reads a whole log at once).
  const bornHere = new Map(
    items.flatMap((i) =>
      'undecodable' in i
        ? [
            [
              deadLetterId(i.position),
              {
                aggregateKey: i.undecodable.key,
                valueBase64: i.undecodable.valueBase64,
                status: 'open',
                partition: i.position.partition,
              },
            ] as const,
          ]
        : [],
    ),
  );
  const touched: SwapEvent[] = [...events];
  for (const e of resolving) {
    const dl = ws.deadLetters.get(e.payload.deadLetterId) ?? bornHere.get(e.payload.deadLetterId);
    if (!dl || dl.status !== 'open') continue;
    if (e.eventType === 'DeadLetterRetried') {
      if (!retry) throw new Error('a dead letter retry needs a decoder');
      try {
        const replacement = e.payload.replacementEventJson;
        const event = replacement
          ? retry.parseReplacement(replacement)
          : await retry.decode(Buffer.from(dl.valueBase64, 'base64'));
        if (event.aggregateKey !== dl.aggregateKey) {
          throw new Error(
            `the event's key ${event.aggregateKey} is not the dead letter's key ${dl.aggregateKey}`,
          );
        }
        ws.retryInputs.set(e.payload.deadLetterId, { event });
        touched.push(event);
      } catch (err) {
        ws.retryInputs.set(e.payload.deadLetterId, { error: (err as Error).message });
      }
    }
    const held = await client.query(
      // Held under the dead letter's key: events of that key, and a swap's new-form keys behind an old bare
      // swapId key (swap:<provider>:<swapId>).
      `select * from event_journal where outcome = 'parked' and partition = $2
         and (aggregate_key = $1 or (aggregate_key like 'swap:%'
              and substr(aggregate_key, strpos(substr(aggregate_key, 6), ':') + 6) = $1))
       order by topic, partition, "offset"`,
      [dl.aggregateKey, dl.partition],
    );
    const parked = held.rows.map((row: Record<string, unknown>) =>
      eventFromJournal({
        eventId: row.event_id,
        topic: row.topic,
        partition: row.partition,
        offset: row.offset,
        eventType: row.event_type,
        swapId: row.swap_id,
        aggregateKey: row.aggregate_key,
        providerId: row.provider_id,
        source: row.source,
        occurredAt: row.occurred_at,
        recordedAt: row.recorded_at,
        payload: row.payload,
      } as JournalRow),
    );
    ws.parked.set(dl.aggregateKey, parked);
    touched.push(...parked.map((p) => p.event));
  }

  const swapIds = new Map<string, readonly [string, string]>();
  const requestIds = new Set<string>();
  const quoteRefs = new Set<string>();
  for (const e of touched) {
    if (inadmissible(e)) continue; // rejected by the fold whatever the state: its keys may not even be queryable
    const k = rowKeys(e);
    if (k.swap) swapIds.set(k.swap.key, [k.swap.providerId, k.swap.swapId]);
    if (k.requestId) requestIds.add(k.requestId);
    if (k.quoteRef) quoteRefs.add(k.quoteRef);
  }
  const ids = [...swapIds.values()];
  const SWAP = ['providerId', 'swapId'] as const;
  // One client runs one query at a time: these go one after another, one round trip each.
  const seen = unseen
    ? { rows: [] }
    : await client.query<{ event_id: string }>(
        'select event_id from event_journal where event_id = any($1::uuid[])',
        [touched.map((e) => e.eventId)],
      );
  const swapRows = await readRows<typeof swaps.$inferSelect>(client, swaps, SWAP, ids);
  const requestRows = await readRows<typeof swapRequests.$inferSelect>(client, swapRequests, 'requestId', [
    ...requestIds,
  ]);
  const quoteRows = await readRows<typeof quotes.$inferSelect>(client, quotes, 'quoteRef', [...quoteRefs]);
  const queueRows = await readRows<typeof reconciliationQueue.$inferSelect>(
    client,
    reconciliationQueue,
    SWAP,
    ids,
  );
  const reconRows = await readRows<typeof reconciliations.$inferSelect>(client, reconciliations, SWAP, ids);
  const caseRows = await readRows<typeof cases.$inferSelect>(client, cases, SWAP, ids);
  // The ledger postings of the batch's swaps: a completion or a correction builds on those in force.
  const postingRows = await readRows<typeof ledgerPostings.$inferSelect>(client, ledgerPostings, SWAP, ids);
  for (const r of seen.rows) ws.seenEventIds.add(r.event_id);
  // Where the batch's verdicts' events stand in the log (a primary-key probe each; few batches carry any).
  const basedOn = touched.flatMap((e) =>
    e.eventType === 'SwapReconciled' && !inadmissible(e) && UUID.test(e.payload.basedOnEventId)
      ? [e.payload.basedOnEventId]
      : [],
  );
  if (basedOn.length > 0) {
    const at = await client.query<{ event_id: string; offset: string }>(
      'select event_id, "offset" from event_journal where event_id = any($1::uuid[])',
      [basedOn],
    );
    for (const r of at.rows) ws.offsets.set(r.event_id, BigInt(r.offset));
  }
  const keep = <T>(map: Map<string, T>, stored: Set<string>, key: string, row: T) => {
    map.set(key, row);
    stored.add(key);
  };
  for (const r of swapRows) keep(ws.swaps, ws.stored.swaps, swapKey(r.providerId, r.swapId), r);
  for (const r of requestRows) keep(ws.requests, ws.stored.requests, r.requestId, r);
  for (const r of quoteRows) keep(ws.quotes, ws.stored.quotes, r.quoteRef, r);
  for (const r of queueRows) keep(ws.queue, ws.stored.queue, swapKey(r.providerId, r.swapId), r);
  for (const r of reconRows)
    keep(ws.reconciliations, ws.stored.reconciliations, swapKey(r.providerId, r.swapId), r);
  for (const r of caseRows) keep(ws.cases, ws.stored.cases, swapKey(r.providerId, r.swapId), r);
  for (const r of postingRows) {
    const key = swapKey(r.providerId, r.swapId);
    const list = ws.postings.get(key);
    if (list) list.push(r);
    else ws.postings.set(key, [r]);
  }
  return ws;
}
