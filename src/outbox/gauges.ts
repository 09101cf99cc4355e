import type pg from 'pg';
import type { MetricsRegistry } from '../observability/metrics.ts';

/**
 * Outbox depth and the age of its oldest unpublished event, read from Postgres at each scrape (the
 * outbox is shared by every gateway, so no process's counters could tell). A failed read leaves the
 * last values; the scrape itself does not fail.
 */
export function registerOutboxGauges(metrics: MetricsRegistry, pool: pg.Pool, topic: string): void {
  const read = async () =>
    (
      await pool.query<{ depth: number; oldest_s: number | null }>(
        `select count(*)::int as depth,
                extract(epoch from now() - min(created_at))::float8 as oldest_s
           from platform.outbox where published_at is null and topic = $1`,
        [topic],
      )
    ).rows[0]!;
  let last: Promise<{ depth: number; oldest_s: number | null }> | undefined;
  // One query per scrape for both gauges.
  const once = () => (last ??= read().finally(() => setTimeout(() => (last = undefined), 0)));
  metrics.gauge(
    'swap_ledger_outbox_depth',
    'Events in the outbox not yet published to Kafka',
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
    'swap_ledger_outbox_oldest_age_seconds',
    'Age of the oldest unpublished outbox event (0 when the outbox is empty)',
    [],
    async function () {
      try {
        this.set((await once()).oldest_s ?? 0);
      } catch {
        /* keep the last value */
      }
    },
  );
}
