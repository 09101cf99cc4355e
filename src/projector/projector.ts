// Over 400 lines on purpose: the consumer-group member's kafkajs callbacks (assignment, each batch, the
// group commit, pauses behind dead letters) and its rebuild mode share one member's state; the fold, the
// batch writer and the rebuild's bulk load live apart (fold.ts, batch.ts, rebuild.ts).
import { Partitioners } from 'kafkajs';
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage, PartitionAssigner, Producer } from 'kafkajs';
import type pg from 'pg';
import { EventDecodeError, type EventCodec } from '../events/codec.ts';
import { settledWithin } from '../lifecycle/stop.ts';
import type { Logger } from '../observability/log.ts';
import { traceParentOf } from '../observability/tracing.ts';
import {
  projectBatches,
  readCheckpoint,
  type BatchItem,
  type BatchResult,
  type PartitionRun,
  type Refusal,
  type RetryDecoder,
} from './batch.ts';
import { GroupCommit } from './group-commit.ts';
import { deadLetterId } from './fold.ts';
import { traceFolded } from './tracing.ts';
import type { JournalRow, Position } from './state.ts';

export interface ProjectorOptions {
  kafka: Kafka;
  codec: EventCodec;
  /** A pool whose search_path is the projection schema to fold into. */
  pool: pg.Pool;
  topic: string;
  /** Where undecodable messages are copied, with the reason and their origin in headers. */
  deadLetterTopic: string;
  groupId: string;
  logger: Logger;
  /** Most events folded in one transaction (memory stays bounded whatever the backlog). */
  maxBatchEvents?: number;
  /** Fault points for crash tests: called inside the transaction. */
  hooks?: { midBatch?: () => void | Promise<void>; beforeCommit?: () => void | Promise<void> };
  /** Called after each committed batch, with the journal rows it wrote. */
  onBatch?: (info: {
    partition: number;
    events: number;
    nextOffset: bigint;
    journal: readonly JournalRow[];
    seconds: number;
  }) => void;
  /** Called with the partitions of the topic this member holds, on each group join (and [] on stop). */
  onAssigned?: (partitions: number[]) => void;
  /**
   * Partitions folded at once. Live, their runs are folded together (group commit, at most FOLD_LANES
   * transactions at a time); in a rebuild each in its own transaction and connection (they own disjoint rows).
   */
  partitionsConsumedConcurrently?: number;
  /**
   * Rebuild mode (replay): fold each partition up to its end offset (exclusive) and stop there; `caughtUp()`
   * resolves when every partition has reached it. Dead letters are not published again (the live run did),
   * no Kafka offset is committed (the group is thrown away), and the first failure ends the rebuild.
   */
  rebuild?: { until: ReadonlyMap<number, bigint>; assigner?: PartitionAssigner };
}

/**
 * Live group commits in flight at once, each on its own connection: a run handed in late, or a backlog past
 * maxBatchEvents, folds beside the fold under way instead of waiting for it.
 */
const FOLD_LANES = 2;

/** How long a stop waits for the consumer to leave its group, and for the producer to close (`up` waits 15 s). */
const CONSUMER_LEAVE_MS = 6000;
const PRODUCER_CLOSE_MS = 2000;

/**
 * Consumer-group member that folds the events topic into Postgres. Postgres, not Kafka, holds the
 * position: each batch commits its state and its checkpoint together; Kafka's committed offset is only a
 * hint for where to fetch after a restart. Messages below the checkpoint are skipped; a fetch that
 * starts above it (a gap) seeks back to it.
 */
export class Projector {
  private consumer: Consumer | undefined;
  private producer: Producer | undefined;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly maxBatch: number;
  private readonly rebuilding: RebuildProgress | undefined;
  private readonly groupCommit: GroupCommit | undefined;
  /**
   * Each partition's checkpoint as this member last committed or read it: a batch needs no read of its
   * own. A stale one is harmless: the batch's compare-and-set fails, writes nothing and says where it is.
   */
  private readonly checkpoints = new Map<number, bigint>();

