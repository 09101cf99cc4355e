// Over 400 lines on purpose: the durable publisher and the relay share one table's invariant (rows relayed in
// order per key, the same event ids, each once), which is checked by reading both sides together.
import type pg from 'pg';
import type { EventAppender } from '../events/producer.ts';
import type { SwapEvent } from '../events/types.ts';
import type { Logger } from '../observability/log.ts';
import type { Counter, MetricsRegistry } from '../observability/metrics.ts';
import { mustQueue, publishableSeqs, type LockedRow } from './order.ts';
import { inTransaction } from '../db/transaction.ts';
import type { KeptTraceContext } from '../observability/tracing.ts';
import { insertOutbox, keptTraceOf, keysWithPendingRows, markPublished, pendingSeqsByKey } from './store.ts';

type Appender = Pick<EventAppender, 'appendAll'>;

/** What a relay or a key flush reads of an outbox row to publish it. */
interface OutboxRow {
  seq_text: string;
  event: SwapEvent;
  trace_parent: string | null;
  trace_state: string | null;
}

export interface OutboxMetrics {
  /** Events written by the publisher, by where they went: kafka | outbox. */
  readonly published: Counter;
  /** Outbox events the relay (or a key flush) published to Kafka. */
  readonly relayed: Counter;
  readonly relayFailures: Counter;
}

export function createOutboxMetrics(registry: MetricsRegistry): OutboxMetrics {
  return {
    published: registry.counter(
      'swap_ledger_events_published_total',
      'Events recorded by this process, by where they went first (kafka or the Postgres outbox)',
      ['path'],
    ),
    relayed: registry.counter('swap_ledger_outbox_relayed_total', 'Outbox events published to Kafka'),
    relayFailures: registry.counter(
      'swap_ledger_outbox_relay_failures_total',
      'Relay rounds or key flushes that Kafka did not acknowledge',
    ),
  };
}

/** Where a publish went. */
export type PublishPath = 'kafka' | 'outbox';

export class OutboxWriteError extends Error {
  override name = 'OutboxWriteError';
}

/** What the publisher and the relay both work with. */
interface OutboxParts {
  pool: pg.Pool;
  appender: Appender;
  /** The topic the appender writes to: outbox rows are kept, and published, per topic. */
  topic: string;
  logger: Logger;
  metrics?: OutboxMetrics;
}

/**
 * The gateway's way to record events: straight to Kafka when it acknowledges in time, else into the
 * Postgres outbox in the same call, in order (rules in ./order.ts). An event is lost only if both Kafka
 * and Postgres refuse it, and then the caller hears of it (OutboxWriteError).
 *
 * After a Kafka failure the publisher sends straight to the outbox for a while (`bypassMs`, or until
 * the relay next publishes) instead of making every request wait out the Kafka deadline again.
 */
export class DurablePublisher {
  private bypassUntil = 0;
  private flusher: ((key: string) => Promise<void>) | undefined;

  constructor(
    private readonly options: OutboxParts & {
      /** Default 30 s. */
      bypassMs?: number;
      now?: () => number;
    },
  ) {}

  /** Kafka acknowledged something (a relay round): stop bypassing it. */
  kafkaIsBack(): void {
    this.bypassUntil = 0;
  }

  get bypassing(): boolean {
    return this.now() < this.bypassUntil;
  }

