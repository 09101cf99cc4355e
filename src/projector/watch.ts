import type { Admin } from 'kafkajs';
import type pg from 'pg';
import type { MetricsRegistry } from '../observability/metrics.ts';
import { projectionLag, type PartitionLag } from './lag.ts';

export interface ProjectionWatchDeps {
  admin: Admin;
  pool: pg.Pool;
  topic: string;
  now?: () => number;
}

/**
 * The projection's lag and stall as read from Kafka's end offsets and the checkpoints in Postgres, not from a
 * consumer's memory: any process can export them, and the projector members and the reconcilers do. A
 * projector that is frozen, crash-looping or gone answers no scrape, so its own series vanish; the lag and
 * the stall must still show, from another process (the alerts take the max over all of them).
 */
export class ProjectionWatch {
  /** Per partition: the checkpoint last seen, and since when it has had a backlog without moving. */
  private readonly seen = new Map<number, { nextOffset: bigint; stalledSince: number }>();
  private pending: Promise<PartitionLag[]> | undefined;
  private connected: Promise<void> | undefined;
  private readonly now: () => number;
  /** The last lag read (kept when Kafka or Postgres stop answering). */
  last: PartitionLag[] = [];

  constructor(private readonly deps: ProjectionWatchDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** One read of Kafka and Postgres shared by its concurrent callers (the gauges of one scrape, readiness). */
  read(): Promise<PartitionLag[]> {
    return (this.pending ??= this.readNow().finally(() => setTimeout(() => (this.pending = undefined), 0)));
  }

  private async readNow(): Promise<PartitionLag[]> {
    await (this.connected ??= this.deps.admin.connect().catch((e: unknown) => {
      this.connected = undefined; // try again at the next read
      throw e;
    }));
    const client = await this.deps.pool.connect();
    try {
      this.last = await projectionLag(this.deps.admin, client, this.deps.topic);
    } finally {
      client.release();
    }
    const t = this.now();
    for (const p of this.last) {
      const before = this.seen.get(p.partition);
      // The clock restarts when the checkpoint moves or the partition is caught up: a stall is a backlog
      // waiting, not a quiet partition, nor a slow one that still commits (the lag alert covers that).
      if (!before || before.nextOffset !== p.nextOffset || p.lag === 0n)
        this.seen.set(p.partition, { nextOffset: p.nextOffset, stalledSince: t });
    }
    return this.last;
  }

  /** Seconds partition `p` has had a backlog with its checkpoint unmoved, as far as this process has watched. */
  stalledSeconds(partition: number): number {
    const s = this.seen.get(partition);
    return s ? (this.now() - s.stalledSince) / 1000 : 0;
  }

  /** Registers the two gauges, read at each scrape. */
  register(metrics: MetricsRegistry): void {
    const watch = this;
    metrics.gauge(
      'swap_ledger_projector_lag_events',
      'Events in the topic not yet folded into the projection, per partition (end offset - checkpoint)',
      ['partition'],
      async function () {
        try {
          for (const p of await watch.read()) this.set({ partition: String(p.partition) }, Number(p.lag));
        } catch {
          /* Kafka or Postgres unreachable: keep the last values; /readyz says why */
        }
      },
    );
    metrics.gauge(
      'swap_ledger_projector_stalled_seconds',
      'Seconds a partition has had a backlog while its checkpoint did not move (0 when caught up or moving), as this process has watched it',
      ['partition'],
      async function () {
        try {
          await watch.read();
        } catch {
          /* unreachable: the clock still runs from the last read */
        }
        for (const p of watch.seen.keys()) this.set({ partition: String(p) }, watch.stalledSeconds(p));
      },
    );
  }

  async close(): Promise<void> {
    if (this.connected) await this.deps.admin.disconnect();
  }
}
