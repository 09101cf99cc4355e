import type pg from 'pg';
import { projection } from '../db/client.ts';
import { copyRows, deleteRows, readRows, writeRows } from '../db/bulk.ts';
import type { SwapEvent } from '../events/types.ts';
import { deadLetterId, eventFromJournal, foldEvent, foldUndecodable, journalRow, rowKeys } from './fold.ts';
import { partitionKeyOf, swapKey } from '../events/keys.ts';
import { inadmissible } from './admissible.ts';
import { WorkingSet, type JournalRow, type Position, type UndecodableMessage } from './state.ts';

export interface PositionedEvent {
  position: Position;
  event: SwapEvent;
  /** The message's W3C traceparent: kept on the queue row the event makes, never in the folded state. */
  traceParent?: string | null;
}

/** A message of the batch: a decoded event, or one that could not be decoded (a dead letter). */
export type BatchItem = PositionedEvent | { position: Position; undecodable: UndecodableMessage };

/** The advisory lock a batch holds shared and a promotion (ops/replay.ts) exclusively: no batch straddles it. */
export const PROMOTE_LOCK = 0x51ed6e2;

/** Decodes a dead letter's bytes again (a retry after a fix), or validates an operator's repaired event. */
export interface RetryDecoder {
  decode(bytes: Buffer): Promise<SwapEvent>;
  parseReplacement(json: string): SwapEvent;
}

export type BatchResult =
  | {
      ok: true;
      journal: JournalRow[];
      duplicates: number;
      nextOffset: bigint;
      deadLetters: string[];
      /** Events whose effects the database refused: journaled as rejected, the partition went on. */
      refusedByDatabase: { eventId: string; reason: string }[];
    }
  /** The checkpoint was not where this member expected: another member moved it. Nothing was written. */
  | { ok: false; storedNextOffset: bigint };

const {
  swaps,
  swapRequests,
  quotes,
  reconciliationQueue,
  reconciliations,
  reconciliationHistory,
  statusConflicts,
  eventJournal,
  projectorCheckpoints,
  deadLetters,
  ledgerPostings,
} = projection;

/**
 * Loads every row the batch may read: the rows its events name, open dead letters of its keys, and for a
 * dead letter being resolved, its row, what its retry brings and the events held behind it (decoding is
 * I/O, so it happens here, before the pure fold).
 */