  /** Records the events in order; resolves with where the last one went. */
  async publish(events: readonly SwapEvent[]): Promise<PublishPath> {
    if (events.length === 0) return 'kafka';
    const { pool, appender, logger } = this.options;
    if (this.bypassing) {
      await this.toOutbox(events, 'kafka: bypassed after a recent failure');
      return 'outbox';
    }
    let pending: Set<string>;
    try {
      pending = await keysWithPendingRows(
        pool,
        this.options.topic,
        events.map((e) => e.aggregateKey),
      );
    } catch (e) {
      // Postgres cannot tell: Kafka alone keeps the order only if nothing of these keys waits, unknown here.
      throw new OutboxWriteError(`cannot read the outbox: ${(e as Error).message}`, { cause: e });
    }
    const queue = mustQueue(
      events.map((e) => e.aggregateKey),
      pending,
    );
    const direct = events.filter((_, i) => !queue[i]);
    const behind = events.filter((_, i) => queue[i]);
    let last: PublishPath = 'kafka';
    if (direct.length > 0) {
      try {
        await appender.appendAll([...direct]);
        this.options.metrics?.published.inc({ path: 'kafka' }, direct.length);
      } catch (e) {
        this.bypassUntil = this.now() + (this.options.bypassMs ?? 30_000);
        logger.warn(
          { err: e, events: direct.map((d) => d.eventId) },
          'Kafka did not acknowledge in time; events go to the outbox',
        );
        // Kafka may still write them later (same ids): the relay's copy is then a duplicate the projector ignores.
        await this.toOutbox(direct, `kafka: ${(e as Error).message}`);
        last = 'outbox';
      }
    }
    if (behind.length > 0) {
      await this.toOutbox(behind, 'behind unpublished outbox events of its key');
      last = 'outbox';
    }
    return last;
  }

  /**
   * Durable before visible: `write` (the caller's rows, e.g. the gateway's created_swaps) and the events'
   * outbox rows commit in ONE transaction, before any Kafka send; then the events' keys are flushed to
   * Kafka at once (the relay does it later if Kafka does not acknowledge). Whoever sees the caller's rows
   * can rely on the events being queued ahead of anything else of their keys (ensureKeyPublished).
   * Throws OutboxWriteError when the transaction fails: nothing was recorded then.
   */
  async publishWith(
    events: readonly SwapEvent[],
    write: (client: pg.ClientBase) => Promise<void>,
    reason: string,
  ): Promise<PublishPath> {
    const { pool, logger } = this.options;
    try {
      await inTransaction(pool, async (client) => {
        await write(client);
        await insertOutbox(client, this.options.topic, events, reason);
      });
    } catch (e) {
      throw new OutboxWriteError(`the outbox transaction failed: ${(e as Error).message}`, { cause: e });
    }
    if (this.bypassing) {
      this.options.metrics?.published.inc({ path: 'outbox' }, events.length);
      return 'outbox';
    }
    try {
      for (const key of new Set(events.map((e) => e.aggregateKey))) await this.flush(key);
      this.options.metrics?.published.inc({ path: 'kafka' }, events.length);
      return 'kafka';
    } catch (e) {
      this.bypassUntil = this.now() + (this.options.bypassMs ?? 30_000);
      this.options.metrics?.published.inc({ path: 'outbox' }, events.length);
      logger.warn(
        { err: e, events: events.map((d) => d.eventId) },
        'Kafka did not acknowledge in time; the outbox relay will publish the events',
      );
      return 'outbox';
    }
  }

