import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type pg from 'pg';
import type { EventCodec } from '../events/codec.ts';
import type { Logger } from '../observability/log.ts';
import { projectBatch, readCheckpoint, type PositionedEvent } from './batch.ts';

export interface ProjectorOptions {
  kafka: Kafka;
  codec: EventCodec;
  /** A pool whose search_path is the projection schema to fold into. */
  pool: pg.Pool;
  topic: string;
  groupId: string;
  logger: Logger;
  /** Most events folded in one transaction (memory stays bounded whatever the backlog). */
  maxBatchEvents?: number;
  /** Fault points for crash tests: called inside the transaction. */
  hooks?: { midBatch?: () => void | Promise<void>; beforeCommit?: () => void | Promise<void> };
  /** Called after each committed batch. */
  onBatch?: (info: { partition: number; events: number; nextOffset: bigint }) => void;
}

/**
 * Consumer-group member that folds the events topic into Postgres. Postgres, not Kafka, holds the
 * position: each batch commits its state and its checkpoint together; Kafka's committed offset is only a
 * hint for where to fetch after a restart. Messages below the checkpoint are skipped; a fetch that
 * starts above it (a gap) seeks back to it.
 */
export class Projector {
  private consumer: Consumer | undefined;
  private readonly maxBatch: number;

  constructor(private readonly options: ProjectorOptions) {
    this.maxBatch = options.maxBatchEvents ?? 2000;
  }

  async start(): Promise<void> {
    const { kafka, topic, groupId } = this.options;
    await this.options.codec.register();
    const consumer = kafka.consumer({
      groupId,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
      maxBytesPerPartition: 4 * 1024 * 1024,
      retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 200, maxRetryTime: 2000 },
    });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: (payload) => this.onBatch(payload),
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
    this.consumer = undefined;
  }

  private async onBatch({
    batch,
    resolveOffset,
    heartbeat,
    isRunning,
    isStale,
  }: EachBatchPayload): Promise<void> {
    const { topic, partition } = batch;
    const log = this.options.logger;
    const client = await this.options.pool.connect();
    try {
      let next = await readCheckpoint(client, topic, partition);
      const messages = batch.messages.filter((m) => BigInt(m.offset) >= next);
      if (messages.length === 0) {
        if (batch.messages.length > 0) resolveOffset(batch.lastOffset());
        return;
      }
      if (BigInt(messages[0]!.offset) > next) {
        log.warn(
          { partition, checkpoint: next.toString(), fetched: messages[0]!.offset },
          'fetch skipped ahead; seeking to checkpoint',
        );
        this.consumer!.seek({ topic, partition, offset: next.toString() });
        return;
      }
      for (let i = 0; i < messages.length && isRunning() && !isStale(); i += this.maxBatch) {
        const chunk = messages.slice(i, i + this.maxBatch);
        const events: PositionedEvent[] = [];
        for (const m of chunk) {
          events.push({
            position: { topic, partition, offset: BigInt(m.offset) },
            event: await this.options.codec.decode(m.value!),
          });
        }
        const result = await projectBatch(client, topic, partition, next, events, this.options.hooks);
        if (!result.ok) {
          log.warn(
            { partition, expected: next.toString(), stored: result.storedNextOffset.toString() },
            'checkpoint moved by another member; batch not applied',
          );
          this.consumer!.seek({ topic, partition, offset: result.storedNextOffset.toString() });
          return;
        }
        next = result.nextOffset;
        resolveOffset(chunk.at(-1)!.offset);
        await this.consumer!.commitOffsets([{ topic, partition, offset: next.toString() }]);
        await heartbeat();
        this.options.onBatch?.({ partition, events: chunk.length, nextOffset: next });
        log.debug(
          { partition, events: chunk.length, duplicates: result.duplicates, next: next.toString() },
          'batch folded',
        );
      }
    } finally {
      client.release();
    }
  }
}
