// Over 400 lines on purpose: replay's life in one place (plan the end offsets, rebuild into a fresh schema,
// check it against the live one, promote under the projector's lock, list and drop), so that each step's
// guard sees the others' marks (the extent, the check) where they are written.
import { Worker } from 'node:worker_threads';
import v8 from 'node:v8';
import type { Kafka } from 'kafkajs';
import pg from 'pg';
import { uuidv7 } from '../events/ids.ts';
import type { EventCodec } from '../events/codec.ts';
import { assertIdentifier, connectClient, createPool } from '../db/client.ts';
import { migrateProjection } from '../db/migrate.ts';
import { withClient } from '../db/transaction.ts';
import { PROMOTE_LOCK } from '../projector/batch.ts';
import { stateChecksum, type StateChecksum } from '../projector/checksum.ts';
import { foldRebuildPart, type RebuildPartData } from '../projector/rebuild-part.ts';
import { finishRebuild, isUnfinishedRebuild, prepareRebuild } from '../projector/rebuild.ts';
import { ensureFinanceViews } from '../ledger/finance-views.ts';
import type { Logger } from '../observability/log.ts';

/** Where a replay stops: every partition's end, given end offsets (exclusive), or a point in time. */
export type ReplayUntil =
  { kind: 'end' } | { kind: 'offsets'; offsets: Map<number, bigint> } | { kind: 'time'; time: Date };

export interface ReplayProgress {
  done: number;
  total: number;
  eventsPerSecond: number;
  remainingSeconds: number | undefined;
}

export interface ReplayOptions {
  databaseUrl: string;
  kafka: Kafka;
  codec: EventCodec;
  topic: string;
  liveSchema: string;
  until?: ReplayUntil;
  /** Events folded per transaction. */
  batchEvents?: number;
  onProgress?: (p: ReplayProgress) => void;
  logger: Logger;
  /**
   * Folds the partitions in `workers` worker threads (each its own event loop, Kafka client and pool; the
   * partitions dealt round robin), made from these settings. Absent: one part, in this thread.
   */
  parallel?: { workers: number; kafkaBrokers: string[]; schemaRegistryUrl: string; clientId: string };
}

export interface ReplayResult {
  schema: string;
  events: number;
  endOffsets: Map<number, bigint>;
  rebuilt: StateChecksum;
  live: StateChecksum | undefined;
  equal: boolean;
  seconds: number;
  /**
   * Where the time went: folding the log (group join included), then the deferred index builds and the
   * checksums, which run side by side (each figure its own duration; the longer is the end phase's).
   */
  phases: { foldSeconds: number; finishSeconds: number; checksumSeconds: number };
}

/** `<live>_<tag>_<UTC timestamp>`: sortable, and recognisable by `replay list` and `replay drop`. */
export function derivedSchemaName(live: string, tag: 'replay' | 'prev', now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:TZ.]/g, '')
    .slice(0, 17);
  return assertIdentifier(`${live}_${tag}_${stamp}`);
}

/** Parses `--to-offset`: `N` (every partition) or `p:N,p:N` (the partitions named; the rest to their end). */
export function parseToOffset(text: string): ReplayUntil {
  const offsets = new Map<number, bigint>();
  if (/^\d+$/.test(text)) return { kind: 'offsets', offsets: new Map([[-1, BigInt(text)]]) };
  for (const part of text.split(',')) {
    const m = /^(\d+):(\d+)$/.exec(part.trim());
    if (!m) throw new Error(`--to-offset: "${part}" is not <partition>:<offset>`);
    offsets.set(Number(m[1]), BigInt(m[2]!));
  }
  return { kind: 'offsets', offsets };
}

async function endOffsets(kafka: Kafka, topic: string, until: ReplayUntil): Promise<Map<number, bigint>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const highs = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]));
    if (until.kind === 'end') return highs;
    if (until.kind === 'offsets') {
      const all = until.offsets.get(-1);
      return new Map(
        [...highs].map(([p, high]) => {
          const wanted = all ?? until.offsets.get(p) ?? high;
          return [p, wanted < high ? wanted : high];
        }),
      );
    }
    // The first offset stamped after the point in time is where each partition stops.
    const after = await admin.fetchTopicOffsetsByTimestamp(topic, until.time.getTime() + 1);
    return new Map(
      after.map((p) => {
        const high = highs.get(p.partition) ?? 0n;
        const o = BigInt(p.offset);
        return [p.partition, o < 0n || o > high ? high : o];
      }),
    );
  } finally {
    await admin.disconnect();
  }
}

