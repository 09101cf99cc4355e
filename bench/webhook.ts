/**
 * Webhook intake under load (issue 15), on the real Kafka, registry and Postgres:
 *
 *   npm run bench:webhook -- [--swaps 2000] [--seconds 20] [--connections 64] [--profile <dir>]
 *
 * Starts `swap-ledger projector run` and `swap-ledger webhook serve` as their own processes on a topic and
 * projection schema of their own, provisions a provider and N open swaps (SwapCreated folded), then drives
 * `wrk` with a Lua script that posts valid PENDING / ON_HOLD reports round-robin over the swaps. Reports
 * req/s and p99 of the 200 path beside the same server's ceiling on the 401 path (no Postgres, no Kafka),
 * and the time from a 200 to the report being visible in the projection, sampled on swaps wrk leaves alone.
 * Both paths are measured after an untimed warm-up of the 200 path that the projector has folded.
 */
import os from 'node:os';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'node:http';
import type pg from 'pg';
import { createPool } from '../src/db/client.ts';
import { migrateProjection } from '../src/db/migrate.ts';
import { createKafka, createTopicsReady } from '../src/events/index.ts';
import { generateApiKey } from '../src/providers/api-keys.ts';
import { freePort } from '../src/demo/provision.ts';
import { swapCreated } from '../src/testing/events.ts';
import { appendAll } from './replay.ts';
import {
  coresAllow,
  cpuPerItem,
  cpuReading,
  endpoints,
  intOption,
  machine,
  printFigures,
  round,
  type BenchResult,
  resultFile,
  stringOption,
  type Figure,
} from './common.ts';
import { regenerateReadme } from './readme.ts';

const BIN = fileURLToPath(new URL('../bin/swap-ledger.mjs', import.meta.url));
const LUA = fileURLToPath(new URL('./webhook.lua', import.meta.url));

interface WrkReport {
  requests: number;
  seconds: number;
  rps: number;
  p50ms: number;
  p99ms: number;
  codes: Record<string, number>;
  errors: number;
}

function requireWrk(): void {
  const found = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (found.error)
    throw new Error('wrk is not installed: apt-get install wrk (Debian package), then run again');
}

