import { Partitioners, type ICustomPartitioner, type Kafka, type Producer } from 'kafkajs';
import { partitionKeyOf } from './keys.ts';
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

interface Pending {
  messages: { key: string; value: Buffer; headers: Record<string, string> }[];
  eventIds: string[];
  resolve: () => void;
  reject: (e: Error) => void;
  settled: boolean;
}

/** An event already in the registry's wire format, with what its message's key and headers need. */
export interface EncodedEvent {
  eventId: string;
  eventType: string;
  aggregateKey: string;
  value: Buffer;
}

export interface AppenderOptions {
  kafka: Kafka;
  codec: EventCodec;
  topic: string;
  /** Deadline of every append, from the call to Kafka's acknowledgement (acks = all). */
  sendTimeoutMs: number;
  /** Most messages in one produce request. */
  maxBatchMessages?: number;
  logger?: Logger;
  /** Observes each produce request's size (tests and metrics). */
  onBatchSent?: (messages: number) => void;
  /**
   * The replication the topic must have before this appender writes to it (0: resolved against the
   * cluster, see resolveReplication); less: start() throws TopicReplicationError. None: not checked.
   */
  replication?: { replicationFactor?: number; minInsyncReplicas?: number };
}

/** kafkajs' default (Java-compatible murmur2) partitioner over partitionKeyOf(key): see src/events/keys.ts. */
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
 * The one way events reach the log. An idempotent producer with acks = all; concurrent appends are
 * gathered into shared produce requests (one in flight at a time, the next gathering meanwhile),
 * because kafkajs sends one request per `send`. Every append has a deadline, since kafkajs' idempotent
 * producer retries without end while Kafka is down.
 */
export class EventAppender {
  private readonly producer: Producer;
  private queue: Pending[] = [];
  private sending = false;
  private connected: Promise<void> | undefined;
  private readonly maxBatch: number;

  constructor(private readonly options: AppenderOptions) {
    this.maxBatch = options.maxBatchMessages ?? 1000;
    this.producer = options.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: swapEventPartitioner,
      // Reconnect promptly once Kafka is back; the caller's deadline bounds the wait, not this.
      retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 1000 },
    });
  }

  async start(): Promise<void> {
    this.connected ??= this.checkReplication()
      .then(() => this.options.codec.register())
      .then(() => this.producer.connect());
    await this.connected;
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
    for (const p of this.queue) this.settle(p, new Error('event appender stopped'));
    this.queue = [];
    await this.producer.disconnect();
  }

  /** Appends one event; resolves once Kafka acknowledged it. */
  append(event: SwapEvent): Promise<void> {
    return this.appendAll([event]);
  }

  /**
   * Appends events in order, in one produce request: all acknowledged, or an error for all. Traced as one
   * `append` span whose context the messages carry in their headers (the projector's spans join it).
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
    const messages = events.map((event, i) => ({
      key: event.aggregateKey,
      value: values[i]!,
      headers: {
        'event-id': event.eventId,
        'event-type': event.eventType,
        ...headersForKept(kept?.[i], trace),
      },
    }));
    await new Promise<void>((resolve, reject) => {
      const pending: Pending = {
        messages,
        eventIds: events.map((e) => e.eventId),
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
      this.queue.push(pending);
      this.pump();
    });
  }

  private settle(p: Pending, error?: Error): void {
    if (p.settled) return;
    p.settled = true;
    if (error) p.reject(error);
    else p.resolve();
  }

  private pump(): void {
    if (this.sending) return;
    // Appends whose deadline passed before they were sent are not sent: their caller was told "no".
    this.queue = this.queue.filter((p) => !p.settled);
    if (this.queue.length === 0) return;
    const batch: Pending[] = [];
    let size = 0;
    while (
      this.queue.length > 0 &&
      (batch.length === 0 || size + this.queue[0]!.messages.length <= this.maxBatch)
    ) {
      const p = this.queue.shift()!;
      batch.push(p);
      size += p.messages.length;
    }
    this.sending = true;
    void this.produce(batch).finally(() => {
      this.sending = false;
      this.pump();
    });
  }

  private async produce(batch: Pending[]): Promise<void> {
    const messages = batch.flatMap((p) => p.messages);
    try {
      await this.start();
      await this.producer.send({ topic: this.options.topic, acks: -1, messages });
      this.options.onBatchSent?.(messages.length);
      for (const p of batch) this.settle(p);
    } catch (e) {
      this.options.logger?.error({ err: e, messages: messages.length }, 'produce request failed');
      for (const p of batch) this.settle(p, e as Error);
    }
  }
}