async function schemaExists(client: pg.ClientBase, schema: string): Promise<boolean> {
  const r = await client.query('select 1 from information_schema.schemata where schema_name = $1', [schema]);
  return (r.rowCount ?? 0) > 0;
}

/**
 * Rebuilds every projected table from offset 0 into a fresh schema: the projector itself, in rebuild mode
 * (one engine: the same decode, dead-letter parking, fold and batch writer), stopping at the end offsets.
 * The fresh schema is bulk-loaded (src/projector/rebuild.ts): secondary indexes and the balance check
 * come back once at the end. Then checksums are compared with the live state. Memory stays bounded:
 * fetches are a few MiB and messages are folded as they are fetched.
 */
export async function replay(options: ReplayOptions): Promise<ReplayResult> {
  const started = Date.now();
  const { kafka, codec, topic, logger } = options;
  const until = options.until ?? { kind: 'end' };
  const ends = await endOffsets(kafka, topic, until);
  const total = [...ends.values()].reduce((a, b) => a + b, 0n);
  const schema = derivedSchemaName(options.liveSchema, 'replay');
  await migrateProjection(options.databaseUrl, schema);
  await markReplayExtent(options.databaseUrl, schema, until);
  // Above a fetch (at most 4 MiB a partition), so a fetch folds as one transaction instead of a full batch and
  // a remainder; the fetch size, not this cap, bounds resident memory (docs/benchmarks.md, replay batch size).
  const batchEvents = options.batchEvents ?? 20_000;
  let done = 0;
  const report = () => {
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    options.onProgress?.({
      done,
      total: Number(total),
      eventsPerSecond: Math.round(rate),
      remainingSeconds: rate > 0 ? Math.round((Number(total) - done) / rate) : undefined,
    });
  };
  const timer = setInterval(report, 1000);
  timer.unref();
  const pool = createPool(options.databaseUrl, {
    searchPath: schema,
    max: 3, // the finish and two checksums at once
    applicationName: 'swap-ledger-replay',
  });
  const phases = { foldSeconds: 0, finishSeconds: 0, checksumSeconds: 0 };
  let rebuilt: StateChecksum;
  let live: StateChecksum | undefined;
  try {
    await withClient(pool, (c) => prepareRebuild(c, schema));
    const parts = splitPartitions(ends, options.parallel?.workers ?? 1);
    if (parts.length <= 1 || !options.parallel) {
      await foldRebuildPart({
        kafka,
        codec,
        databaseUrl: options.databaseUrl,
        topic,
        schema,
        ends: parts[0]!,
        batchEvents,
        concurrency: 2,
        logger,
        onBatch: (events) => (done += events),
      });
    } else {
      const { kafkaBrokers, schemaRegistryUrl, clientId } = options.parallel;
      await foldInWorkers(
        parts.map((part) => ({
          kafkaBrokers,
          schemaRegistryUrl,
          clientId,
          databaseUrl: options.databaseUrl,
          topic,
          schema,
          ends: [...part].map(([p, end]) => [p, end.toString()]),
          batchEvents,
          concurrency: 2,
        })),
        (events) => (done += events),
      );
    }
    report();
    phases.foldSeconds = (Date.now() - started) / 1000;
    logger.info({ schema, events: done }, 'log folded; building the deferred indexes and checksumming');
    // Side by side, on two cores: the index builds sort, the checksums scan. Neither changes a row, and a
    // checksum reads the rows, not the indexes. A failed finish still fails the replay.
    const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
      const t = Date.now();
      const value = await f();
      return [value, (Date.now() - t) / 1000];
    };
    // Each waited for, a failed one too: nothing runs on once the replay returns or throws.
    let failure: unknown;
    const settled = <T>(p: Promise<T>) =>
      p.catch((e: unknown) => {
        failure ??= e;
        return undefined;
      });
    const [finished, rebuiltSum, liveSum] = await Promise.all([
      settled(timed(() => withClient(pool, (c) => finishRebuild(c, schema)))),
      settled(timed(() => withClient(pool, (c) => stateChecksum(c, schema)))),
      settled(
        timed(() =>
          withClient(pool, async (c) =>
            (await schemaExists(c, options.liveSchema)) ? stateChecksum(c, options.liveSchema) : undefined,
          ),
        ),
      ),
    ]);
    if (!finished || !rebuiltSum || !liveSum) throw failure;
    logger.info({ schema, indexes: finished[0].built }, 'deferred indexes built');
    [rebuilt, live] = [rebuiltSum[0], liveSum[0]];
    await withClient(pool, (c) => markReplayCheck(c, schema, rebuilt, live));
    phases.finishSeconds = finished[1];
    phases.checksumSeconds = Math.max(rebuiltSum[1], liveSum[1]);
  } finally {
    clearInterval(timer);
    await pool.end();
  }
  logger.info({ schema, events: done, seconds: (Date.now() - started) / 1000 }, 'replay finished');
  return {
    schema,
    events: done,
    endOffsets: ends,
    rebuilt,
    live,
    equal: live?.checksum === rebuilt.checksum,
    seconds: (Date.now() - started) / 1000,
    phases,
  };
}

