import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import type { UpProcess } from '../console/up-process.ts';

const OPS = fileURLToPath(new URL('../../ops/prometheus/', import.meta.url));
const WATCHED = [
  'SwapLedgerProjectorLag',
  'SwapLedgerPartitionStalled',
  'SwapLedgerProjectorUnassigned',
  'SwapLedgerWorkerDown',
];

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/**
 * The production rules of the watched alerts with test-sized durations and thresholds: `for:` of
 * 2 to 10 minutes and a stall of 5 minutes would make a test of a quarter hour. Only these numbers change
 * (each replaced where the production text has it, checked), never the expressions' shape.
 */
function testSizedRules(text: string): Rule[] {
  const rules = (parseYaml(text) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
  const swap = (r: Rule, from: string, to: string) => {
    if (!r.expr.includes(from)) throw new Error(`${r.alert}: no "${from}" in its expr to shorten`);
    return r.expr.replace(from, to);
  };
  return WATCHED.map((name) => {
    const r = rules.find((x) => x.alert === name);
    if (!r) throw new Error(`no alert ${name} in ops/prometheus/alerts.yml`);
    const expr =
      name === 'SwapLedgerProjectorLag'
        ? swap(r, '> 10000', '> 2') // events behind
        : name === 'SwapLedgerPartitionStalled'
          ? swap(r, '> 300', '> 3') // seconds of a backlog waiting
          : r.expr;
    return { ...r, expr, for: '2s' };
  });
}

/** The example's scrape jobs (ops/prometheus/prometheus.yml), pointed at the ports `up` printed. */
function scrapeJobs(text: string, targets: { worker: string; at: string }[]) {
  const jobs = (parseYaml(text) as { scrape_configs: { job_name: string }[] }).scrape_configs;
  return targets.map((t) => {
    const job = jobs.find((j) => j.job_name === `swap-ledger-${t.worker}`);
    if (!job) throw new Error(`ops/prometheus/prometheus.yml has no job swap-ledger-${t.worker}`);
    return { ...job, static_configs: [{ targets: [t.at] }] };
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
  value: string;
}

/**
 * Issue 37: Debian's prometheus scraping the workers under `up` (with the demo making swaps) by the example's
 * jobs, evaluating the project's own alerts (test-sized, above) every second. The projector is frozen
 * (SIGSTOP: alive to `up`, answering nothing): the lag and the stall must fire from the reconciler's view of
 * Kafka and Postgres, and the missing projector page (unassigned, worker down); after SIGCONT all four resolve.
 * Registered inside the console e2e file (test/console/console.e2e.spec.ts) on its `up`: one `up --demo`
 * for both, this block after the console's reads and before its worker kill, so neither sees the other's harm.
 */
export function describePrometheusUnderUp(upOf: () => UpProcess): void {
  describe('prometheus against the workers under up: the projector frozen, then resumed', () => {
    let up: UpProcess;
    let prometheus: ChildProcess | undefined;
    let promLog = '';
    let promUrl = '';
    let projectorPid: number | undefined;
    let dir = '';
    let jobs: string[] = [];

    const api = async <T>(path: string): Promise<T> => {
      const res = await fetch(`${promUrl}${path}`);
      if (!res.ok) throw new Error(`prometheus ${path}: HTTP ${res.status} ${await res.text()}`);
      return ((await res.json()) as { data: T }).data;
    };
    const alerts = async () => (await api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts;
    const firing = async () =>
      new Set((await alerts()).filter((a) => a.state === 'firing').map((a) => a.labels.alertname!));
    const query = async (q: string) =>
      (
        await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
          `/api/v1/query?query=${encodeURIComponent(q)}`,
        )
      ).result;
    const until = async <T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, ms: number) => {
      const deadline = Date.now() + ms;
      let last: T | undefined;
      for (;;) {
        last = await read();
        if (ok(last)) return last;
        if (Date.now() > deadline)
          throw new Error(
            `${what} not within ${ms} ms; last: ${JSON.stringify(last, (_, v) => (v instanceof Set ? [...v] : v))}\n` +
              `alerts: ${JSON.stringify(await alerts().catch((e: Error) => e.message))}\n` +
              `prometheus log: ${promLog.slice(-1500)}\nup: ${up.output().slice(-1500)}`,
          );
        await new Promise((r) => setTimeout(r, 500));
      }
    };

    beforeAll(async () => {
      // No prometheus fails at once, naming the package (.ci/run installs it).
      const version = spawnSync('prometheus', ['--version'], { encoding: 'utf8' });
      if (version.error)
        throw new Error(
          `prometheus could not run (${version.error.message}): install Debian's package prometheus, as .ci/run does`,
        );
      up = upOf();
      const line = (
        await up.waitFor(/metrics and health \(\/metrics \/healthz \/readyz\): (.+)/, 90_000)
      )[1]!;
      const targets = [...line.matchAll(/([\w-]+) http:\/\/([\w.:[\]]+)/g)].map((m) => ({
        worker: m[1]!,
        at: m[2]!,
      }));
      jobs = targets.map((t) => `swap-ledger-${t.worker}`);
      expect(targets.map((t) => t.worker)).toEqual(
        expect.arrayContaining(['projector', 'reconciler', 'webhook', 'gateway', 'poller']),
      );
      await up.waitFor(/all workers ready/, 90_000);
      projectorPid = up.pidOf('projector');
      expect(projectorPid).toBeGreaterThan(0);

      dir = mkdtempSync(join(tmpdir(), 'prometheus-'));
      writeFileSync(
        join(dir, 'rules.yml'),
        toYaml({
          groups: [
            {
              name: 'swap-ledger-test-sized',
              rules: testSizedRules(readFileSync(join(OPS, 'alerts.yml'), 'utf8')),
            },
          ],
        }),
      );
      writeFileSync(
        join(dir, 'prometheus.yml'),
        toYaml({
          global: { scrape_interval: '1s', scrape_timeout: '800ms', evaluation_interval: '1s' },
          rule_files: [join(dir, 'rules.yml')],
          scrape_configs: scrapeJobs(readFileSync(join(OPS, 'prometheus.yml'), 'utf8'), targets),
        }),
      );
      const port = await freePort();
      promUrl = `http://127.0.0.1:${port}`;
      prometheus = spawn(
        'prometheus',
        [
          `--config.file=${join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(dir, 'data')}`,
          '--storage.tsdb.retention.time=1h',
          `--web.listen-address=127.0.0.1:${port}`,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      prometheus.stdout!.on('data', (d) => (promLog += d));
      prometheus.stderr!.on('data', (d) => (promLog += d));
      await until(
        'prometheus ready',
        () =>
          fetch(`${promUrl}/-/ready`).then(
            (r) => r.status,
            () => 0,
          ),
        (s) => s === 200,
        30_000,
      );
    });

    afterAll(async () => {
      // Never leave a stopped process behind: `up` would wait 15 s on it, then kill it.
      if (projectorPid) {
        try {
          process.kill(projectorPid, 'SIGCONT');
        } catch {
          /* already gone */
        }
      }
      if (prometheus && prometheus.exitCode === null) {
        const gone = new Promise((r) => prometheus!.once('exit', r));
        prometheus.kill('SIGTERM');
        await gone;
      }
      // `up` is the console file's: it stops it.
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('scrapes every worker, the reconciler among them reporting the lag, all quiet while the projector keeps up', async () => {
      await until(
        'every target up',
        () => query('up'),
        (r) => r.length === jobs.length && r.every((s) => s.value[1] === '1'),
        20_000,
      );
      await until(
        "the reconciler's lag per partition",
        () => query('swap_ledger_projector_lag_events{job="swap-ledger-reconciler"}'),
        (r) => r.length > 0,
        30_000,
      );
      // The starting state is quiet, so what fires next is the freeze's doing.
      await until('no projector alert firing', firing, (f) => WATCHED.every((a) => !f.has(a)), 30_000);
    }, 90_000);

    it('fires the lag, the stalled partition and the missing projector while the projector is frozen', async () => {
      const t0 = Date.now();
      process.kill(projectorPid!, 'SIGSTOP');
      const fired = await until(
        'the four alerts firing',
        firing,
        (f) => WATCHED.every((a) => f.has(a)),
        60_000,
      );
      console.log(`projector frozen: ${[...fired].join(', ')} firing after ${Date.now() - t0} ms`);
      // The projector answers no scrape: its own series are gone, and the lag is the reconciler's reading.
      expect((await query('up{job="swap-ledger-projector"}'))[0]?.value[1]).toBe('0');
      expect(await query('swap_ledger_projector_lag_events{job="swap-ledger-projector"}')).toEqual([]);
      const down = (await alerts()).filter(
        (a) => a.labels.alertname === 'SwapLedgerWorkerDown' && a.state === 'firing',
      );
      expect(down.map((a) => a.labels.job)).toEqual(['swap-ledger-projector']);
      const lag = Number(
        (await query('sum(max by (partition) (swap_ledger_projector_lag_events))'))[0]!.value[1],
      );
      expect(lag).toBeGreaterThan(2);
      console.log(`projector frozen: ${lag} events behind, by the reconciler's reading`);
      const stalled = (await alerts()).filter(
        (a) => a.labels.alertname === 'SwapLedgerPartitionStalled' && a.state === 'firing',
      );
      expect(stalled.length).toBeGreaterThan(0);
      expect(stalled.every((a) => a.labels.severity === 'page' && a.labels.partition !== undefined)).toBe(
        true,
      );
    }, 75_000);

    it('resolves all four once the projector runs again and catches up', async () => {
      const t0 = Date.now();
      process.kill(projectorPid!, 'SIGCONT');
      await until('the four alerts resolved', firing, (f) => WATCHED.every((a) => !f.has(a)), 60_000);
      console.log(`projector resumed: the alerts resolved after ${Date.now() - t0} ms`);
      expect((await query('up{job="swap-ledger-projector"}'))[0]?.value[1]).toBe('1');
      // The same process, never restarted by `up`: it was frozen, not dead.
      expect(up.pidOf('projector')).toBe(projectorPid);
    }, 75_000);
  });
}
