// Over 400 lines for a reason: the appender's lanes, resends and deadlines are one state machine whose
// invariant (one batch in flight per partition, a batch of unknown outcome resent unchanged) must be read whole.
import { Partitioners, type ICustomPartitioner, type Kafka } from 'kafkajs';
import {
  ProduceAcks,
  Producer,
  stringSerializer,
  type MessageToProduce,
  type ProduceResult,
} from '@platformatic/kafka';
import { kafkaOptionsOf } from './kafka.ts';
import { partitionKeyOf } from './keys.ts';
import { laneStepAfterFailure, partitionOf, produceOutcome, unknownBeforeLast } from './produce-rules.ts';
import { assertReplicated } from './topics.ts';
import type { Logger } from '../observability/log.ts';
import {
  headersForKept,
  SpanKind,
  traceHeaders,
  withSpan,
  type KeptTraceContext,
} from '../observability/tracing.ts';
import type { EventCodec } from './codec.ts';
import type { SwapEvent } from './types.ts';

/** Kafka did not acknowledge in time. The event may still be written later (same id): outcome unknown. */
export class AppendTimeoutError extends Error {
  override name = 'AppendTimeoutError';
  constructor(
    readonly eventIds: string[],
    timeoutMs: number,
  ) {
    super(`Kafka did not acknowledge ${eventIds.length} event(s) within ${timeoutMs} ms`);
  }
}

/** One append: resolved once every partition it spans acknowledged it, rejected at the first refusal. */
interface Pending {
  eventIds: string[];
  /** Partitions of the append not yet acknowledged. */
  parts: number;
  resolve: () => void;
  reject: (e: Error) => void;
  settled: boolean;
}

type Message = MessageToProduce<string, Buffer, string, string>;

/** The messages of one append that go to one partition, in the append's order. */
interface Part {
  pending: Pending;
  messages: Message[];
}

/**
 * One partition's writes: a queue, and the batch in flight. A batch whose outcome is unknown (no answer,
 * a timeout, a leader change) stays the batch, sent again as it was until Kafka answers: the same
 * messages under the same sequence number are either written now or recognised as written already. A
 * different batch under that number would be taken for the first one and dropped (acknowledged: lost);
 * so a batch refused after an attempt of unknown outcome gives up its number with the producer id.
 */
interface Lane {
  partition: number;
  queue: Part[];
  batch: Part[] | undefined;
  busy: boolean;
  failures: number;
  /** Not before (ms epoch): the backoff after a failure. */
  retryAt: number;
}

/** An event already in the registry's wire format, with what its message's key and headers need. */
export interface EncodedEvent {
  eventId: string;
  eventType: string;
  aggregateKey: string;
  value: Buffer;
}

export interface AppenderOptions {
  /** Made by createKafka: its brokers and client id are the producer's; its admin checks replication. */
  kafka: Kafka;
  codec: EventCodec;
  topic: string;
  /** Deadline of every append, from the call to Kafka's acknowledgement (acks = all). */
  sendTimeoutMs: number;
  /** Most messages in one partition's batch. */
  maxBatchMessages?: number;
  logger?: Logger;
  /** Observes each acknowledged batch's size (tests and metrics). */
  onBatchSent?: (messages: number) => void;
  /**
   * The replication the topic must have before this appender writes to it (0: resolved against the
   * cluster, see resolveReplication); less: start() throws TopicReplicationError. None: not checked.
   */
  replication?: { replicationFactor?: number; minInsyncReplicas?: number };
}

/**
 * kafkajs' default (Java-compatible murmur2) partitioner over partitionKeyOf(key): see src/events/keys.ts.
 * For kafkajs producers of tests and tools; the appender places messages with partitionOf, the same rule.
 */
export const swapEventPartitioner: ICustomPartitioner = () => {
  const murmur2 = Partitioners.DefaultPartitioner();
  return ({ topic, partitionMetadata, message }) =>
    murmur2({
      topic,
      partitionMetadata,
      message: {
        ...message,
        key: message.key == null ? message.key : partitionKeyOf(message.key.toString()),
      },
    });
};