/** The partitions dealt round robin into at most `count` parts (partitions with nothing to fold left out). */
export function splitPartitions(ends: ReadonlyMap<number, bigint>, count: number): Map<number, bigint>[] {
  const busy = [...ends].filter(([, end]) => end > 0n).sort(([a], [b]) => a - b);
  const parts = Array.from(
    { length: Math.max(1, Math.min(count, busy.length)) },
    () => new Map<number, bigint>(),
  );
  busy.forEach(([p, end], i) => parts[i % parts.length]!.set(p, end));
  return parts;
}

/**
 * Runs each part in a worker thread and waits for all; the first failure stops the others and is thrown.
 * Each worker's heap gets this thread's budget (REPLAY_HEAP_MB under `swap-ledger replay`).
 */
function foldInWorkers(parts: RebuildPartData[], onBatch: (events: number) => void): Promise<void> {
  const heapMb = Math.floor(v8.getHeapStatistics().heap_size_limit / 2 ** 20);
  const workers = parts.map(
    (part) =>
      new Worker(new URL('../projector/rebuild-worker.mjs', import.meta.url), {
        workerData: part,
        resourceLimits: { maxOldGenerationSizeMb: heapMb },
      }),
  );
  return new Promise<void>((resolve, reject) => {
    let running = workers.length;
    const fail = (e: Error) => {
      for (const w of workers) void w.terminate();
      reject(e);
    };
    const finished = new Set<Worker>();
    for (const w of workers) {
      w.on('message', (m: { kind: string; events?: number; message?: string; stack?: string }) => {
        if (m.kind === 'batch') onBatch(m.events!);
        else if (m.kind === 'failed') fail(Object.assign(new Error(m.message), { stack: m.stack }));
        else if (m.kind === 'done') {
          finished.add(w);
          if (--running === 0) resolve();
        }
      });
      w.on('error', fail);
      // A worker gone without saying done (its loop drained, or it exited) must not leave the replay waiting.
      w.on('exit', (code) => {
        if (!finished.has(w))
          fail(new Error(`a rebuild worker exited (code ${code}) before finishing its part`));
      });
    }
  });
}

const PARTIAL_MARK = 'swap-ledger replay: partial';

/**
 * A rebuilt schema says how far it was rebuilt, as its schema comment (no table, so no migration): a
 * schema stopped at --to-time or --to-offset lacks the log's tail, and `promote` refuses it unless forced.
 */
async function markReplayExtent(databaseUrl: string, schema: string, until: ReplayUntil): Promise<void> {
  const extent =
    until.kind === 'end'
      ? 'swap-ledger replay: complete'
      : until.kind === 'time'
        ? `${PARTIAL_MARK} (--to-time ${until.time.toISOString()})`
        : `${PARTIAL_MARK} (--to-offset ${[...until.offsets].map(([p, o]) => (p < 0 ? `${o}` : `${p}:${o}`)).join(',')})`;
  const client = await connectClient(databaseUrl);
  try {
    await setSchemaComment(client, schema, extent);
  } finally {
    await client.end();
  }
}

/** How far a rebuilt schema was rebuilt, when it was marked partial (undefined: complete or unmarked). */
export async function partialExtent(client: pg.ClientBase, schema: string): Promise<string | undefined> {
  const r = await client.query<{ c: string | null }>(
    `select obj_description(oid, 'pg_namespace') as c from pg_namespace where nspname = $1`,
    [schema],
  );
  const extent = (r.rows[0]?.c ?? '').split('\n')[0]!;
  return extent.startsWith(PARTIAL_MARK) ? extent : undefined;
}

const CHECK_MARK = 'swap-ledger replay check: ';