  /**
   * publishWith for a fact that already exists outside the platform (a swap the partner created): it must
   * be kept somewhere, so a failed transaction is not the end. It is retried, with a growing pause, for
   * `keepMs` (a Postgres restart or failover takes seconds; the row writes are idempotent, so a commit
   * whose answer was lost is harmless to repeat). Past that the events go straight to Kafka (the caller's
   * rows are then missing: the projection makes the events visible once folded). Why no local spool: a
   * file on the gateway's disk is lost with its container and would need a drain at start; the two stores
   * the platform already trusts are tried instead. Throws OutboxWriteError only when neither took them.
   */
  async publishWithKept(
    events: readonly SwapEvent[],
    write: (client: pg.ClientBase) => Promise<void>,
    reason: string,
    keepMs: number,
  ): Promise<PublishPath> {
    const { logger, appender } = this.options;
    const until = this.now() + keepMs;
    let pauseMs = 250;
    let attempts = 0;
    for (;;) {
      attempts++;
      try {
        const path = await this.publishWith(events, write, reason);
        if (attempts > 1)
          logger.warn(
            { attempts, events: events.map((e) => e.eventId) },
            'recorded after a retried outbox write',
          );
        return path;
      } catch (e) {
        if (!(e instanceof OutboxWriteError)) throw e;
        if (this.now() + pauseMs > until) {
          logger.error(
            { err: e, attempts, events: events.map((d) => d.eventId) },
            'the outbox write failed within its bound; the events go straight to Kafka',
          );
          try {
            await appender.appendAll([...events]);
          } catch (k) {
            throw new OutboxWriteError(
              `neither Postgres (${attempts} attempts in ${keepMs} ms: ${e.message}) nor Kafka (${(k as Error).message}) took ${events.length} event(s)`,
              { cause: k },
            );
          }
          this.options.metrics?.published.inc({ path: 'kafka' }, events.length);
          return 'kafka';
        }
        if (attempts === 1)
          logger.warn(
            { err: e, keepMs, events: events.map((d) => d.eventId) },
            'the outbox write failed; retried within its bound',
          );
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        pauseMs = Math.min(pauseMs * 2, 2000);
      }
    }
  }

  private get flush(): (key: string) => Promise<void> {
    this.flusher ??= outboxKeyFlusher({
      pool: this.options.pool,
      appender: this.options.appender,
      topic: this.options.topic,
    });
    return this.flusher;
  }

  private async toOutbox(events: readonly SwapEvent[], reason: string): Promise<void> {
    try {
      await inTransaction(this.options.pool, (client) =>
        insertOutbox(client, this.options.topic, events, reason),
      );
    } catch (e) {
      throw new OutboxWriteError(
        `neither Kafka nor the outbox took ${events.length} event(s): ${(e as Error).message}`,
        { cause: e },
      );
    }
    this.options.metrics?.published.inc({ path: 'outbox' }, events.length);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

export interface RelayRound {
  /** Events published to Kafka in this round. */
  readonly published: number;
  /** Rows locked but left for later (an older row of their key is held elsewhere). */
  readonly held: number;
}

/**
 * Publishes outbox rows to Kafka with their original event ids, in seq order per key: selects a batch
 * FOR UPDATE SKIP LOCKED (several relays may run), keeps only what rule 2 allows, appends it in one
 * produce request and marks it published in the same transaction. If Kafka does not acknowledge, the
 * transaction rolls back and the rows stay for the next round; if the commit fails after Kafka
 * acknowledged, the rows are published again later with the same ids, which the projector ignores.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly options: OutboxParts & {
      batchSize?: number;
      /** Called after each round that published something. */
      onPublished?: (count: number) => void;
    },
  ) {}

  async runOnce(): Promise<RelayRound> {
    const { pool, appender } = this.options;
    const round = await inTransaction(pool, async (client) => {
      // (Not `seq::text`: that output column would be what ORDER BY seq sorts, as text: '10' < '9'.)
      const locked = await client.query<OutboxRow & { aggregate_key: string }>(
        `select seq::text as seq_text, aggregate_key, event, trace_parent, trace_state from platform.outbox
         where published_at is null and topic = $2 order by seq limit $1 for update skip locked`,
        [this.options.batchSize ?? 500, this.options.topic],
      );
      if (locked.rows.length === 0) return { published: 0, held: 0 };
      const rows: (LockedRow & { event: SwapEvent; trace: KeptTraceContext | undefined })[] = locked.rows.map(
        (r) => ({
          seq: BigInt(r.seq_text),
          key: r.aggregate_key,
          event: r.event,
          trace: keptTraceOf(r),
        }),
      );
      const pending = await pendingSeqsByKey(
        client,
        this.options.topic,
        rows.map((r) => r.key),
      );
      const allowed = new Set(publishableSeqs(rows, pending));
      const publish = rows.filter((r) => allowed.has(r.seq));
      if (publish.length > 0) {
        await appender.appendAll(
          publish.map((r) => r.event),
          publish.map((r) => r.trace),
        );
        await markPublished(
          client,
          publish.map((r) => r.seq),
        );
      }
      return { published: publish.length, held: rows.length - publish.length };
    });
    if (round.published > 0) {
      this.options.metrics?.relayed.inc({}, round.published);
      this.options.onPublished?.(round.published);
    }
    return round;
  }

  /** Rounds until nothing more can be published now. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const round = await this.runOnce();
      total += round.published;
      if (round.published === 0) return total;
    }
  }

  /** Runs `drain` every `intervalMs` (one round at a time) until stop(). */
  start(intervalMs: number): void {
    this.stopped = false;
    const tick = () => {
      if (this.stopped) return;
      this.running = this.drain()
        .then((n) => {
          if (n > 0) this.options.logger.info({ published: n }, 'outbox relayed');
        })
        .catch((e: unknown) => {
          this.options.metrics?.relayFailures.inc();
          this.options.logger.warn({ err: e }, 'outbox relay round failed; rows stay for the next round');
        })
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.timer = setTimeout(tick, intervalMs);
        });
    };
    this.timer = setTimeout(tick, intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}

