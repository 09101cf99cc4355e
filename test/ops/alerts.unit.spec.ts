import { CaseNotifier, type CaseNotifierOptions } from '../../src/ops/case-notifier.ts';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Admin } from 'kafkajs';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createChainWatchMetrics } from '../../src/chainwatch/metrics.ts';
import { createGatewayMetrics } from '../../src/gateway/metrics.ts';
import { createWebhookMetrics } from '../../src/ingest/webhook/server.ts';
import { MetricsRegistry } from '../../src/observability/metrics.ts';
import { registerOutboxGauges } from '../../src/outbox/gauges.ts';
import { createPollerMetrics } from '../../src/poller/poller.ts';
import { createProjectorMetrics } from '../../src/projector/metrics.ts';
import { createReconcilerMetrics } from '../../src/reconciler/metrics.ts';
import { Reconciler, type ReconcilerOptions } from '../../src/reconciler/worker.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');

/** Debian's promtool (package prometheus; .ci/run installs it): missing, the test fails saying so, never skips. */
function promtool(args: string[]) {
  const run = spawnSync('promtool', args, { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  if (run.error)
    throw new Error(
      `promtool could not run (${run.error.message}): install Debian's package prometheus (apt-get install prometheus), as .ci/run does`,
    );
  return run;
}

/** Every metric name the code registers, in every process (registration does no I/O). */
function registeredNames(): Set<string> {
  const registry = new MetricsRegistry();
  const never = {} as pg.Pool; // gauges read it only when scraped
  createWebhookMetrics(registry);
  createGatewayMetrics(registry);
  registerOutboxGauges(registry, never, 'events');
  createPollerMetrics(registry);
  createChainWatchMetrics(registry);
  createProjectorMetrics(registry, { admin: {} as Admin, pool: never, topic: 'events', stallSeconds: 60 });
  createReconcilerMetrics(registry, never);
  new Reconciler({ metrics: registry } as unknown as ReconcilerOptions);
  new CaseNotifier({ metrics: registry, platform: never } as unknown as CaseNotifierOptions);
  registry.collectDefaults();
  return new Set(registry.names());
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring']);

/** Metric names a PromQL expression reads (strings, label matchers, ranges and label lists left out). */
export function metricNamesIn(expr: string): string[] {
  const e = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const m of e.matchAll(/(?<![\w.:])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    if (m[2] || KEYWORDS.has(m[1]!)) continue; // a function call or an operator
    names.push(m[1]!);
  }
  return names;
}

function unknownIn(expr: string, known: Set<string>): string[] {
  const base = (n: string) => n.replace(/_(bucket|sum|count)$/, '');
  return metricNamesIn(expr).filter((n) => !known.has(n) && !known.has(base(n)));
}

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: { severity?: string };
  annotations?: { summary?: string };
}

describe('ops/prometheus/alerts.yml', () => {
  const known = registeredNames();
  known.add('up'); // Prometheus's own series per scrape target (SwapLedgerWorkerDown)
  const doc = parseYaml(read('ops/prometheus/alerts.yml')) as { groups: { name: string; rules: Rule[] }[] };
  const rules = doc.groups.flatMap((g) => g.rules);

  it('reads metric names out of PromQL, so an unknown one is caught', () => {
    expect(
      metricNamesIn(
        'sum by (le, route) (rate(a_bucket{status=~"5.."}[5m])) / clamp_min(b_total, 1e-9) > 0 and on (p) c',
      ),
    ).toEqual(['a_bucket', 'b_total', 'c']);
    expect(unknownIn('rate(swap_ledger_nope_total[5m]) > 0', known)).toEqual(['swap_ledger_nope_total']);
    expect(
      unknownIn(
        'histogram_quantile(0.9, rate(swap_ledger_projector_batch_duration_seconds_bucket[5m]))',
        known,
      ),
    ).toEqual([]);
  });

  it('has every alert the runbook names, each with a severity and a summary', () => {
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        'SwapLedgerPartitionStalled',
        'SwapLedgerProjectorLag',
        'SwapLedgerOpenMismatches',
        'SwapLedgerStatusContradicted',
        'SwapLedgerDeadLetters',
        'SwapLedgerOutboxAge',
        'SwapLedgerWebhook5xx',
        'SwapLedgerReconciliationBacklog',
      ]),
    );
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
    for (const r of rules) {
      expect(['page', 'warn'], r.alert).toContain(r.labels?.severity);
      expect(r.annotations?.summary, r.alert).toBeTruthy();
      if (r.for !== undefined) expect(r.for, r.alert).toMatch(/^\d+[smh]$/);
    }
  });

  it('alerts on rejected events by kind, fold errors and database refusals apart (issue 34)', () => {
    const exprOf = (name: string) => rules.find((r) => r.alert === name)?.expr ?? '';
    expect(exprOf('SwapLedgerFoldErrors')).toMatch(/outcome="rejected", reason="fold_error"/);
    expect(exprOf('SwapLedgerDatabaseRefusals')).toMatch(/outcome="rejected", reason="database"/);
    expect(exprOf('SwapLedgerEventsRejected')).toMatch(/sum by \(reason\)/);
  });

  it('passes promtool check rules and test rules (alerts.test.yml), and the example config its check', () => {
    for (const args of [
      ['check', 'rules', 'ops/prometheus/alerts.yml'],
      ['test', 'rules', 'ops/prometheus/alerts.test.yml'],
      ['check', 'config', 'ops/prometheus/prometheus.yml'],
    ]) {
      const run = promtool(args);
      expect(run.status, `promtool ${args.join(' ')}:\n${run.stdout}${run.stderr}`).toBe(0);
    }
  });

  it('has a firing case in alerts.test.yml for every alert, and a quiet one for every paging alert', () => {
    const tests = (
      parseYaml(read('ops/prometheus/alerts.test.yml')) as {
        tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
      }
    ).tests.flatMap((t) => t.alert_rule_test ?? []);
    const firing = new Set(tests.filter((t) => (t.exp_alerts ?? []).length > 0).map((t) => t.alertname));
    const quiet = new Set(tests.filter((t) => (t.exp_alerts ?? []).length === 0).map((t) => t.alertname));
    expect(rules.filter((r) => !firing.has(r.alert)).map((r) => r.alert)).toEqual([]);
    const pages = rules.filter((r) => r.labels?.severity === 'page');
    expect(pages.filter((r) => !quiet.has(r.alert)).map((r) => r.alert)).toEqual([]);
    const known = new Set(rules.map((r) => r.alert));
    expect(tests.map((t) => t.alertname).filter((n) => !known.has(n))).toEqual([]);
  });

  it('names in every expr only metrics the code registers', () => {
    for (const r of rules) {
      expect(metricNamesIn(r.expr).length, r.alert).toBeGreaterThan(0);
      expect(unknownIn(r.expr, known), r.alert).toEqual([]);
    }
  });
});

describe('ops/grafana/dashboard.json', () => {
  const known = registeredNames();
  const dashboard = JSON.parse(read('ops/grafana/dashboard.json')) as {
    uid: string;
    panels: { id: number; type: string; title: string; targets?: { expr: string }[] }[];
  };

  it('queries only metrics the code registers, and shows every swap_ledger metric somewhere', () => {
    const exprs = dashboard.panels.flatMap((p) =>
      (p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr })),
    );
    expect(exprs.length).toBeGreaterThan(20);
    for (const { title, expr } of exprs) expect(unknownIn(expr, known), title).toEqual([]);
    const shown = new Set(
      exprs.flatMap(({ expr }) => metricNamesIn(expr).map((n) => n.replace(/_(bucket|sum|count)$/, ''))),
    );
    const ours = [...known].filter((n) => n.startsWith('swap_ledger_'));
    expect(ours.filter((n) => !shown.has(n))).toEqual([]);
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
  });
});
