// Over 400 lines on purpose: the batch writer is one transaction (the shared promotion lock, the reads, the
// fold, every table's rows, the journal, the checkpoint by compare-and-set), and the error rules that decide
// whether a failure is the event's (journaled) or the batch's (retried) belong with it.
import type pg from 'pg';
import { projection } from '../db/projection.ts';
import type { PgTable } from 'drizzle-orm/pg-core';
import {
  copyRows,
  openCopy,
  renderCopy,
  renderDelete,
  renderUpsert,
  runWrite,
  type RenderedWrite,
  type RowKey,
} from '../db/bulk.ts';
import type { SwapEvent } from '../events/types.ts';
import { EventDecodeError } from '../events/codec.ts';
import { foldEvent, foldUndecodable, journalRow } from './fold.ts';
import { loadWorkingSet, type BatchItem, type PositionedEvent, type RetryDecoder } from './load.ts';
import { swapKey } from '../events/keys.ts';
import { WorkingSet, type JournalRow } from './state.ts';

/** The advisory lock a batch holds shared and a promotion (ops/replay.ts) exclusively: no batch straddles it. */
export const PROMOTE_LOCK = 0x51ed6e2;

export type BatchResult =
  | {
      ok: true;
      journal: JournalRow[];
      duplicates: number;
      nextOffset: bigint;
      /**
       * Events journaled as rejected after their batch was redone event by event: the database refused
       * their effects (`database`), or folding them threw (`fold_error`: a bug, with its stack for the log).
       */
      refusedByDatabase: Refusal[];
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
  chainObservations,
  statements,
  statementLines,
  periodEvents,
  invoices,
  invoiceLines,
  cases,
  chainClaims,
} = projection;

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

/**
 * New rows from this many on go in by COPY, apart from the upsert of the stored ones: COPY skips the
 * upsert's speculative insertion and array unpacking. Below it one statement is cheaper than two round
 * trips (a live batch under load brings a few rows a table).
 */
const COPY_NEW_ROWS_FROM = 100;

/**
 * A table's dirty rows as its writes: an upsert, and a COPY of the new rows (keys the load did not find)
 * when there are enough of them. A key taken for new that exists would fail the COPY (23505) and the batch
 * be done again event by event, as for any refused write: never a silent overwrite.
 */
function upsertWrites(
  table: PgTable,
  map: Map<string, object | undefined>,
  dirty: Set<string>,
  stored: Set<string>,
  key: string[],
): FoldWrite[] {
  const existing: object[] = [];
  const added: object[] = [];
  for (const k of dirty) {
    const row = map.get(k);
    if (row !== undefined) (stored.has(k) ? existing : added).push(row);
  }
  if (added.length < COPY_NEW_ROWS_FROM)
    return [{ kind: 'upsert', table, rows: [...existing, ...added], key }];
  return [
    { kind: 'upsert', table, rows: existing, key },
    { kind: 'copy', table, rows: added },
  ];
}

/** [providerId, swapId] of a swap key (swap:<providerId>:<swapId>; provider ids hold no ':'). */
function swapIdsOf(key: string): [string, string] {
  const sep = key.indexOf(':', 5);
  return [key.slice(5, sep), key.slice(sep + 1)];
}

/** One write of a folded batch, described: run as it comes (runFoldWrite) or rendered ahead (renderFoldWrite). */
type FoldWrite =
  | { kind: 'copy'; table: PgTable; rows: readonly object[] }
  /** key: the columns an upsert updates by; 'nothing': insert where absent, never overwrite. */
  | { kind: 'upsert'; table: PgTable; rows: readonly object[]; key: string[] | 'nothing' }
  | { kind: 'delete'; table: PgTable; key: string[]; keys: RowKey[] };

/**
 * The folded batch's writes but its journal (which goes first: the final-status trigger looks up applied
 * corrections there), in the order they run.
 */
