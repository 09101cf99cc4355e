import type pg from 'pg';
import { projection } from '../db/client.ts';
import { deleteRows, readRows, writeRows } from '../db/bulk.ts';
import type { SwapEvent } from '../events/types.ts';
import { foldEvent, rowKeys } from './fold.ts';
import { WorkingSet, type JournalRow, type Position } from './state.ts';

export interface PositionedEvent {
  position: Position;
  event: SwapEvent;
}

export type BatchResult =
  | { ok: true; journal: JournalRow[]; duplicates: number; nextOffset: bigint }
  /** The checkpoint was not where this member expected: another member moved it. Nothing was written. */
  | { ok: false; storedNextOffset: bigint };

const {
  swaps,
  swapRequests,
  quotes,
  reconciliationQueue,
  reconciliations,
  eventJournal,
  projectorCheckpoints,
} = projection;

async function loadWorkingSet(client: pg.ClientBase, events: readonly SwapEvent[]): Promise<WorkingSet> {
  const ws = new WorkingSet();
  const swapIds = new Set<string>();
  const requestIds = new Set<string>();
  const quoteRefs = new Set<string>();
  for (const e of events) {
    const k = rowKeys(e);
    if (k.swapId) swapIds.add(k.swapId);
    if (k.requestId) requestIds.add(k.requestId);
    if (k.quoteRef) quoteRefs.add(k.quoteRef);
  }
  const ids = [...swapIds];
  // One client runs one query at a time: these go one after another, one round trip each.
  const seen = await client.query<{ event_id: string }>(
    'select event_id from event_journal where event_id = any($1::uuid[])',
    [events.map((e) => e.eventId)],
  );
  const swapRows = await readRows<typeof swaps.$inferSelect>(client, swaps, 'swapId', ids);
  const requestRows = await readRows<typeof swapRequests.$inferSelect>(client, swapRequests, 'requestId', [
    ...requestIds,
  ]);
  const quoteRows = await readRows<typeof quotes.$inferSelect>(client, quotes, 'quoteRef', [...quoteRefs]);
  const queueRows = await readRows<typeof reconciliationQueue.$inferSelect>(
    client,
    reconciliationQueue,
    'swapId',
    ids,
  );
  const reconRows = await readRows<typeof reconciliations.$inferSelect>(
    client,
    reconciliations,
    'swapId',
    ids,
  );
  for (const r of seen.rows) ws.seenEventIds.add(r.event_id);
  for (const r of swapRows) ws.swaps.set(r.swapId, r);
  for (const r of requestRows) ws.requests.set(r.requestId, r);
  for (const r of quoteRows) ws.quotes.set(r.quoteRef, r);
  for (const r of queueRows) ws.queue.set(r.swapId, r);
  for (const r of reconRows) ws.reconciliations.set(r.swapId, r);
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

/** Writes the folded batch. Journal first: the final-status trigger looks up applied corrections there. */
export async function writeFold(
  client: pg.ClientBase,
  ws: WorkingSet,
  journal: readonly JournalRow[],
  midBatch?: () => void | Promise<void>,
): Promise<void> {
  await writeRows(client, eventJournal, journal, 'error');
  await midBatch?.();
  const s = dirtyRows(ws.swaps, ws.dirty.swaps);
  await writeRows(client, swaps, s.upsert, { update: ['swapId'] });
  await writeRows(client, swapRequests, dirtyRows(ws.requests, ws.dirty.requests).upsert, {
    update: ['requestId'],
  });
  await writeRows(client, quotes, dirtyRows(ws.quotes, ws.dirty.quotes).upsert, { update: ['quoteRef'] });
  const q = dirtyRows(ws.queue, ws.dirty.queue);
  await deleteRows(client, reconciliationQueue, 'swapId', q.remove);
  await writeRows(client, reconciliationQueue, q.upsert, { update: ['swapId'] });
  const r = dirtyRows(ws.reconciliations, ws.dirty.reconciliations);
  await writeRows(client, reconciliations, r.upsert, { update: ['swapId'] });
}

/**
 * Folds a run of consecutive events of one partition in one transaction together with the partition's
 * checkpoint. The checkpoint moves by compare-and-set first, which also locks it: a member that lost the
 * partition (or raced another) finds it moved, writes nothing, and learns where it stands.
 */
export async function projectBatch(
  client: pg.ClientBase,
  topic: string,
  partition: number,
  expectedNextOffset: bigint,
  events: readonly PositionedEvent[],
  hooks: { beforeCommit?: () => void | Promise<void>; midBatch?: () => void | Promise<void> } = {},
): Promise<BatchResult> {
  const last = events.at(-1);
  if (!last) throw new Error('projectBatch needs at least one event');
  const nextOffset = last.position.offset + 1n;
  await client.query('begin');
  try {
    const cas = await client.query(
      'update projector_checkpoints set next_offset = $4 where topic = $1 and partition = $2 and next_offset = $3',
      [topic, partition, expectedNextOffset.toString(), nextOffset.toString()],
    );
    if (cas.rowCount !== 1) {
      await client.query('rollback');
      return { ok: false, storedNextOffset: await readCheckpoint(client, topic, partition) };
    }
    const ws = await loadWorkingSet(
      client,
      events.map((e) => e.event),
    );
    const journal: JournalRow[] = [];
    let duplicates = 0;
    for (const { event, position } of events) {
      const row = foldEvent(ws, event, position);
      if (row) journal.push(row);
      else duplicates++;
    }
    await writeFold(client, ws, journal, hooks.midBatch);
    await hooks.beforeCommit?.();
    await client.query('commit');
    return { ok: true, journal, duplicates, nextOffset };
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  }
}

/** The partition's stored position, creating it at 0 the first time. */
export async function readCheckpoint(
  client: pg.ClientBase,
  topic: string,
  partition: number,
): Promise<bigint> {
  await client.query(
    'insert into projector_checkpoints (topic, partition, next_offset) values ($1, $2, 0) on conflict do nothing',
    [topic, partition],
  );
  const r = await client.query<{ next_offset: string }>(
    'select next_offset from projector_checkpoints where topic = $1 and partition = $2',
    [topic, partition],
  );
  return BigInt(r.rows[0]!.next_offset);
}

export { projectorCheckpoints };