/** A swap-ledger command in its own process; resolves once `ready` appears in its output. */
function startChild(args: string[], env: Record<string, string>, ready: RegExp, nodeArgs: string[] = []) {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, BIN, ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let isReady = false;
  const started = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start:\n${output}`)), 60_000);
    // Drained at once and kept short: a child blocked on a full pipe (a 401 logs a line) would slow the
    // very server being measured, and a scan of all its output on each chunk would load this process.
    const onData = (d: Buffer) => {
      output = (output + d.toString()).slice(-65_536);
      if (isReady) return;
      const m = ready.exec(output);
      if (m) {
        isReady = true;
        clearTimeout(timer);
        resolve(m[1] ?? '');
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) =>
      reject(new Error(`${args.join(' ')} exited (${code}):\n${output.slice(-2000)}`)),
    );
  });
  return {
    started,
    pid: child.pid,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** wrk in a child process, not spawnSync: the visibility sampler runs on this event loop meanwhile. */
function runWrk(
  url: string,
  seconds: number,
  connections: number,
  env: Record<string, string>,
): Promise<WrkReport> {
  const threads = Math.min(2, os.availableParallelism());
  const args = [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', LUA, url];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, {
      env: { ...process.env, ...env, WRK_THREADS: String(threads) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || !line) return reject(new Error(`wrk failed (${code}):\n${out}`));
      resolve(JSON.parse(line) as WrkReport);
    });
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

function post(url: string, body: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-api-key': key,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls a `select count(*) as n` until it reaches `n`: the projector has folded that far. */
async function untilCount(pool: pg.Pool, n: number, text: string, values: unknown[] = []): Promise<void> {
  while (Number((await pool.query<{ n: string }>(text, values)).rows[0]!.n) < n) await sleep(200);
}

/** The samples of a Prometheus text exposition that have no labels, by name. */
async function scrape(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(url)).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-z_:][a-z0-9_:]*) ([0-9.e+-]+)$/i.exec(line);
    if (m) values.set(m[1]!, Number(m[2]));
  }
  return values;
}

/**
 * While wrk runs: one report at a time to swaps of their own, each timed from its 200 to its journal row
 * (polled every 5 ms), so the figure is what a reader of the projection sees.
 */
async function sampleVisibility(
  base: string,
  projection: pg.Pool,
  provider: string,
  key: string,
  swaps: string[],
  until: () => boolean,
): Promise<number[]> {
  const delays: number[] = [];
  for (let i = 0; !until(); i++) {
    const swapId = swaps[i % swaps.length]!;
    const status = Math.floor(i / swaps.length) % 2 === 0 ? 'ON_HOLD' : 'PENDING';
    const count = async () =>
      Number(
        (
          await projection.query<{ n: string }>(
            'select count(*) as n from event_journal where provider_id = $1 and swap_id = $2',
            [provider, swapId],
          )
        ).rows[0]!.n,
      );
    const before = await count();
    const code = await post(
      `${base}/webhook/${swapId}/status`,
      JSON.stringify({ providerId: provider, providerStatus: status, amount: '0.25' }),
      key,
    );
    const ok = performance.now();
    if (code !== 200) continue;
    while ((await count()) <= before) {
      if (performance.now() - ok > 30_000) throw new Error(`report to ${swapId} not visible after 30 s`);
      await sleep(5);
    }
    delays.push(performance.now() - ok);
    // 50-150 ms, not 100: the samplers' reports become visible in the same fold, and a fixed pause kept them
    // in step ever after, four samples of each moment instead of four moments.
    await sleep(50 + Math.random() * 100);
  }
  return delays;
}

const SAMPLERS = 4;
const WARM_UP_SECONDS = 5;

/** How far each sample of a Prometheus scrape moved between two scrapes. */
const deltaOf =
  (before: Map<string, number>, after: Map<string, number>) =>
  (name: string): number =>
    (after.get(name) ?? NaN) - (before.get(name) ?? 0);

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

async function main() {
  requireWrk();
  const loadAtStart = round(os.loadavg()[0]!, 2);
  const swapCount = intOption('swaps', 2000);
  const duration = intOption('seconds', 20);
  const connections = intOption('connections', 64);
  const env = await endpoints();
  const run = randomBytes(3).toString('hex');
  const topic = `bench.${run}.webhook`;
  const schema = `bench_${run}_webhook`;
  const provider = `bench-${run}`;
  const key = generateApiKey();
  const prefix = `bench-${run}-`;
  const sampled = Array.from({ length: 20 }, (_, i) => `${prefix}sample-${i}`);

  const kafka = createKafka({ brokers: env.KAFKA_BROKERS.split(','), clientId: 'bench-webhook' });
  const admin = kafka.admin();
  await admin.connect();
  await createTopicsReady(admin, [
    { topic, numPartitions: 12 },
    { topic: `${topic}.dlq`, numPartitions: 1 },
  ]);
  await migrateProjection(env.DATABASE_URL, schema);
  const projection = createPool(env.DATABASE_URL, { searchPath: schema, max: 1 + SAMPLERS });
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-webhook-'));
  const providersFile = join(dir, 'providers.yaml');
  writeFileSync(
    providersFile,
    [
      'providers:',
      `  - id: ${provider}`,
      '    enabled: true',
      '    client: { baseUrl: "https://bench.example/v2", headers: { x-partner-key: "${BENCH_PARTNER_KEY}" } }',
      `    webhookKeys: [{ keyId: k1, sha256: "${key.sha256}" }]`,
      '    rateLimit: { perSecond: 1000000, burst: 1000000 }',
      '',
    ].join('\n'),
  );
  const childEnv = {
    BENCH_PARTNER_KEY: 'bench',
    DATABASE_URL: env.DATABASE_URL,
    KAFKA_BROKERS: env.KAFKA_BROKERS,
    SCHEMA_REGISTRY_URL: env.SCHEMA_REGISTRY_URL,
    EVENTS_TOPIC: topic,
    DLQ_TOPIC: `${topic}.dlq`,
    PROJECTION_SCHEMA: schema,
    PROVIDERS_FILE: providersFile,
    LOG_LEVEL: 'info',
  };
  // --profile: the webhook and the projector each write a V8 CPU profile when they stop, in
  // <dir>/webhook and <dir>/projector (bench/profile-top.ts reads them).
  const profileDir = stringOption('profile');
  const cpuProf = (name: string) =>
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, name)}`] : [];
  // The projector's metrics too: its batches under the load (how many, how large, how long).
  const projectorMetricsPort = await freePort();
  const projector = startChild(
    ['projector', 'run'],
    { ...childEnv, METRICS_PORT: String(projectorMetricsPort), METRICS_HOST: '127.0.0.1' },
    /projector started/,
    cpuProf('projector'),
  );
  // The webhook's own metrics (its metrics listener): the produce requests' sizes and its event loop.
  const metricsPort = await freePort();
  const webhook = startChild(
    ['webhook', 'serve', '--port', '0'],
    { ...childEnv, METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' },
    /"url":"(http:\/\/[^"]+)"[^\n]*webhook server listening/,
    cpuProf('webhook'),
  );
  try {
    const ids = [...Array.from({ length: swapCount }, (_, i) => `${prefix}${i}`), ...sampled];
    await appendAll(
      kafka,
      env,
      topic,
      ids.map((id) => swapCreated(id, { providerId: provider })),
    );
    await projector.started;
    const base = await webhook.started;
    await untilCount(projection, ids.length, 'select count(*) as n from swaps where provider_id = $1', [
      provider,
    ]);
    console.log(`${ids.length} open swaps folded; wrk ${connections} connections, ${duration} s per path\n`);
    const wrkEnv = { BENCH_PROVIDER: provider, BENCH_PREFIX: prefix, BENCH_SWAPS: String(swapCount) };
    // A warm-up on the 200 path, untimed, until the projector has folded it: a first run after the stack
    // started measured the broker's and the two processes' JIT, not their steady state.
    const warmUp = await runWrk(base, WARM_UP_SECONDS, connections, { ...wrkEnv, BENCH_KEY: key.key });
    const journaled = ids.length + (warmUp.codes['200'] ?? 0);
    await untilCount(projection, journaled, 'select count(*) as n from event_journal');

    // The ceiling: the same server refusing a wrong key (no Postgres, no Kafka), half as long.
    const ceiling = await runWrk(base, Math.max(5, Math.round(duration / 2)), connections, {
      ...wrkEnv,
      BENCH_KEY: 'not-a-key',
    });
    // Read just before the 200 run: prom-client's event loop figures restart at each scrape.
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const projectorMetricsUrl = `http://127.0.0.1:${projectorMetricsPort}/metrics`;
    const before = await scrape(metricsUrl);
    const projectorBefore = await scrape(projectorMetricsUrl);
    let running = true;
    // Four samplers, each on five swaps of its own: about 300 samples in 20 s, where one gave 76 and its
    // p99 was its largest sample.
    const sampling = Array.from({ length: SAMPLERS }, (_, lane) =>
      sampleVisibility(
        base,
        projection,
        provider,
        key.key,
        sampled.filter((_, i) => i % SAMPLERS === lane),
        () => !running,
      ),
    );
    const processes = { webhook: webhook.pid, projector: projector.pid };
    const cpuBefore = cpuReading(processes);
    const accepted = await runWrk(base, duration, connections, { ...wrkEnv, BENCH_KEY: key.key });
    const cpu = cpuPerItem(cpuBefore, cpuReading(processes), accepted.codes['200'] ?? 1);
    running = false;
    const delays = (await Promise.all(sampling)).flat();

    const after = await scrape(metricsUrl);
    const projectorAfter = await scrape(projectorMetricsUrl);
    const projectorDelta = deltaOf(projectorBefore, projectorAfter);
    const batches = projectorDelta('swap_ledger_projector_batch_duration_seconds_count');
    const projectorNote = `projector: ${batches} batches of ${round(projectorDelta('swap_ledger_projector_batch_events_sum') / batches, 1)} events on average, ${round((projectorDelta('swap_ledger_projector_batch_duration_seconds_sum') / batches) * 1000, 1)} ms each`;
    console.log(projectorNote);
    const delta = deltaOf(before, after);
    const produceRequests = delta('swap_ledger_event_append_batch_messages_count');
    const server = `${produceRequests} produce requests of ${round(delta('swap_ledger_event_append_batch_messages_sum') / produceRequests, 1)} messages on average; webhook event loop delay p50 ${round((after.get('nodejs_eventloop_lag_p50_seconds') ?? NaN) * 1000, 1)} ms, p99 ${round((after.get('nodejs_eventloop_lag_p99_seconds') ?? NaN) * 1000, 1)} ms, max ${round((after.get('nodejs_eventloop_lag_max_seconds') ?? NaN) * 1000, 1)} ms; webhook CPU ${round(delta('process_cpu_seconds_total'), 1)} s in ${round(accepted.seconds, 1)} s`;
    console.log(server);
    const cores = os.availableParallelism();
    // wrk has ended by the second reading: its share is in what the machine spent beyond the named ones.
    const named =
      (cpu.webhook ?? 0) + (cpu.projector ?? 0) + cpu.postgres + cpu.kafka + cpu.registry + cpu.self;
    const cpuNote = `CPU a 200: webhook ${cpu.webhook ?? 0} µs, projector ${cpu.projector ?? 0} µs, Postgres ${cpu.postgres} µs, Kafka ${cpu.kafka} µs, registry ${cpu.registry} µs, the samplers ${cpu.self} µs, the rest (wrk, the kernel) ${round(cpu.machine - named)} µs; machine ${cpu.machine} µs in all (at that cost its ${cores} cores allow ${coresAllow(cpu.machine)} req/s)`;
    console.log(cpuNote);
    const ok = accepted.codes['200'] ?? 0;
    const okRate = Math.round(ok / accepted.seconds);
    const visibility = percentile(delays, 99);
    const figures: Figure[] = [
      {
        name: 'webhook 200 path',
        value: okRate,
        unit: 'req/s',
        reference: { name: 'same server, 401 path', value: Math.round(ceiling.rps), unit: 'req/s' },
        ratio: okRate / ceiling.rps,
        goal: '>= 3,000 req/s',
        pass: okRate >= 3000,
        note: `${accepted.requests} requests, status counts ${JSON.stringify(accepted.codes)}, socket errors ${accepted.errors}; 401 path p99 ${round(ceiling.p99ms, 1)} ms; ${cpuNote}`,
      },
      {
        name: 'webhook 200 path p99',
        value: round(accepted.p99ms, 1),
        unit: 'ms',
        reference: { name: 'same server, 401 path p99', value: round(ceiling.p99ms, 1), unit: 'ms' },
        ratio: accepted.p99ms / ceiling.p99ms,
        goal: '< 50 ms',
        pass: accepted.p99ms < 50,
        note: `p50 ${round(accepted.p50ms, 1)} ms; ${server}`,
      },
      {
        name: 'webhook 200 -> visible in projection p99',
        value: round(visibility, 1),
        unit: 'ms',
        goal: '< 250 ms',
        pass: visibility < 250,
        note: `${delays.length} sampled reports under load, median ${round(percentile(delays, 50), 1)} ms, max ${round(Math.max(...delays), 1)} ms; ${projectorNote}`,
      },
    ];
    console.log();
    printFigures(figures);
    const result: BenchResult = {
      kind: 'bench:webhook',
      date: new Date().toISOString(),
      machine: machine(loadAtStart),
      options: { swaps: swapCount, seconds: duration, connections },
      figures,
    };
    const file = resultFile(result.date);
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    console.log(`\nwrote ${file}`);
    if (!process.argv.includes('--no-readme')) console.log(regenerateReadme());
  } finally {
    await webhook.stop();
    await projector.stop();
    await projection.end();
    const cleanup = createPool(env.DATABASE_URL, { max: 1 });
    await cleanup.query(`drop schema if exists ${schema} cascade`);
    await cleanup.end();
    await admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => {});
    await admin.disconnect();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