function foldWrites(ws: WorkingSet): FoldWrite[] {
  const { dirty, stored } = ws;
  const swapKey = ['providerId', 'swapId'];
  return [
    { kind: 'upsert', table: eventJournal, rows: ws.journalUpdates, key: ['eventId'] },
    {
      kind: 'upsert',
      table: deadLetters,
      rows: dirtyRows(ws.deadLetters, dirty.deadLetters).upsert,
      key: ['deadLetterId'],
    },
    ...upsertWrites(swaps, ws.swaps, dirty.swaps, stored.swaps, swapKey),
    ...upsertWrites(swapRequests, ws.requests, dirty.requests, stored.requests, ['requestId']),
    ...upsertWrites(quotes, ws.quotes, dirty.quotes, stored.quotes, ['quoteRef']),
    {
      kind: 'delete',
      table: reconciliationQueue,
      key: swapKey,
      keys: dirtyRows(ws.queue, dirty.queue).remove.map(swapIdsOf),
    },
    ...upsertWrites(reconciliationQueue, ws.queue, dirty.queue, stored.queue, swapKey),
    ...upsertWrites(
      reconciliations,
      ws.reconciliations,
      dirty.reconciliations,
      stored.reconciliations,
      swapKey,
    ),
    // Append-only tables go in by COPY, the cheapest insert; a duplicate key fails it (23505) like an insert.
    { kind: 'copy', table: reconciliationHistory, rows: ws.newVerdicts },
    ...upsertWrites(cases, ws.cases, dirty.cases, stored.cases, swapKey),
    { kind: 'copy', table: statusConflicts, rows: ws.newConflicts },
    // Postings are only ever inserted, all of the batch in one statement (the balance trigger checks per
    // statement, COPY included); a conflict would be a bug, never a silent overwrite.
    { kind: 'copy', table: ledgerPostings, rows: ws.newPostings },
    // The latest observation of each (swap, role, txid) of the batch replaces the stored one.
    {
      kind: 'upsert',
      table: chainObservations,
      rows: [...ws.chainObservations.values()],
      key: ['providerId', 'swapId', 'role', 'txid'],
    },
    // Month end: statements, their lines and period closes are only ever inserted.
    { kind: 'copy', table: statements, rows: ws.newStatements },
    { kind: 'copy', table: statementLines, rows: ws.newStatementLines },
    { kind: 'copy', table: periodEvents, rows: ws.newPeriodEvents },
    { kind: 'copy', table: invoices, rows: ws.newInvoices },
    { kind: 'copy', table: invoiceLines, rows: ws.newInvoiceLines },
    // A claim is written once: the stored one (an earlier batch's) keeps its first event.
    { kind: 'upsert', table: chainClaims, rows: [...ws.chainClaims.values()], key: 'nothing' },
  ];
}

const renderFoldWrite = (w: FoldWrite): RenderedWrite | undefined =>
  w.kind === 'copy'
    ? renderCopy(w.table, w.rows)
    : w.kind === 'upsert'
      ? renderUpsert(w.table, w.rows, w.key === 'nothing' ? 'nothing' : { update: w.key })
      : renderDelete(w.table, w.key, w.keys);

/** Runs a write rendered only now; a COPY's text is rendered as the socket takes it (copyRows). */
const runFoldWrite = (client: pg.ClientBase, w: FoldWrite): Promise<void> =>
  w.kind === 'copy' ? copyRows(client, w.table, w.rows) : runWrite(client, renderFoldWrite(w));

/** An event journaled as rejected after its batch was redone event by event, and why. */
export interface Refusal {
  eventId: string;
  reason: string;
  kind: 'database' | 'fold_error';
  /** The JavaScript stack of a fold error (for the log; never journaled: it names code, not the event). */
  stack?: string;
}

/**
 * A failure that is not the event's and may pass: the schema registry or the database not answering (a
 * dead letter's retry could not be decoded for now). Never journaled: the batch is tried again, so the
 * live run decides what a replay, with everything answering, decides.
 */
export class TransientError extends Error {
  override name = 'TransientError';
}

/**
 * A JavaScript error thrown while folding one event: a bug of the fold (deterministic: a replay meets it
 * at the same event), journaled as rejected with kind `fold_error`, never as a refusal by the database.
 */
export class FoldError extends Error {
  override name = 'FoldError';
  constructor(
    readonly eventId: string,
    readonly original: unknown,
  ) {
    super(original instanceof Error ? `${original.name}: ${original.message}` : String(original));
    if (original instanceof Error && original.stack) this.stack = original.stack;
  }
}

/**
 * Errors of one event, not of the connection or the server: a value the database refuses (data
 * exception 22xxx, integrity 23xxx, program limit 54xxx, a trigger's RAISE P0001) or a fold that throws.
 * Such an event is journaled as rejected and the partition goes on; any other error retries the batch.
 */
