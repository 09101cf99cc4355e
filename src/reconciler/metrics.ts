import type pg from 'pg';
import type { MetricsRegistry } from '../observability/metrics.ts';
import type { RecordedVerdict } from './worker.ts';

/**
 * Reconciler metrics beyond the verdict counter: the queue (depth and oldest age, read from the
 * projection at each scrape, since several reconcilers share it) and the time from a swap becoming final
 * to its verdict.
 */
export function createReconcilerMetrics(metrics: MetricsRegistry, projection: pg.Pool) {
  const latency = metrics.histogram(
    'swap_ledger_reconciliation_final_to_verdict_seconds',
    'Time from a swap becoming final to its reconciliation verdict being appended',
    [],
    [1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600, 4 * 3600, 24 * 3600],
  );
  const read = async () =>
    (
      await projection.query<{ depth: number; oldest_s: number | null }>(
        `select count(*)::int as depth, extract(epoch from now() - min(queued_at))::float8 as oldest_s
           from reconciliation_queue`,
      )
    ).rows[0]!;
  let pending: ReturnType<typeof read> | undefined;
  const once = () => (pending ??= read().finally(() => setTimeout(() => (pending = undefined), 0)));
  metrics.gauge(
    'swap_ledger_reconciliation_queue_depth',
    'Swaps queued for reconciliation (final or corrected) awaiting a verdict',
    [],
    async function () {
      try {
        this.set((await once()).depth);
      } catch {
        /* keep the last value */
      }
    },
  );
  metrics.gauge(
    'swap_ledger_reconciliation_oldest_queued_age_seconds',
    'Age of the oldest swap in the reconciliation queue (0 when empty)',
    [],
    async function () {
      try {
        this.set((await once()).oldest_s ?? 0);
      } catch {
        /* keep the last value */
      }
    },
  );
  metrics.gauge(
    'swap_ledger_reconciliation_open_mismatches',
    'Swaps whose latest reconciliation verdict is MISMATCH (until corrected and reconciled again)',
    [],
    async function () {
      try {
        const r = await projection.query<{ n: number }>(
          `select count(*)::int as n from reconciliations where verdict = 'MISMATCH'`,
        );
        this.set(r.rows[0]!.n);
      } catch {
        /* keep the last value */
      }
    },
  );
  return {
    /** For ReconcilerOptions.onVerdict: observes final -> verdict from the swap's final_at, read with it. */
    onVerdict(v: RecordedVerdict): void {
      if (v.finalAtMs !== null) latency.observe(Math.max(0, (Date.parse(v.occurredAt) - v.finalAtMs) / 1000));
    },
  };
}
