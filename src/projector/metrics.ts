import type { Admin } from 'kafkajs';
import type pg from 'pg';
import type { MetricsRegistry } from '../observability/metrics.ts';
import type { ReadinessCheck } from '../observability/listener.ts';
import type { PartitionLag } from './lag.ts';
import type { JournalRow } from './state.ts';
import { rejectionKind } from './decision.ts';
import { ProjectionWatch } from './watch.ts';

/** A committed batch as the projector reports it (ProjectorOptions.onBatch). */
export interface CommittedBatch {
  partition: number;
  events: number;
  journal: readonly JournalRow[];
  seconds?: number;
}

/**
 * The fold's reasons are sentences naming ids; a label needs a bounded code: the rejection kind of the
 * fold's own classifier (decision.ts, tied to the fold's reasons by a test).
 */
export function reasonCode(reason: string | null | undefined): string {
  return reason ? rejectionKind(reason) : 'none';
}

export interface ProjectorMetrics {
  /** Feed each committed batch here. */
  onBatch(batch: CommittedBatch): void;
  /** Partitions this member holds now (from the consumer group's assignment). */
  setAssigned(partitions: readonly number[]): void;
  /** Ready when this member holds partitions and none with a backlog went without a commit too long. */
  readiness: ReadinessCheck;
  close(): Promise<void>;
}

/**
 * Projector metrics: events by outcome (rejected by reason code), batch size and duration, and, read at
 * each scrape from Kafka's end offsets and the checkpoints in Postgres, the lag and stall per partition (so a
 * stopped or stuck consumer shows its lag rising) and the age of each assigned partition's last commit.
 */
export function createProjectorMetrics(
  metrics: MetricsRegistry,
  deps: { admin: Admin; pool: pg.Pool; topic: string; stallSeconds: number; now?: () => number },
): ProjectorMetrics {
  const now = deps.now ?? Date.now;
  const events = metrics.counter(
    'swap_ledger_projector_events_total',
    'Events folded, by journal outcome and (for rejected and parked ones) a bounded reason code',
    ['outcome', 'reason'],
  );
  const batchEvents = metrics.histogram(
    'swap_ledger_projector_batch_events',
    'Events per committed projector batch',
    [],
    [1, 5, 10, 50, 100, 250, 500, 1000, 2000, 5000],
  );
  const batchSeconds = metrics.histogram(
    'swap_ledger_projector_batch_duration_seconds',
    'Time to fold and commit one projector batch',
    [],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  // Counted from the journal (outcome 'contradicted'): a partner reported a status against a final swap.
  const contradictions = metrics.counter(
    'swap_ledger_status_contradictions_total',
    'Status reports that contradict a final swap (recorded; reconciliation reopened)',
  );
  metrics.gauge(
    'swap_ledger_dead_letters_open',
    'Dead letters not yet retried or discarded (their keys are parked), read from the projection',
    [],
    async function () {
      try {
        const r = await deps.pool.query<{ n: number }>(
          `select count(*)::int as n from dead_letters where status = 'open'`,
        );
        this.set(r.rows[0]!.n);
      } catch {
        /* keep the last value */
      }
    },
  );
  const assigned = metrics.gauge(
    'swap_ledger_projector_assigned_partitions',
    'Partitions of the events topic this projector member holds',
  );
  const lastCommit = new Map<number, number>();
  let held: readonly number[] = [];
  const startedAt = now();
  // The lag and the stall per partition, read from Kafka and Postgres (./watch.ts: the reconcilers export them too).
  const watch = new ProjectionWatch(deps);
  watch.register(metrics);
  metrics.gauge(
    'swap_ledger_projector_checkpoint_age_seconds',
    'Seconds since this member last committed a batch of each partition it holds (since it took it, if none)',
    ['partition'],
    function () {
      this.reset();
      for (const p of held)
        this.set({ partition: String(p) }, (now() - (lastCommit.get(p) ?? startedAt)) / 1000);
    },
  );

  return {
    onBatch(batch) {
      lastCommit.set(batch.partition, now());
      batchEvents.observe(batch.events);
      if (batch.seconds !== undefined) batchSeconds.observe(batch.seconds);
      for (const row of batch.journal) {
        const withReason = row.outcome === 'rejected' || row.outcome === 'parked';
        events.inc({ outcome: row.outcome, reason: withReason ? reasonCode(row.reason) : '' });
        if ((row.outcome as string) === 'contradicted') contradictions.inc();
      }
    },
    setAssigned(partitions) {
      const t = now();
      for (const p of partitions) if (!held.includes(p)) lastCommit.set(p, t);
      held = [...partitions];
      assigned.set(held.length);
    },
    readiness: {
      name: 'projector',
      async check() {
        if (held.length === 0) return { ok: false, detail: 'no partition assigned' };
        let lag: PartitionLag[];
        try {
          lag = await watch.read();
        } catch (e) {
          return { ok: false, detail: `lag unknown: ${(e as Error).message}` };
        }
        const stalled = lag.filter(
          (p) =>
            held.includes(p.partition) &&
            p.lag > 0n &&
            now() - (lastCommit.get(p.partition) ?? startedAt) > deps.stallSeconds * 1000,
        );
        if (stalled.length > 0)
          return {
            ok: false,
            detail: `stalled: ${stalled.map((p) => `p${p.partition} lag ${p.lag}`).join(', ')}`,
          };
        return { ok: true, detail: `${held.length} partition(s) assigned` };
      },
    },
    close: () => watch.close(),
  };
}