export function isEventLevelError(e: unknown): boolean {
  if (e instanceof TransientError) return false;
  if (e instanceof FoldError) return true;
  const code = (e as { code?: unknown })?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return /^(22|23|54|P0|42804)/.test(code);
  // No SQLSTATE: a connection-level error (a socket, a timeout) is transient; a plain JS error is the fold's.
  return (
    !(e as { errno?: unknown })?.errno &&
    !(e as { syscall?: unknown })?.syscall &&
    e instanceof Error &&
    !/connection|terminat|timeout|ECONN|ETIMEDOUT|EPIPE|socket|not queryable/i.test(e.message)
  );
}

const describeError = (e: unknown) => {
  const err = e as { code?: string; message?: string; detail?: string };
  const text = `${err.code ? `${err.code} ` : ''}${String(err.message ?? e).slice(0, 400)}${err.detail ? ` (${err.detail.slice(0, 200)})` : ''}`;
  return text.replaceAll('\u0000', '\ufffd'); // a reason goes into a journal row: never a U+0000
};

/**
 * Writes a rejected event's journal row. The codec bounds its envelope (ids, times) and the row keeps its
 * texts storable (U+0000 shown as U+FFFD); should Postgres still refuse the row, it is written once more
 * without the payload and changes, the reason saying so (the event's bytes stay in Kafka): a row the
 * journal cannot take must not fail the batch forever.
 */
async function journalRejected(
  client: pg.ClientBase,
  event: SwapEvent,
  position: PositionedEvent['position'],
  reason: string,
): Promise<JournalRow> {
  const row = journalRow(event, position, { outcome: 'rejected', reason });
  await client.query('savepoint rejected_row');
  try {
    await copyRows(client, eventJournal, [row]);
    await client.query('release savepoint rejected_row');
    return row;
  } catch (e) {
    if (!isEventLevelError(e)) throw e;
    await client.query('rollback to savepoint rejected_row');
    const bare: JournalRow = {
      ...row,
      providerId: row.providerId.replaceAll('\u0000', '\ufffd'),
      payload: {},
      changes: null,
      reason: `${reason} (its payload could not be journaled: ${describeError(e)})`,
    };
    await copyRows(client, eventJournal, [bare]);
    return bare;
  }
}

/**
 * What an event-level error says about its event: a SQLSTATE is the database's refusal; anything else
 * (a FoldError, or a JavaScript error of the batch's load or writes) is a bug of the projector, said as
 * such (kind `fold_error`), never as "the database refused".
 */
function refusalOf(eventId: string, err: unknown): Refusal {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code))
    return {
      eventId,
      kind: 'database',
      reason: `the database refused the event's effects: ${describeError(err)}`,
    };
  const e = err instanceof FoldError ? err : new FoldError(eventId, err);
  const where =
    err instanceof FoldError ? 'the fold failed on the event' : 'the projector failed on the event';
  return {
    eventId,
    kind: 'fold_error',
    reason: `${where} (a bug, not a refusal by the database): ${e.message.slice(0, 400).replaceAll('\u0000', '\ufffd')}`,
    ...(e.stack ? { stack: e.stack } : {}),
  };
}

type Hooks = { beforeCommit?: () => void | Promise<void>; midBatch?: () => void | Promise<void> };

export interface FoldOptions {
  /**
   * The events are taken as never journaled before (a rebuild reading its log once, from a checkpoint
   * kept with the state): their ids are not looked up in the journal, one index probe each, which cost
   * about a seventh of Postgres's CPU an event in a replay. An event journaled before is still never
   * folded twice: its journal row would break the journal's primary key, which refuses the batch, and
   * the batch is folded again with the lookup.
   */
  unseen?: boolean;
  /**
   * Stream the journal to Postgres during the fold (default): the live path, where the event loop would
   * otherwise wait on Postgres. A rebuild, whose two fold threads and Postgres keep both cores busy, writes
   * it after the fold as one COPY: streaming measured no gain there (docs/benchmarks.md).
   */
  streamJournal?: boolean;
}

/** Events folded between two sends of the streamed journal (a few hundred KiB of COPY text). */
const FOLD_CHUNK = 500;

/**
 * Folds runs of events in one working set, one write per table. Each run is one partition's, in offset
 * order; partitions own disjoint rows, so the state is the one each run folded alone would give.
 */