  constructor(private readonly options: ProjectorOptions) {
    this.maxBatch = options.maxBatchEvents ?? 2000;
    if (options.rebuild) this.rebuilding = new RebuildProgress(options.rebuild.until);
    else
      this.groupCommit = new GroupCommit((runs) => this.foldOnConnection(runs), {
        maxEvents: this.maxBatch,
        lanes: FOLD_LANES,
        maxWaitMs: 20,
      });
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.options.codec.register();
    if (this.rebuilding) {
      const client = await this.options.pool.connect();
      try {
        // Only partitions with something to fold: a checkpoint row is state, and the live run has none
        // for a partition it never received a message of.
        for (const [partition, end] of this.options.rebuild!.until) {
          if (end === 0n) continue;
          this.rebuilding.reached(
            partition,
            await readCheckpoint(client, this.options.topic, partition),
            end,
          );
        }
      } finally {
        client.release();
      }
      if (this.rebuilding.done) return; // nothing to fold (an empty log, or a rebuild already complete)
    } else {
      this.producer = this.options.kafka.producer({
        // kafkajs' default (murmur2, as Java's); named so that kafkajs does not warn at every start.
        createPartitioner: Partitioners.DefaultPartitioner,
        idempotent: true,
        maxInFlightRequests: 1,
        // Unlimited retries, as idempotence needs (kafkajs warned at start that limited ones "may invalidate
        // EoS guarantees"); the batch's own retry bounds how long a dead letter may take.
        retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 1000 },
      });
      await this.producer.connect();
    }
    await this.startConsumer();
  }

  /** Rebuild mode: resolves once every partition is folded up to its end offset; rejects on the first failure. */
  caughtUp(): Promise<void> {
    if (!this.rebuilding) throw new Error('caughtUp() is for a projector in rebuild mode');
    return this.rebuilding.promise;
  }

  private async startConsumer(): Promise<void> {
    const { kafka, topic, groupId, logger } = this.options;
    const consumer = kafka.consumer({
      groupId,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
      // Fetches stay a few MiB whatever the backlog: resident memory does not grow with the log.
      maxBytesPerPartition: 4 * 1024 * 1024,
      maxBytes: 16 * 1024 * 1024,
      // A fetch waits for 16 KiB or 20 ms. Under load the wait only lengthens the fold cycle (each ms of it
      // becomes events the next fold writes before any is visible); under a light load fetching from the first
      // byte costs more CPU an event. docs/architecture.md and docs/benchmarks.md give the measurements.
      minBytes: 16 * 1024,
      maxWaitTimeInMs: 20,
      retry: this.rebuilding
        ? { retries: 5 }
        : { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 200, maxRetryTime: 2000 },
      ...(this.options.rebuild?.assigner ? { partitionAssigners: [this.options.rebuild.assigner] } : {}),
    });
    this.consumer = consumer;
    // kafkajs gives up on some errors (e.g. a long broker outage): a projector must not stay silent.
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (this.rebuilding) return this.rebuilding.fail(payload.error);
      if (payload.restart || this.stopped) return;
      logger.error(
        { err: payload.error },
        'consumer crashed and kafkajs will not restart it; restarting in 2 s',
      );
      this.restartTimer = setTimeout(() => void this.restartConsumer(), 2000);
    });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      this.checkpoints.clear(); // partitions held before may have moved on under another member
      this.options.onAssigned?.(payload.memberAssignment[topic] ?? []);
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      // Postgres holds the position; Kafka's committed offset is only where to fetch after a restart, so
      // kafkajs commits the resolved offsets on its own, once a second, not a round trip per batch. A
      // rebuild's throwaway group commits nothing.
      autoCommit: !this.rebuilding,
      autoCommitInterval: 1000,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 1,
      eachBatch: this.rebuilding
        ? (payload) => this.onBatch(payload).catch((e: unknown) => this.rebuilding!.fail(e))
        : (payload) => this.onBatch(payload),
    });
  }

  private async restartConsumer(): Promise<void> {
    if (this.stopped) return;
    await this.consumer?.disconnect().catch(() => {});
    try {
      await this.startConsumer();
      this.options.logger.info('consumer restarted');
    } catch (e) {
      this.options.logger.error({ err: e }, 'consumer restart failed; trying again in 5 s');
      this.restartTimer = setTimeout(() => void this.restartConsumer(), 5000);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const { consumer, producer } = this;
    this.consumer = undefined;
    this.producer = undefined;
    // kafkajs' disconnect can wait on a group that is rebalancing for as long as the rebalance takes (seen:
    // a member restarted after a SIGKILL never left). Postgres holds the position, so leaving without the
    // group's goodbye loses nothing: the coordinator moves the partitions after the session timeout.
    if (!(await settledWithin(consumer?.disconnect(), CONSUMER_LEAVE_MS)))
      this.options.logger.warn(
        { waitedMs: CONSUMER_LEAVE_MS },
        'the consumer did not leave its group in time; stopping without it (the group reassigns its partitions after the session timeout)',
      );
    await settledWithin(producer?.disconnect(), PRODUCER_CLOSE_MS);
    this.options.onAssigned?.([]);
  }

  private retryDecoder(): RetryDecoder {
    const codec = this.options.codec;
    return { decode: (bytes) => codec.decode(bytes), parseReplacement: (json) => codec.parseEventJson(json) };
  }

  /** Decodes a message; one that can never be decoded becomes a dead letter instead of stopping the fold. */
  private async toItem(m: KafkaMessage, position: Position): Promise<BatchItem> {
    try {
      if (!m.value) throw new EventDecodeError('the message has no value');
      const event = await this.options.codec.decode(m.value);
      return { position, event, traceParent: traceParentOf(m.headers) };
    } catch (e) {
      if (!(e instanceof EventDecodeError)) throw e; // e.g. the registry does not answer: retry the batch
      return {
        position,
        undecodable: {
          position,
          // A key Postgres could not store (U+0000) is kept visibly altered; the bytes go to the DLQ as they are.
          key: (m.key?.toString('utf8') ?? '').replaceAll('\u0000', '\ufffd'),
          reason: e.message,
          valueBase64: m.value?.toString('base64') ?? '',
          timestamp: new Date(Number(m.timestamp)).toISOString(),
        },
      };
    }
  }

  /** Copies dead letters to the dead-letter topic before the batch commits (at least once; the id dedups). */
  private async publishDeadLetters(items: BatchItem[], messages: KafkaMessage[]): Promise<void> {
    if (this.rebuilding) return; // the live run published them; a rebuild only journals them
    const dead = items.flatMap((item, i) =>
      'undecodable' in item ? [{ item: item.undecodable, m: messages[i]! }] : [],
    );
    if (dead.length === 0) return;
    await this.producer!.send({
      topic: this.options.deadLetterTopic,
      acks: -1,
      messages: dead.map(({ item, m }) => ({
        key: m.key,
        value: m.value,
        headers: {
          'dead-letter-id': deadLetterId(item.position),
          'dead-letter-reason': item.reason,
          'original-topic': item.position.topic,
          'original-partition': String(item.position.partition),
          'original-offset': item.position.offset.toString(),
        },
      })),
    });
    for (const { item } of dead) {
      this.options.logger.error(
        { deadLetterId: deadLetterId(item.position), key: item.key, reason: item.reason },
        'message dead-lettered; its key is parked',
      );
    }
  }

  /**
   * Every event the fold did not apply is said at warn; at error when the database refused it, or when
   * folding it threw (a bug of the fold: with its stack).
   */
  private reportRefusals(journal: readonly JournalRow[], refused: readonly Refusal[]): void {
    const byDatabase = new Map(refused.map((r) => [r.eventId, r]));
    for (const row of journal) {
      if (row.outcome !== 'rejected' && row.outcome !== 'contradicted') continue;
      const fields = {
        eventId: row.eventId,
        eventType: row.eventType,
        provider: row.providerId,
        swapId: row.swapId,
        partition: row.partition,
        offset: row.offset.toString(),
        reason: row.reason,
      };
      const refusal = byDatabase.get(row.eventId);
      if (refusal?.kind === 'fold_error')
        this.options.logger.error(
          { ...fields, kind: refusal.kind, stack: refusal.stack },
          'event rejected: folding it failed (a bug of the fold, not the database); partition goes on',
        );
      else if (refusal)
        this.options.logger.error(
          { ...fields, kind: refusal.kind },
          'event rejected: the database refused its effects; partition goes on',
        );
      else if (row.outcome === 'contradicted')
        this.options.logger.warn(
          fields,
          'status contradicts a final swap: recorded, reconciliation reopened',
        );
      else this.options.logger.warn(fields, 'event rejected by the fold');
    }
  }

  /** Runs of several partitions in one transaction (one run: as projectBatch), on a connection of its own. */
  private async foldOnConnection(runs: PartitionRun[]): Promise<BatchResult[]> {
    const client = await this.options.pool.connect();
    try {
      // A rebuild reads each event once, into a journal that holds only what it folded before.
      return await projectBatches(client, this.options.topic, runs, this.options.hooks, this.retryDecoder(), {
        unseen: this.rebuilding !== undefined,
        streamJournal: this.rebuilding === undefined,
      });
    } finally {
      client.release();
    }
  }

  /** Folds one partition's run: live together with the others of its moment, in a rebuild alone. */
  private async fold(run: PartitionRun): Promise<BatchResult> {
    if (this.groupCommit) return this.groupCommit.submit(run);
    return (await this.foldOnConnection([run]))[0]!;
  }

  private async checkpointOf(partition: number): Promise<bigint> {
    const known = this.checkpoints.get(partition);
    if (known !== undefined) return known;
    const client = await this.options.pool.connect();
    try {
      const stored = await readCheckpoint(client, this.options.topic, partition);
      this.checkpoints.set(partition, stored);
      return stored;
    } finally {
      client.release();
    }
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    this.groupCommit?.enter();
    try {
      await this.foldBatch(payload);
    } finally {
      this.groupCommit?.leave();
    }
  }

  private async foldBatch({
    batch,
    resolveOffset,
    heartbeat,
    isRunning,
    isStale,
  }: EachBatchPayload): Promise<void> {
    const { topic, partition } = batch;
    const log = this.options.logger;
    // A rebuild stops at its end offset; a partition it does not know was created after it began.
    const end = this.rebuilding ? (this.options.rebuild!.until.get(partition) ?? 0n) : undefined;
    if (end === 0n) {
      // Nothing of it to fold: not even a checkpoint row (the live run has none for it either).
      this.consumer?.pause([{ topic, partitions: [partition] }]);
      return;
    }
    let next = await this.checkpointOf(partition);
    const messages = batch.messages.filter(
      (m) => BigInt(m.offset) >= next && (end === undefined || BigInt(m.offset) < end),
    );
    if (messages.length === 0) {
      if (batch.messages.length > 0) resolveOffset(batch.lastOffset());
      if (end !== undefined) this.reachedInRebuild(partition, next, end);
      return;
    }
    if (BigInt(messages[0]!.offset) > next) {
      log.warn(
        { partition, checkpoint: next.toString(), fetched: messages[0]!.offset },
        'fetch skipped ahead; seeking to checkpoint',
      );
      this.checkpoints.delete(partition);
      this.consumer!.seek({ topic, partition, offset: next.toString() });
      return;
    }
    for (let i = 0; i < messages.length && isRunning() && !isStale(); i += this.maxBatch) {
      const chunk = messages.slice(i, i + this.maxBatch);
      const started = performance.now();
      const items: BatchItem[] = [];
      for (const m of chunk) items.push(await this.toItem(m, { topic, partition, offset: BigInt(m.offset) }));
      await this.publishDeadLetters(items, chunk);
      const result = await this.fold({ partition, expectedNextOffset: next, items });
      if (!result.ok) {
        log.warn(
          { partition, expected: next.toString(), stored: result.storedNextOffset.toString() },
          movedCheckpointMessage(result.storedNextOffset, items.at(-1)!.position.offset + 1n),
        );
        this.checkpoints.set(partition, result.storedNextOffset);
        this.consumer!.seek({ topic, partition, offset: result.storedNextOffset.toString() });
        return;
      }
      next = result.nextOffset;
      this.checkpoints.set(partition, next);
      resolveOffset(chunk.at(-1)!.offset);
      await heartbeat();
      const seconds = (performance.now() - started) / 1000;
      this.options.onBatch?.({
        partition,
        events: chunk.length,
        nextOffset: next,
        journal: result.journal,
        seconds,
      });
      this.reportRefusals(result.journal, result.refusedByDatabase);
      if (!this.rebuilding) traceFolded(chunk, result.journal, { topic, partition, seconds });
      log.debug(
        { partition, events: chunk.length, duplicates: result.duplicates, next: next.toString() },
        'batch folded',
      );
    }
    if (end !== undefined) this.reachedInRebuild(partition, next, end);
  }

  /** Rebuild mode: a partition at its end offset is paused; the last one to get there ends the rebuild. */
  private reachedInRebuild(partition: number, next: bigint, end: bigint): void {
    if (!this.rebuilding!.reached(partition, next, end)) return;
    this.consumer?.pause([{ topic: this.options.topic, partitions: [partition] }]);
  }
}