async function loadWorkingSet(
  client: pg.ClientBase,
  items: readonly BatchItem[],
  retry: RetryDecoder | undefined,
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
  const seen = await client.query<{ event_id: string }>(
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
  // The ledger postings of the batch's swaps: a completion or a correction builds on those in force.
  const postingRows = await readRows<typeof ledgerPostings.$inferSelect>(client, ledgerPostings, SWAP, ids);
  for (const r of seen.rows) ws.seenEventIds.add(r.event_id);
  for (const r of swapRows) ws.swaps.set(swapKey(r.providerId, r.swapId), r);
  for (const r of requestRows) ws.requests.set(r.requestId, r);
  for (const r of quoteRows) ws.quotes.set(r.quoteRef, r);
  for (const r of queueRows) ws.queue.set(swapKey(r.providerId, r.swapId), r);
  for (const r of reconRows) ws.reconciliations.set(swapKey(r.providerId, r.swapId), r);
  for (const r of postingRows) {
    const key = swapKey(r.providerId, r.swapId);
    const list = ws.postings.get(key);
    if (list) list.push(r);
    else ws.postings.set(key, [r]);
  }
  return ws;
}

function dirtyRows<T>(map: Map<string, T | undefined>, keys: Set<string>): { upsert: T[]; remove: string[] } {
  const upsert: T[] = [];
  const remove: string[] = [];
  for (const k of keys) {
    const row = map.get(k);
    if (row === undefined) remove.push(k);
    else upsert.push(row);
  }
  return { upsert, remove };
}

/** [providerId, swapId] of a swap key (swap:<providerId>:<swapId>; provider ids hold no ':'). */
function swapIdsOf(key: string): [string, string] {
  const sep = key.indexOf(':', 5);
  return [key.slice(5, sep), key.slice(sep + 1)];
}

/** Writes the folded batch. Journal first: the final-status trigger looks up applied corrections there. */
export async function writeFold(
  client: pg.ClientBase,
  ws: WorkingSet,
  journal: readonly JournalRow[],
  midBatch?: () => void | Promise<void>,
): Promise<void> {
  await copyRows(client, eventJournal, [...journal, ...ws.extraJournal]);
  await midBatch?.();
  await writeRows(client, eventJournal, ws.journalUpdates, { update: ['eventId'] });
  await writeRows(client, deadLetters, dirtyRows(ws.deadLetters, ws.dirty.deadLetters).upsert, {
    update: ['deadLetterId'],
  });
  const s = dirtyRows(ws.swaps, ws.dirty.swaps);
  await writeRows(client, swaps, s.upsert, { update: ['providerId', 'swapId'] });
  await writeRows(client, swapRequests, dirtyRows(ws.requests, ws.dirty.requests).upsert, {
    update: ['requestId'],
  });
  await writeRows(client, quotes, dirtyRows(ws.quotes, ws.dirty.quotes).upsert, { update: ['quoteRef'] });
  const q = dirtyRows(ws.queue, ws.dirty.queue);
  await deleteRows(client, reconciliationQueue, ['providerId', 'swapId'], q.remove.map(swapIdsOf));
  await writeRows(client, reconciliationQueue, q.upsert, { update: ['providerId', 'swapId'] });
  const r = dirtyRows(ws.reconciliations, ws.dirty.reconciliations);
  await writeRows(client, reconciliations, r.upsert, { update: ['providerId', 'swapId'] });
  // Append-only tables go in by COPY, the cheapest insert; a duplicate key fails it (23505) like an insert.
  await copyRows(client, reconciliationHistory, ws.newVerdicts);
  await copyRows(client, statusConflicts, ws.newConflicts);
  // Postings are only ever inserted, all of the batch in one statement (the balance trigger checks per
  // statement, COPY included); a conflict would be a bug, never a silent overwrite.
  await copyRows(client, ledgerPostings, ws.newPostings);
}

/**
 * Errors of one event's effects, not of the connection or the server: a value the database refuses (data
 * exception 22xxx, integrity 23xxx, program limit 54xxx, a trigger's RAISE P0001) or a fold that throws.
 * Such an event is journaled as rejected and the partition goes on; any other error retries the batch.
 */
export function isEventLevelError(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return /^(22|23|54|P0|42804)/.test(code);
  // No SQLSTATE: a connection-level error (a socket, a timeout) is transient; a plain JS error is the fold's.
  return (
    !(e as { errno?: unknown })?.errno &&
    !(e as { syscall?: unknown })?.syscall &&
    e instanceof Error &&
    !/connection|terminat|timeout|ECONN/i.test(e.message)
  );
}

const describeError = (e: unknown) => {
  const err = e as { code?: string; message?: string; detail?: string };
  return `${err.code ? `${err.code} ` : ''}${String(err.message ?? e).slice(0, 400)}${err.detail ? ` (${err.detail.slice(0, 200)})` : ''}`;
};

type Hooks = { beforeCommit?: () => void | Promise<void>; midBatch?: () => void | Promise<void> };

async function foldItems(
  client: pg.ClientBase,
  items: readonly BatchItem[],
  retry: RetryDecoder | undefined,
  midBatch?: () => void | Promise<void>,
): Promise<{ journal: JournalRow[]; duplicates: number; deadLetters: string[] }> {
  const ws = await loadWorkingSet(client, items, retry);
  const journal: JournalRow[] = [];
  let duplicates = 0;
  for (const item of items) {
    if ('undecodable' in item) {
      foldUndecodable(ws, item.undecodable);
      continue;
    }
    const row = foldEvent(ws, item.event, item.position);
    if (row) {
      journal.push(row);
      if (item.traceParent) keepTraceParent(ws, item.event, item.traceParent);
    } else duplicates++;
  }
  await writeFold(client, ws, journal, midBatch);
  return { journal, duplicates, deadLetters: [...ws.dirty.deadLetters] };
}

/**
 * Stamps the queue row this event just made with the message's trace context, so the reconciler's span
 * joins the trace of the request that caused it. Outside the pure fold: the state a replay rebuilds is
 * the same whatever the headers (the state checksum leaves trace_parent out).
 */
function keepTraceParent(ws: WorkingSet, event: SwapEvent, traceParent: string): void {
  if (!event.swapId) return;
  const key = swapKey(event.providerId, event.swapId);
  const queued = ws.queue.get(key);
  if (queued?.queuedByEventId === event.eventId) ws.queue.set(key, { ...queued, traceParent });
}

/**
 * Folds a run of consecutive events of one partition in one transaction together with the partition's
 * checkpoint. The checkpoint moves by compare-and-set first, which also locks it: a member that lost the
 * partition (or raced another) finds it moved, writes nothing, and learns where it stands.
 *
 * An event that folds but cannot be written (isEventLevelError) never halts the partition: the batch is
 * done again one event at a time, each behind a savepoint, and the event whose effects the database
 * refuses is journaled as rejected with the database's reason (`refusedByDatabase`), the rest applied.
 */
export async function projectBatch(
  client: pg.ClientBase,
  topic: string,
  partition: number,
  expectedNextOffset: bigint,
  items: readonly BatchItem[],
  hooks: Hooks = {},
  retry?: RetryDecoder,
): Promise<BatchResult> {
  const last = items.at(-1);
  if (!last) throw new Error('projectBatch needs at least one event');
  const nextOffset = last.position.offset + 1n;
  if (!Number.isSafeInteger(partition)) throw new Error(`partition ${partition} is not an integer`);
  // One round trip for the three (a multi-statement text takes no parameters: the values are literals,
  // the topic escaped, the offsets bigints).
  const beginText =
    `begin; select pg_advisory_xact_lock_shared(${PROMOTE_LOCK}); ` +
    `update projector_checkpoints set next_offset = ${nextOffset} where topic = ${client.escapeLiteral(topic)} ` +
    `and partition = ${partition} and next_offset = ${expectedNextOffset}`;
  const begin = async (): Promise<boolean> => {
    const results = (await client.query(beginText)) as unknown as pg.QueryResult[];
    return results.at(-1)?.rowCount === 1;
  };
  try {
    if (!(await begin())) {
      await client.query('rollback');
      return { ok: false, storedNextOffset: await readCheckpoint(client, topic, partition) };
    }
    let folded: Awaited<ReturnType<typeof foldItems>>;
    const refusedByDatabase: { eventId: string; reason: string }[] = [];
    try {
      folded = await foldItems(client, items, retry, hooks.midBatch);
    } catch (e) {
      if (!isEventLevelError(e)) throw e;
      await client.query('rollback');
      if (!(await begin())) {
        await client.query('rollback');
        return { ok: false, storedNextOffset: await readCheckpoint(client, topic, partition) };
      }
      folded = { journal: [], duplicates: 0, deadLetters: [] };
      for (const item of items) {
        await client.query('savepoint one_event');
        try {
          const r = await foldItems(client, [item], retry);
          folded.journal.push(...r.journal);
          folded.duplicates += r.duplicates;
          folded.deadLetters.push(...r.deadLetters);
          await client.query('release savepoint one_event');
        } catch (err) {
          if (!isEventLevelError(err) || !('event' in item)) throw err;
          await client.query('rollback to savepoint one_event');
          const reason = `the database refused the event's effects: ${describeError(err)}`;
          const row = journalRow(item.event, item.position, { outcome: 'rejected', reason });
          await copyRows(client, eventJournal, [row]);
          folded.journal.push(row);
          refusedByDatabase.push({ eventId: item.event.eventId, reason });
        }
      }
    }
    await hooks.beforeCommit?.();
    await client.query('commit');
    return { ok: true, ...folded, nextOffset, refusedByDatabase };
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  }
}

/** The partition's stored position, creating it at 0 the first time (one round trip: read once per fetch). */
export async function readCheckpoint(
  client: pg.ClientBase,
  topic: string,
  partition: number,
): Promise<bigint> {
  // A CTE's insert is not visible to its sibling select: exactly one of the two returns the row.
  const r = await client.query<{ next_offset: string }>({
    name: 'projector_read_checkpoint',
    text: `with created as (
             insert into projector_checkpoints (topic, partition, next_offset) values ($1, $2, 0)
             on conflict do nothing returning next_offset)
           select next_offset from created
           union all select next_offset from projector_checkpoints where topic = $1 and partition = $2`,
    values: [topic, partition],
  });
  return BigInt(r.rows[0]!.next_offset);
}

export { projectorCheckpoints };