/**
 * The one way events reach the log: @platformatic/kafka's idempotent producer with acks = all (README,
 * "The Kafka client": kafkajs lost acknowledged events across leader changes). Each partition has its
 * own lane (one batch in flight, the next gathering meanwhile); the ready lanes a broker leads share one
 * produce request to it, and a lane that failed is sent alone until it succeeds, so a partition whose
 * leader is gone holds back only its own appends. Every append has a deadline: a batch whose outcome is
 * unknown is sent again until Kafka answers, however long Kafka is away.
 */
export class EventAppender {
  private producer: Producer<string, Buffer, string, string>;
  private readonly lanes = new Map<number, Lane>();
  private partitions = 0;
  /** Each partition's leader as last read (a grouping of requests only: the client routes by its own). */
  private leaders: number[] = [];
  private readonly busyLeaders = new Set<number>();
  private wake: NodeJS.Timeout | undefined;
  private connected: Promise<void> | undefined;
  private stopped = false;
  private readonly maxBatch: number;

  constructor(private readonly options: AppenderOptions) {
    this.maxBatch = options.maxBatchMessages ?? 1000;
    this.producer = this.newProducer();
  }

  private newProducer(): Producer<string, Buffer, string, string> {
    const kafka = kafkaOptionsOf(this.options.kafka);
    return new Producer<string, Buffer, string, string>({
      clientId: kafka.clientId,
      bootstrapBrokers: kafka.brokers,
      idempotent: true,
      acks: ProduceAcks.ALL,
      connectTimeout: kafka.connectionTimeoutMs ?? 3000,
      // Per request; a lane sends again on fresh metadata after that, so a stopped broker holds it briefly.
      timeout: Math.min(kafka.requestTimeoutMs ?? 30_000, Math.max(5000, this.options.sendTimeoutMs)),
      // The client's own retries stay on one leader's connection: few, then the lane asks for metadata.
      retries: 2,
      retryDelay: 200,
      serializers: { key: stringSerializer, headerKey: stringSerializer, headerValue: stringSerializer },
    });
  }

  async start(): Promise<void> {
    this.connected ??= this.checkReplication()
      .then(() => this.options.codec.register())
      .then(() => this.readPartitions());
    await this.connected;
  }

  /** The topic's partition count (messages are placed by key, so an append knows its lanes) and leaders. */
  private async readPartitions(): Promise<void> {
    const topic = (await this.producer.metadata({ topics: [this.options.topic] })).topics.get(
      this.options.topic,
    );
    if (!topic || topic.partitionsCount < 1) throw new Error(`topic ${this.options.topic} has no partitions`);
    this.partitions = topic.partitionsCount;
    this.leaders = topic.partitions.map((p) => p.leader);
  }

  private refreshLeaders(): void {
    this.producer.clearMetadata();
    this.readPartitions().catch(() => undefined);
  }

  /** Refuses a topic less replicated than configured: a 200 on one copy is not the durability promised. */
  private async checkReplication(): Promise<void> {
    if (!this.options.replication) return;
    const admin = this.options.kafka.admin();
    await admin.connect();
    try {
      await assertReplicated(admin, this.options.topic, this.options.replication);
    } finally {
      await admin.disconnect();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.wake);
    const error = new Error('event appender stopped');
    for (const lane of this.lanes.values()) {
      for (const part of [...(lane.batch ?? []), ...lane.queue]) this.settle(part.pending, error);
      lane.queue = [];
    }
    // Bounded: a connection that does not close (a broker that stopped answering) must not hold a stop.
    await new Promise<void>((resolve) => {
      setTimeout(resolve, 5000).unref();
      this.producer.close(true, () => resolve());
    });
  }

  /** Appends one event; resolves once Kafka acknowledged it. */
  append(event: SwapEvent): Promise<void> {
    return this.appendAll([event]);
  }

