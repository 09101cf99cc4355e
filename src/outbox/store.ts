import type pg from 'pg';
import { inTransaction } from '../db/transaction.ts';
import type { SwapEvent } from '../events/types.ts';
import { keepTraceContext, type KeptTraceContext } from '../observability/tracing.ts';

/** A pool or a client inside the caller's transaction. */
export type Db = pg.Pool | pg.ClientBase;

/** One row of platform.outbox as the operators see it. */
export interface OutboxEntry {
  readonly seq: string;
  readonly topic: string;
  readonly aggregateKey: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly providerId: string;
  readonly reason: string;
  readonly createdAt: string;
  readonly publishedAt: string | null;
}

/**
 * Appends events to the outbox, in order, each with the next `seq`. One insert per event (in one
 * transaction when `db` is a client inside one) so the sequence follows the given order exactly.
 * An event id already in the outbox is left as it is (a retried write of the same event). Each row
 * keeps the active trace context (nulls when untraced), which the relay sends as its headers.
 */
export async function insertOutbox(
  db: Db,
  topic: string,
  events: readonly SwapEvent[],
  reason: string,
): Promise<void> {
  const { traceParent, traceState } = keepTraceContext();
  for (const e of events) {
    await db.query(
      `insert into platform.outbox (topic, aggregate_key, event_id, event_type, provider_id, event, reason, trace_parent, trace_state)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9) on conflict (event_id) do nothing`,
      [
        topic,
        e.aggregateKey,
        e.eventId,
        e.eventType,
        e.providerId,
        JSON.stringify(e),
        reason.slice(0, 500),
        traceParent,
        traceState,
      ],
    );
  }
}

/** The trace context an outbox row kept, as the appender takes it. */
export function keptTraceOf(row: {
  trace_parent: string | null;
  trace_state: string | null;
}): KeptTraceContext | undefined {
  return row.trace_parent ? { traceParent: row.trace_parent, traceState: row.trace_state } : undefined;
}

/** Which of `keys` still have unpublished outbox rows for `topic`. */
export async function keysWithPendingRows(
  db: Db,
  topic: string,
  keys: readonly string[],
): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const r = await db.query<{ aggregate_key: string }>({
    name: 'outbox-pending-keys',
    text: `select distinct aggregate_key from platform.outbox
           where published_at is null and aggregate_key = any($1::text[]) and topic = $2`,
    values: [[...new Set(keys)], topic],
  });
  return new Set(r.rows.map((row) => row.aggregate_key));
}

/** Every unpublished seq of these keys in `topic` (whoever holds a lock on them), ascending per key. */
export async function pendingSeqsByKey(
  db: Db,
  topic: string,
  keys: readonly string[],
): Promise<Map<string, bigint[]>> {
  const r = await db.query<{ aggregate_key: string; seqs: string[] }>(
    `select aggregate_key, array_agg(seq order by seq)::text[] as seqs from platform.outbox
     where published_at is null and aggregate_key = any($1::text[]) and topic = $2 group by aggregate_key`,
    [[...new Set(keys)], topic],
  );
  return new Map(r.rows.map((row) => [row.aggregate_key, row.seqs.map((s) => BigInt(s))]));
}

export async function markPublished(db: Db, seqs: readonly bigint[]): Promise<void> {
  if (seqs.length === 0) return;
  await db.query(`update platform.outbox set published_at = now() where seq = any($1::bigint[])`, [
    seqs.map(String),
  ]);
}

export async function listOutbox(
  db: Db,
  options: { all?: boolean; limit?: number; topic?: string } = {},
): Promise<OutboxEntry[]> {
  const r = await db.query<{
    seq_text: string;
    topic: string;
    aggregate_key: string;
    event_id: string;
    event_type: string;
    provider_id: string;
    reason: string;
    created_at: string;
    published_at: string | null;
  }>(
    `select seq::text as seq_text, topic, aggregate_key, event_id, event_type, provider_id, reason, created_at, published_at
     from platform.outbox where ($2::text is null or topic = $2) ${options.all ? '' : 'and published_at is null'}
     order by seq ${options.all ? 'desc' : 'asc'} limit $1`,
    [options.limit ?? 100, options.topic ?? null],
  );
  return r.rows.map((row) => ({
    seq: row.seq_text,
    topic: row.topic,
    aggregateKey: row.aggregate_key,
    eventId: row.event_id,
    eventType: row.event_type,
    providerId: row.provider_id,
    reason: row.reason,
    createdAt: row.created_at,
    publishedAt: row.published_at,
  }));
}

export async function countPending(db: Db, topic: string): Promise<number> {
  const r = await db.query<{ n: number }>(
    `select count(*)::int as n from platform.outbox where published_at is null and topic = $1`,
    [topic],
  );
  return r.rows[0]!.n;
}
