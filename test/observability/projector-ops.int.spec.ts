import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { lifecycleScenario } from '../../src/testing/scenarios.ts';
import { migrateProjection } from '../../src/db/migrate.ts';
import { createPool } from '../../src/db/client.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { metricValue } from '../ingest/webhook-support.ts';

/** A projector's metrics listener scraped as Prometheus would, against the real stack. */
describe('projector metrics and readiness (real Kafka, registry and Postgres)', () => {
  const stack = testStack();
  const logger = createLogger({ level: 'warn', name: 'projector-ops-test' });
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let running: RunningProjector;
  let pool: pg.Pool;

  const scrape = async () => {
    const res = await fetch(`${running.ops!.url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const lag = [0, 1].map(
      (p) => metricValue(text, `swap_ledger_projector_lag_events{partition="${p}"}`) ?? NaN,
    );
    return { text, lag: lag.reduce((a, b) => a + b, 0), lagByPartition: lag };
  };
  const ready = async () => {
    const res = await fetch(`${running.ops!.url}/readyz`);
    return {
      status: res.status,
      body: (await res.json()) as { checks: { name: string; ok: boolean; detail: string }[] },
    };
  };
  const until = async <T>(what: () => Promise<T>, ok: (v: T) => boolean, ms = 60_000): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await what();
      if (ok(v) || Date.now() > deadline) return v;
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  beforeAll(async () => {
    log = await freshEventLog(2);
    const schema = uniqueName('ops', '_');
    await migrateProjection(stack.databaseUrl, schema);
    pool = createPool(stack.databaseUrl, { searchPath: schema });
    running = await startProjector({ ...projectionConfig(log, schema), METRICS_PORT: 0 }, logger);
  });

  afterAll(async () => {
    await running?.stop();
    await log?.close();
    await pool?.end();
  });

  it('says alive at once, ready once assigned, and counts folded events by outcome', async () => {
    expect((await fetch(`${running.ops!.url}/healthz`)).status).toBe(200);
    const events = lifecycleScenario(40, 3);
    await log.append(events);
    await waitForProjection(pool, log.topic);
    const r = await until(ready, (x) => x.status === 200);
    expect(r.status).toBe(200);
    expect(r.body.checks.map((c) => [c.name, c.ok])).toEqual([
      ['kafka', true],
      ['schema-registry', true],
      ['postgres', true],
      ['projector', true],
    ]);
    const { text, lagByPartition } = await scrape();
    expect(lagByPartition).toEqual([0, 0]);
    expect(metricValue(text, 'swap_ledger_projector_assigned_partitions')).toBe(2);
    const journal = await pool.query<{ outcome: string; n: number }>(
      'select outcome, count(*)::int as n from event_journal group by outcome',
    );
    const applied = journal.rows.find((row) => row.outcome === 'applied')!.n;
    expect(metricValue(text, 'swap_ledger_projector_events_total{outcome="applied",reason=""}')).toBe(
      applied,
    );
    expect(metricValue(text, 'swap_ledger_projector_batch_events_sum')).toBe(
      journal.rows.reduce((a, row) => a + row.n, 0) +
        (events.length - new Set(events.map((e) => e.eventId)).size),
    );
    expect(metricValue(text, 'swap_ledger_projector_batch_duration_seconds_count')).toBeGreaterThan(0);
    expect(text).toMatch(/^swap_ledger_projector_checkpoint_age_seconds\{partition="0"\} [\d.e-]+$/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes /m);
    expect(metricValue(text, 'swap_ledger_dead_letters_open')).toBe(0);
    expect(metricValue(text, 'swap_ledger_status_contradictions_total')).toBe(0);
  });

  it('refuses to start on a metrics port already taken (before joining the group)', async () => {
    const port = Number(new URL(running.ops!.url).port);
    const schema = uniqueName('ops_taken', '_');
    await expect(
      startProjector({ ...projectionConfig(log, schema), METRICS_PORT: port }, logger, {
        groupId: uniqueName('taken'),
      }),
    ).rejects.toThrow(/EADDRINUSE/);
  });

  it('shows the lag rising while the projector is stopped, and falling to 0 after it resumes', async () => {
    await running.projector.stop();
    const more = lifecycleScenario(30, 11);
    await log.append(more);
    const stopped = await until(scrape, (s) => s.lag >= more.length);
    expect(stopped.lag).toBe(more.length);
    // The stall clock of a partition with a backlog runs while its checkpoint does not move.
    const stalled = (text: string) =>
      Math.max(
        ...[0, 1].map(
          (p) => metricValue(text, `swap_ledger_projector_stalled_seconds{partition="${p}"}`) ?? NaN,
        ),
      );
    await new Promise((r) => setTimeout(r, 1200));
    expect(stalled((await scrape()).text)).toBeGreaterThanOrEqual(1);
    const notReady = await ready();
    expect(notReady.status).toBe(503);
    expect(notReady.body.checks.find((c) => c.name === 'projector')).toEqual({
      name: 'projector',
      ok: false,
      detail: 'no partition assigned',
    });

    await running.projector.start();
    const resumed = await until(scrape, (s) => s.lag === 0);
    expect(resumed.lagByPartition).toEqual([0, 0]);
    expect(stalled(resumed.text)).toBeLessThan(1); // caught up: the clock restarts
    expect((await until(ready, (x) => x.status === 200)).status).toBe(200);
  });
});