/**
 * `ensureKeyPublished(key)`: before an event of `key` goes straight to Kafka (a status webhook, a
 * poll), the key's unpublished outbox rows are published first, in order, so the new event never
 * overtakes them (the projector would reject a StatusReported that arrives before its SwapCreated).
 * The check that nothing is pending costs one indexed query, shared by the calls waiting at the same
 * moment (`maxInFlight` queries at most, the rest batched behind them). Throws what the appender
 * throws (AppendTimeoutError) when Kafka does not acknowledge the flush.
 */
export function outboxKeyFlusher(options: {
  pool: pg.Pool;
  appender: Appender;
  /** The appender's topic. */
  topic: string;
  metrics?: OutboxMetrics;
  onPublished?: (count: number) => void;
  maxInFlight?: number;
}): (key: string) => Promise<void> {
  const pending = batchedPendingCheck(options.pool, options.topic, options.maxInFlight ?? 4);
  return async (key) => {
    if (!(await pending(key))) return;
    const published = await inTransaction(options.pool, async (client) => {
      // Blocks behind a relay that holds these rows; rows it published meanwhile no longer match.
      const rows = await client.query<OutboxRow>(
        `select seq::text as seq_text, event, trace_parent, trace_state from platform.outbox
         where aggregate_key = $1 and topic = $2 and published_at is null order by seq for update`,
        [key, options.topic],
      );
      if (rows.rows.length === 0) return 0;
      await options.appender.appendAll(
        rows.rows.map((r) => r.event),
        rows.rows.map(keptTraceOf),
      );
      await markPublished(
        client,
        rows.rows.map((r) => BigInt(r.seq_text)),
      );
      return rows.rows.length;
    });
    if (published > 0) {
      options.metrics?.relayed.inc({}, published);
      options.onPublished?.(published);
    }
  };
}

function batchedPendingCheck(
  pool: pg.Pool,
  topic: string,
  maxInFlight: number,
): (key: string) => Promise<boolean> {
  let queue: { key: string; resolve: (v: boolean) => void; reject: (e: Error) => void }[] = [];
  let inFlight = 0;
  const pump = () => {
    while (inFlight < maxInFlight && queue.length > 0) {
      const batch = queue.slice(0, 500);
      queue = queue.slice(batch.length);
      inFlight++;
      void keysWithPendingRows(
        pool,
        topic,
        batch.map((b) => b.key),
      )
        .then(
          (found) => batch.forEach((b) => b.resolve(found.has(b.key))),
          (e: Error) => batch.forEach((b) => b.reject(e)),
        )
        .finally(() => {
          inFlight--;
          pump();
        });
    }
  };
  return (key) =>
    new Promise((resolve, reject) => {
      queue.push({ key, resolve, reject });
      pump();
    });
}