/**
 * What a refused compare-and-set of a batch's checkpoint says. A checkpoint already at or past the batch's
 * end means its events are folded: by another member, or by this one in a commit whose answer was lost
 * (a group fold that failed after COMMIT is tried again run by run, and each finds its own checkpoint
 * moved). Only a checkpoint short of the end leaves events of the batch unfolded here, to be fetched again.
 */
export function movedCheckpointMessage(stored: bigint, batchEnd: bigint): string {
  return stored >= batchEnd
    ? 'checkpoint already past this batch (folded by another member, or by this one in a commit whose answer was lost); going on from it'
    : 'checkpoint moved by another member; batch not applied, fetching again from the stored checkpoint';
}

/** Which partitions of a rebuild are still short of their end offset. */
class RebuildProgress {
  private readonly pending: Set<number>;
  readonly promise: Promise<void>;
  private resolve!: () => void;
  private reject!: (e: Error) => void;

  constructor(until: ReadonlyMap<number, bigint>) {
    this.pending = new Set([...until].filter(([, end]) => end > 0n).map(([p]) => p));
    this.promise = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.promise.catch(() => {}); // observed by caughtUp(); never an unhandled rejection meanwhile
    if (this.pending.size === 0) this.resolve();
  }

  get done(): boolean {
    return this.pending.size === 0;
  }

  /** Notes the partition's position; true when it has just reached its end. */
  reached(partition: number, next: bigint, end: bigint): boolean {
    if (next < end || !this.pending.delete(partition)) return false;
    if (this.pending.size === 0) this.resolve();
    return true;
  }

  fail(e: unknown): void {
    this.reject(e instanceof Error ? e : new Error(String(e)));
  }
}