/** What a rebuild's end check said: its checksum against the live state's when the replay ended. */
export type ReplayCheck = 'EQUAL' | 'DIFFERENT' | 'NO_LIVE_SCHEMA';

async function schemaComment(client: pg.ClientBase, schema: string): Promise<string> {
  const r = await client.query<{ c: string | null }>(
    `select obj_description(oid, 'pg_namespace') as c from pg_namespace where nspname = $1`,
    [schema],
  );
  return r.rows[0]?.c ?? '';
}

async function setSchemaComment(client: pg.ClientBase, schema: string, text: string): Promise<void> {
  // COMMENT takes no bind parameters: the text is quoted by the server's own function.
  const quoted = (await client.query<{ q: string }>('select quote_literal($1) as q', [text])).rows[0]!.q;
  await client.query(`comment on schema ${assertIdentifier(schema)} is ${quoted}`);
}

/**
 * Records the end check in the rebuilt schema's comment, a line under its extent (no table, so no
 * migration and nothing in the state checksum): `replay promote` later refuses a DIFFERENT or unchecked one.
 */
async function markReplayCheck(
  client: pg.ClientBase,
  schema: string,
  rebuilt: StateChecksum,
  live: StateChecksum | undefined,
): Promise<void> {
  const check: ReplayCheck =
    live === undefined ? 'NO_LIVE_SCHEMA' : live.checksum === rebuilt.checksum ? 'EQUAL' : 'DIFFERENT';
  const lines = (await schemaComment(client, schema)).split('\n').filter((l) => !l.startsWith(CHECK_MARK));
  lines.push(`${CHECK_MARK}${check} (rebuilt ${rebuilt.checksum}, live ${live?.checksum ?? 'none'})`);
  await setSchemaComment(client, schema, lines.join('\n'));
}

/** The end check a rebuilt schema records, or undefined when it has none (never checked: an old rebuild). */
export async function replayCheckOf(client: pg.ClientBase, schema: string): Promise<ReplayCheck | undefined> {
  const line = (await schemaComment(client, schema)).split('\n').find((l) => l.startsWith(CHECK_MARK));
  const word = line?.slice(CHECK_MARK.length).split(' ')[0];
  return word === 'EQUAL' || word === 'DIFFERENT' || word === 'NO_LIVE_SCHEMA' ? word : undefined;
}

export class PromoteRefusedError extends Error {
  override name = 'PromoteRefusedError';
}

/** An operator's explicit override of the end check: who and why, audited. */
export interface PromoteForce {
  operator: string;
  reason: string;
}

export interface PromoteOptions {
  /** Promote a rebuild stopped at --to-time/--to-offset (the log's tail is missing). */
  allowPartial?: boolean;
  /** Promote a rebuild whose end check said DIFFERENT, or that records no check: logged at warn, and kept. */
  force?: PromoteForce;
  /** Where the forced promotion's audit line goes. */
  logger?: Logger;
}

/**
 * Makes `rebuilt` the live schema in one transaction: the live one is renamed to `<live>_prev_<time>` and
 * kept until `replay drop`; the finance views and grants are created again over the new live tables.
 * A schema rebuilt only up to a time or offset is refused unless `allowPartial` (the log's tail is missing).
 * A rebuild whose end check said DIFFERENT (or that records none, or was checked with no live schema while
 * one exists now) is refused unless `force` names the operator and the reason: the promotion is then logged
 * at warn with both, and the promoted schema's comment keeps them.
 */