  /**
   * Appends events in order (per partition, as keys place them): resolves once all are acknowledged,
   * rejects if any is not (the others may be written: outcome unknown). Traced as one `append` span
   * whose context the messages carry in their headers (the projector's spans join it).
   * `kept[i]`: the trace context events[i] was written under earlier (the outbox), carried instead when
   * it is another trace than the append's (see headersForKept).
   */
  async appendAll(events: SwapEvent[], kept?: readonly (KeptTraceContext | undefined)[]): Promise<void> {
    if (events.length === 0) return;
    await withSpan(
      'append',
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.system': 'kafka',
          'messaging.destination.name': this.options.topic,
          'messaging.batch.message_count': events.length,
          'swap_ledger.event_types': [...new Set(events.map((e) => e.eventType))].join(','),
        },
      },
      () => this.encodeAndSend(events, kept),
    );
  }

  /**
   * Appends one event already in the wire format, written with this appender's envelope under
   * `writerSchemaId()` (the reconciler encodes its verdicts off the event loop). Traced like append.
   */
  appendEncoded(event: EncodedEvent): Promise<void> {
    return withSpan(
      'append',
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.system': 'kafka',
          'messaging.destination.name': this.options.topic,
          'messaging.batch.message_count': 1,
          'swap_ledger.event_types': event.eventType,
        },
      },
      () => this.send([event], [event.value], undefined),
    );
  }

  /** The schema id an encoded event must carry (the codec's envelope, registered if need be). */
  writerSchemaId(): Promise<number> {
    return this.options.codec.writerSchemaId();
  }

  private async encodeAndSend(
    events: SwapEvent[],
    kept: readonly (KeptTraceContext | undefined)[] | undefined,
  ): Promise<void> {
    const values = await Promise.all(events.map((event) => this.options.codec.encode(event)));
    await this.send(events, values, kept);
  }

  private async send(
    events: readonly Omit<EncodedEvent, 'value'>[],
    values: readonly Buffer[],
    kept: readonly (KeptTraceContext | undefined)[] | undefined,
  ): Promise<void> {
    const trace = traceHeaders();
    await new Promise<void>((resolve, reject) => {
      const pending: Pending = {
        eventIds: events.map((e) => e.eventId),
        parts: 0,
        resolve,
        reject,
        settled: false,
      };
      const timer = setTimeout(
        () => this.settle(pending, new AppendTimeoutError(pending.eventIds, this.options.sendTimeoutMs)),
        this.options.sendTimeoutMs,
      );
      timer.unref();
      pending.resolve = () => {
        clearTimeout(timer);
        resolve();
      };
      pending.reject = (e) => {
        clearTimeout(timer);
        reject(e);
      };
      this.start().then(
        () => {
          if (this.stopped) return this.settle(pending, new Error('event appender stopped'));
          const byPartition = new Map<number, Message[]>();
          events.forEach((event, i) => {
            const partition = partitionOf(event.aggregateKey, this.partitions);
            const message: Message = {
              topic: this.options.topic,
              partition,
              key: event.aggregateKey,
              value: values[i]!,
              headers: {
                'event-id': event.eventId,
                'event-type': event.eventType,
                ...headersForKept(kept?.[i], trace),
              },
            };
            const list = byPartition.get(partition);
            if (list) list.push(message);
            else byPartition.set(partition, [message]);
          });
          pending.parts = byPartition.size;
          for (const [partition, messages] of byPartition)
            this.lane(partition).queue.push({ pending, messages });
          this.pump();
        },
        (e: Error) => this.settle(pending, e),
      );
    });
  }

  private lane(partition: number): Lane {
    let lane = this.lanes.get(partition);
    if (!lane) {
      lane = { partition, queue: [], batch: undefined, busy: false, failures: 0, retryAt: 0 };
      this.lanes.set(partition, lane);
    }
    return lane;
  }

  private settle(p: Pending, error?: Error): void {
    if (p.settled) return;
    if (!error && --p.parts > 0) return;
    p.settled = true;
    if (error) p.reject(error);
    else p.resolve();
  }

  /** Sends every ready lane: one request per leader, a lane that failed alone; none twice at once. */
  private pump(): void {
    if (this.stopped) return;
    const now = Date.now();
    let nextRetry = Infinity;
    const groups = new Map<number, Lane[]>();
    for (const lane of this.lanes.values()) {
      if (lane.busy || (!lane.batch && !this.nextBatch(lane))) continue;
      if (lane.retryAt > now) {
        nextRetry = Math.min(nextRetry, lane.retryAt);
        continue;
      }
      // A failed lane's own key: its outcome is read alone, and it holds back no other lane.
      const group = lane.failures > 0 ? -1 - lane.partition : (this.leaders[lane.partition] ?? -1);
      if (this.busyLeaders.has(group)) continue;
      const lanes = groups.get(group);
      if (lanes) lanes.push(lane);
      else groups.set(group, [lane]);
    }
    for (const [group, lanes] of groups) void this.produce(group, lanes);
    if (nextRetry < Infinity && !this.wake)
      this.wake = setTimeout(
        () => {
          this.wake = undefined;
          this.pump();
        },
        Math.max(0, nextRetry - now),
      ).unref();
  }

  /** The lane's next batch from its queue, or false if nothing waits. */
  private nextBatch(lane: Lane): boolean {
    // Appends whose deadline passed before they were sent are not sent: their caller was told "no".
    lane.queue = lane.queue.filter((part) => !part.pending.settled);
    if (lane.queue.length === 0) return false;
    const batch: Part[] = [];
    let size = 0;
    while (
      lane.queue.length > 0 &&
      (batch.length === 0 || size + lane.queue[0]!.messages.length <= this.maxBatch)
    ) {
      const part = lane.queue.shift()!;
      batch.push(part);
      size += part.messages.length;
    }
    lane.batch = batch;
    return true;
  }

  private async produce(group: number, lanes: Lane[]): Promise<void> {
    this.busyLeaders.add(group);
    for (const lane of lanes) lane.busy = true;
    const producer = this.producer;
    const messages = lanes.flatMap((lane) => lane.batch!.flatMap((part) => part.messages));
    let error: unknown;
    let acknowledged: Set<number>;
    try {
      await producer.send({ messages });
      acknowledged = new Set(lanes.map((lane) => lane.partition));
    } catch (e) {
      error = e;
      // The destinations that answered yes before another failed: their lanes are done.
      const produced = (e as { produced?: ProduceResult }).produced?.offsets ?? [];
      acknowledged = new Set(produced.map((o) => o.partition));
    }
    let sent = 0;
    for (const lane of lanes) {
      lane.busy = false;
      const batch = lane.batch!;
      if (acknowledged.has(lane.partition)) {
        lane.batch = undefined;
        lane.failures = 0;
        sent += batch.reduce((n, part) => n + part.messages.length, 0);
        for (const part of batch) this.settle(part.pending);
      } else if (!this.stopped)
        this.failed(lane, lanes.length === 1 ? produceOutcome(error) : 'unknown', error, producer);
    }
    if (sent > 0) this.options.onBatchSent?.(sent);
    this.busyLeaders.delete(group);
    if (error !== undefined && !this.stopped) this.refreshLeaders();
    this.pump();
  }

  /**
   * A lane's batch not acknowledged: refused by Kafka, its appends fail; otherwise (outcome unknown) it
   * is sent again as it is, alone, after a backoff. A refusal after an attempt of unknown outcome renews
   * the producer id before the lane sends anything else (laneStepAfterFailure).
   */
  private failed(
    lane: Lane,
    outcome: ReturnType<typeof produceOutcome>,
    error: unknown,
    producer: Producer<string, Buffer, string, string>,
  ): void {
    const batch = lane.batch!;
    const earlierUnknown = lane.failures > 0 || unknownBeforeLast(error);
    const step = laneStepAfterFailure(outcome, earlierUnknown);
    const log = { err: error, partition: lane.partition, appends: batch.length, outcome };
    if (step.renewProducer) this.renewProducer(producer);
    if (!step.resend) {
      lane.batch = undefined;
      lane.failures = 0;
      this.options.logger?.error(
        { ...log, earlierUnknown },
        earlierUnknown
          ? 'Kafka refused a batch an earlier attempt may have written: a new producer id'
          : 'Kafka refused a batch',
      );
      for (const part of batch) this.settle(part.pending, error as Error);
      return;
    }
    lane.failures++;
    lane.retryAt = Date.now() + Math.min(1000, 50 * 2 ** Math.min(lane.failures - 1, 5));
    // The first failure of a run, then every tenth: a leader away for a minute logs a few lines.
    if (lane.failures % 10 === 1)
      this.options.logger?.warn(
        { ...log, failures: lane.failures },
        'produce failed, its outcome unknown: the same batch is sent again',
      );
  }

  /**
   * A new producer id (sequences from 0) after a sequence error, or after a refusal of a batch the broker
   * may hold. Sends in flight on the old producer end with it and are sent again on the new one (if the
   * old one wrote them, twice: same event ids, which the projector ignores).
   */
  private renewProducer(failed: Producer<string, Buffer, string, string>): void {
    if (this.producer !== failed || this.stopped) return;
    this.producer = this.newProducer();
    failed.close(true, () => undefined);
  }
}