async function foldRuns(
  client: pg.ClientBase,
  runs: readonly (readonly BatchItem[])[],
  retry: RetryDecoder | undefined,
  midBatch?: () => void | Promise<void>,
  options: FoldOptions = {},
): Promise<{ journal: JournalRow[]; duplicates: number }[]> {
  // A dead letter's retry that cannot be decoded because the registry does not answer must not be
  // journaled as "still cannot be applied" (a replay, with the registry up, would apply it): noted here,
  // it fails the batch as transient, and the batch is tried again.
  let transient: unknown;
  const decoder: RetryDecoder | undefined = retry && {
    parseReplacement: (json) => retry.parseReplacement(json),
    decode: (bytes) =>
      retry.decode(bytes).catch((e: unknown) => {
        if (!(e instanceof EventDecodeError)) transient ??= e;
        throw e;
      }),
  };
  const ws = await loadWorkingSet(
    client,
    runs.length === 1 ? runs[0]! : runs.flat(),
    decoder,
    options.unseen ?? false,
  );
  if (transient !== undefined)
    throw new TransientError(
      `a dead letter's retry could not be decoded for now (the batch is tried again): ${describeError(transient)}`,
      { cause: transient },
    );
  // Live, the journal (the batch's largest write) is loaded by Postgres while the fold goes on: its rows
  // are streamed as they are folded, with a turn of the event loop every FOLD_CHUNK events to send them,
  // and the other writes are rendered while Postgres finishes it. A rebuild (streamJournal: false) writes
  // the journal after the fold and renders each write as it runs, holding less at once.
  const streamed = options.streamJournal ?? true;
  const journalCopy = streamed ? openCopy<JournalRow>(client, eventJournal) : undefined;
  const folded: { journal: JournalRow[]; duplicates: number }[] = [];
  let rendered: (RenderedWrite | undefined)[] = [];
  try {
    let sinceSent = 0;
    for (const items of runs) {
      const journal: JournalRow[] = [];
      let duplicates = 0;
      for (const item of items) {
        if (journalCopy && ++sinceSent === FOLD_CHUNK) {
          sinceSent = 0;
          await journalCopy.sent();
        }
        if ('undecodable' in item) {
          foldUndecodable(ws, item.undecodable);
          continue;
        }
        let row: JournalRow | undefined;
        try {
          row = foldEvent(ws, item.event, item.position);
        } catch (e) {
          throw new FoldError(item.event.eventId, e);
        }
        if (row) {
          journal.push(row);
          journalCopy?.push(row);
          if (item.traceParent) keepTraceParent(ws, item.event, item.traceParent);
        } else duplicates++;
      }
      folded.push({ journal, duplicates });
    }
    if (journalCopy) {
      for (const row of ws.extraJournal) journalCopy.push(row);
      rendered = foldWrites(ws).map(renderFoldWrite);
    }
  } catch (e) {
    await journalCopy?.abort(e as Error);
    throw e;
  }
  if (journalCopy) {
    await journalCopy.end();
    await midBatch?.();
    for (const write of rendered) await runWrite(client, write);
  } else {
    await copyRows(client, eventJournal, [...folded.flatMap((f) => f.journal), ...ws.extraJournal]);
    await midBatch?.();
    for (const write of foldWrites(ws)) await runFoldWrite(client, write);
  }
  return folded;
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
  options: FoldOptions = {},
): Promise<BatchResult> {
  const last = items.at(-1);
  if (!last) throw new Error('projectBatch needs at least one event');
  const nextOffset = last.position.offset + 1n;
  const begin = () =>
    beginMoving(client, topic, [{ partition, expectedNextOffset, nextOffset }]).then((moved) => moved[0]!);
  try {
    if (!(await begin())) {
      await client.query('rollback');
      return { ok: false, storedNextOffset: await readCheckpoint(client, topic, partition) };
    }
    let folded: { journal: JournalRow[]; duplicates: number };
    const refusedByDatabase: Refusal[] = [];
    try {
      folded = (await foldRuns(client, [items], retry, hooks.midBatch, options))[0]!;
    } catch (e) {
      if (!isEventLevelError(e)) throw e;
      await client.query('rollback');
      // An event journaled before, or one whose effects were refused: again, with the ids looked up.
      if (options.unseen)
        return projectBatch(client, topic, partition, expectedNextOffset, items, hooks, retry);
      if (!(await begin())) {
        await client.query('rollback');
        return { ok: false, storedNextOffset: await readCheckpoint(client, topic, partition) };
      }
      folded = { journal: [], duplicates: 0 };
      for (const item of items) {
        await client.query('savepoint one_event');
        try {
          const r = (await foldRuns(client, [[item]], retry))[0]!;
          folded.journal.push(...r.journal);
          folded.duplicates += r.duplicates;
          await client.query('release savepoint one_event');
        } catch (err) {
          if (!isEventLevelError(err) || !('event' in item)) throw err;
          await client.query('rollback to savepoint one_event');
          const refusal = refusalOf(item.event.eventId, err);
          const row = await journalRejected(client, item.event, item.position, refusal.reason);
          folded.journal.push(row);
          refusedByDatabase.push(refusal);
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

/**
 * Opens the batch's transaction: the promotion lock held shared, then each partition's checkpoint moved by
 * compare-and-set, which also locks it. One round trip for all (a multi-statement text takes no
 * parameters: the values are literals, the topic escaped, the offsets bigints). Says which moved.
 */
async function beginMoving(
  client: pg.ClientBase,
  topic: string,
  moves: readonly { partition: number; expectedNextOffset: bigint; nextOffset: bigint }[],
): Promise<boolean[]> {
  let text = `begin; select pg_advisory_xact_lock_shared(${PROMOTE_LOCK})`;
  for (const m of moves) {
    if (!Number.isSafeInteger(m.partition)) throw new Error(`partition ${m.partition} is not an integer`);
    text +=
      `; update projector_checkpoints set next_offset = ${m.nextOffset} where topic = ${client.escapeLiteral(topic)} ` +
      `and partition = ${m.partition} and next_offset = ${m.expectedNextOffset}`;
  }
  const results = (await client.query(text)) as unknown as pg.QueryResult[];
  return results.slice(2).map((r) => r.rowCount === 1);
}

/** One partition's run of consecutive events, from the offset its checkpoint is expected at. */
export interface PartitionRun {
  partition: number;
  expectedNextOffset: bigint;
  items: readonly BatchItem[];
}

/**
 * Folds several partitions' runs in one transaction (a group commit): under a steady load a fetch brings
 * a few events for each partition, and a transaction each spent the fold's time on round trips and
 * commits. The checkpoints move together, in partition order (two members never wait on each other in
 * opposite orders). Off the happy path (a checkpoint another member moved, an event whose effects the
 * database refuses) it rolls back and folds each run alone with projectBatch, which handles those.
 */
export async function projectBatches(
  client: pg.ClientBase,
  topic: string,
  runs: readonly PartitionRun[],
  hooks: Hooks = {},
  retry?: RetryDecoder,
  options: FoldOptions = {},
): Promise<BatchResult[]> {
  const alone = async () => {
    const results: BatchResult[] = [];
    for (const r of runs)
      results.push(
        await projectBatch(client, topic, r.partition, r.expectedNextOffset, r.items, hooks, retry, options),
      );
    return results;
  };
  if (runs.length <= 1) return alone();
  const nextOffsets = runs.map((r) => {
    const last = r.items.at(-1);
    if (!last) throw new Error('projectBatches needs at least one event in each run');
    return last.position.offset + 1n;
  });
  if (new Set(runs.map((r) => r.partition)).size !== runs.length)
    throw new Error('projectBatches takes one run per partition');
  const order = runs.map((_, i) => i).sort((a, b) => runs[a]!.partition - runs[b]!.partition);
  let folded: { journal: JournalRow[]; duplicates: number }[];
  try {
    const moved = await beginMoving(
      client,
      topic,
      order.map((i) => ({ ...runs[i]!, nextOffset: nextOffsets[i]! })),
    );
    if (moved.some((m) => !m)) {
      await client.query('rollback');
      return alone();
    }
    try {
      const inOrder = await foldRuns(
        client,
        order.map((i) => runs[i]!.items),
        retry,
        hooks.midBatch,
        options,
      );
      folded = [];
      order.forEach((i, k) => (folded[i] = inOrder[k]!));
    } catch (e) {
      if (!isEventLevelError(e)) throw e;
      await client.query('rollback');
      return alone();
    }
    await hooks.beforeCommit?.();
    await client.query('commit');
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  }
  return runs.map((_, i) => ({
    ok: true,
    ...folded[i]!,
    nextOffset: nextOffsets[i]!,
    refusedByDatabase: [],
  }));
}

/** The partition's stored position, creating it at 0 the first time (one round trip; the live projector reads it once per group join). */
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
export type { BatchItem, PositionedEvent, RetryDecoder } from './load.ts';