export async function promote(
  databaseUrl: string,
  live: string,
  rebuilt: string,
  options: PromoteOptions = {},
): Promise<{ previous: string; check: ReplayCheck | undefined; forced: boolean }> {
  assertIdentifier(live);
  assertIdentifier(rebuilt);
  if (live === rebuilt) throw new Error(`${rebuilt} is already the live schema`);
  const client = await connectClient(databaseUrl);
  try {
    await client.query('begin');
    await client.query('select pg_advisory_xact_lock($1)', [PROMOTE_LOCK]);
    if (!(await isProjectionSchema(client, rebuilt)))
      throw new Error(`${rebuilt} is not a projection schema`);
    if (await isUnfinishedRebuild(client, rebuilt))
      throw new PromoteRefusedError(
        `${rebuilt} is a rebuild that never finished (its indexes and ledger balance check are missing): ` +
          'drop it and replay again',
      );
    const partial = await partialExtent(client, rebuilt);
    if (partial !== undefined && !options.allowPartial)
      throw new PromoteRefusedError(
        `${rebuilt} was rebuilt only part of the log (${partial.slice(PARTIAL_MARK.length).trim()}): ` +
          'promoting it would drop every later event; rebuild to the end, or pass --allow-partial',
      );
    const check = await replayCheckOf(client, rebuilt);
    const liveExists = await schemaExists(client, live);
    const checkedOk = check === 'EQUAL' || (check === 'NO_LIVE_SCHEMA' && !liveExists);
    const force = options.force;
    if (!checkedOk) {
      const said =
        check === undefined
          ? 'records no end check (an unchecked rebuild)'
          : check === 'NO_LIVE_SCHEMA'
            ? `was checked when there was no live schema, and ${live} exists now`
            : 'differs from the live state it was checked against (DIFFERENT)';
      if (!force || force.operator.trim() === '' || force.reason.trim() === '')
        throw new PromoteRefusedError(
          `${rebuilt} ${said}: promoting it would replace the live state with another; inspect it, and if it ` +
            'is the right state, promote it on purpose with --force --reason <why> --by <operator> (audited)',
        );
    }
    const previous = derivedSchemaName(live, 'prev');
    if (liveExists) await client.query(`alter schema ${live} rename to ${previous}`);
    await client.query(`alter schema ${rebuilt} rename to ${live}`);
    await ensureFinanceViews(client, live);
    const forced = !checkedOk && force !== undefined;
    if (forced) {
      const audit = {
        schema: rebuilt,
        live,
        previous,
        check: check ?? 'unchecked',
        operator: force.operator.trim(),
        reason: force.reason.trim(),
      };
      // Kept with the promoted schema, and logged before the commit: no forced promotion goes unaudited.
      await setSchemaComment(
        client,
        live,
        `${await schemaComment(client, live)}\nswap-ledger replay promote --force: ${JSON.stringify({ ...audit, at: new Date().toISOString() })}`,
      );
      options.logger?.warn(audit, 'replay promote --force: a rebuild that did not check EQUAL made live');
    }
    await client.query('commit');
    // Committed: the promotion stands whatever follows. Statistics are an optimisation (autovacuum gathers
    // them later), so a failure here is not the promotion's.
    await gatherStatistics(client, live).catch(() => {});
    return { previous, check, forced };
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  } finally {
    await client.end();
  }
}

/**
 * Planner statistics for a promoted schema's tables: a rebuild does not wait for them, and the live
 * projector's first batches should not run on an unanalyzed schema until autovacuum gets to it.
 */
async function gatherStatistics(client: pg.ClientBase, schema: string): Promise<void> {
  const tables = await client.query<{ tablename: string }>(
    'select tablename from pg_tables where schemaname = $1',
    [schema],
  );
  for (const { tablename } of tables.rows)
    await client.query(`analyze ${schema}.${client.escapeIdentifier(tablename)}`);
}

async function isProjectionSchema(client: pg.ClientBase, schema: string): Promise<boolean> {
  const r = await client.query(
    `select 1 from information_schema.tables where table_schema = $1 and table_name = 'projector_checkpoints'`,
    [schema],
  );
  return (r.rowCount ?? 0) > 0;
}

/** Projection schemas beside the live one: rebuilt (`_replay_`) and previous (`_prev_`) ones. */
export async function listProjectionSchemas(databaseUrl: string, live: string): Promise<string[]> {
  const client = await connectClient(databaseUrl);
  try {
    const r = await client.query<{ table_schema: string }>(
      `select table_schema from information_schema.tables where table_name = 'projector_checkpoints'
       and (table_schema = $1 or table_schema like $1 || '\\_replay\\_%' or table_schema like $1 || '\\_prev\\_%')
       order by table_schema`,
      [live],
    );
    return r.rows.map((row) => row.table_schema);
  } finally {
    await client.end();
  }
}

/** Drops a rebuilt or previous projection schema; never the live one. */
export async function dropProjectionSchema(databaseUrl: string, live: string, schema: string): Promise<void> {
  assertIdentifier(schema);
  if (schema === live) throw new Error(`${schema} is the live schema; it is never dropped`);
  if (!(await listProjectionSchemas(databaseUrl, live)).includes(schema)) {
    throw new Error(`${schema} is not a rebuilt or previous projection schema of ${live}`);
  }
  const client = await connectClient(databaseUrl);
  try {
    await client.query(`drop schema ${schema} cascade`);
  } finally {
    await client.end();
  }
}
