/**
 * Cost as the log grows (issue 37): one topic of `--steps`' largest count of events (default 3M), rebuilt
 * by `replay` to 100k, 1M and 3M of them, each in its own process; then the live projector's batch path
 * folding the same fresh events into an empty schema and into the largest rebuild (millions of rows).
 *
 *   npm run bench:growth -- [--steps 100000,1000000,3000000] [--live-events 60000] [--replay-batch 20000]
 *                           [--rounds 2] [--keep]
 *
 * Figures are the replay's time at each step of 1M or more (issue 15: 1M in < 60 s; the 1M figure
 * `npm run bench` points to), then CPU an event and a swap (the replay process and Postgres, which the rate hides on a shared
 * machine) and the replay's peak memory, each step's beside the step before it, measured in the same run;
 * flat means within 20%.
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type pg from 'pg';
import { createPool } from '../src/db/client.ts';
import { createKafka, createTopicsReady, EventAppender, EventCodec } from '../src/events/index.ts';
import { lifecycleScenario } from '../src/testing/scenarios.ts';
import {
  cpuPerItem,
  cpuReading,
  endpoints,
  intOption,
  machine,
  printFigures,
  resultFile,
  round,
  stringOption,
  type BenchResult,
  type Figure,
} from './common.ts';
import { foldAll, freshSchema } from './projector.ts';
import { replayInChild } from './replay.ts';
import { MILLION, replayTimeFigure } from './replay-figures.ts';
import { regenerateReadme } from './readme.ts';

const FLAT = 1.2;
/** Swaps a generated chunk holds: each chunk its own seed, so swap ids never repeat across chunks. */
const CHUNK_SWAPS = 20_000;

function steps(): number[] {
  const text = stringOption('steps') ?? '100000,1000000,3000000';
  const list = text.split(',').map((s) => s.trim());
  if (!list.every((s) => /^[1-9]\d*$/.test(s)))
    throw new Error(`--steps needs positive integers separated by commas, got "${text}"`);
  const n = list.map(Number).sort((a, b) => a - b);
  if (n.length < 2) throw new Error('--steps needs at least two counts to compare');
  return n;
}

/** Appends `total` generated events in chunks, printing progress; the heap holds one chunk at a time. */
async function appendGenerated(appender: EventAppender, total: number, firstSeed: number) {
  let appended = 0;
  let seed = firstSeed;
  let lastSaid = Date.now();
  while (appended < total) {
    const chunk = lifecycleScenario(CHUNK_SWAPS, seed++).slice(0, total - appended);
    for (let i = 0; i < chunk.length; i += 5000) await appender.appendAll(chunk.slice(i, i + 5000));
    appended += chunk.length;
    if (Date.now() - lastSaid > 10_000 || appended === total) {
      console.log(`  appended ${appended.toLocaleString('en')} of ${total.toLocaleString('en')} events`);
      lastSaid = Date.now();
    }
  }
  return seed;
}

async function countSwaps(pool: pg.Pool, schema: string): Promise<number> {
  const r = await pool.query<{ n: string }>(`select count(*) as n from ${schema}.swaps`);
  return Number(r.rows[0]!.n);
}

async function rowsOf(pool: pg.Pool, schema: string): Promise<number> {
  const r = await pool.query<{ n: string }>(
    `select coalesce(sum(n_live_tup), 0) as n from pg_stat_user_tables where schemaname = $1`,
    [schema],
  );
  return Number(r.rows[0]!.n);
}

/** CPU an event of folding `events` into `pool`'s schema: this process plus Postgres, in µs. */
async function liveFoldCost(pool: pg.Pool, events: ReturnType<typeof lifecycleScenario>, batch: number) {
  const before = cpuReading();
  await foldAll(pool, events, batch);
  const cpu = cpuPerItem(before, cpuReading(), events.length);
  return round(cpu.self + cpu.postgres);
}

async function main() {
  const loadAtStart = Math.round(os.loadavg()[0]! * 100) / 100;
  const counts = steps();
  const total = counts.at(-1)!;
  const liveEvents = intOption('live-events', 60_000);
  const replayBatch = intOption('replay-batch', 20_000);
  const rounds = intOption('rounds', 2);
  const env = await endpoints();
  const run = randomBytes(3).toString('hex');
  const topic = `bench.${run}.growth`;
  const kafka = createKafka({ brokers: env.KAFKA_BROKERS.split(','), clientId: 'bench-growth' });
  const admin = kafka.admin();
  const pool = createPool(env.DATABASE_URL, { max: 1 });
  const schemas: string[] = [];
  const figures: Figure[] = [];
  console.log(
    `growth: steps ${counts.join(', ')}; ${os.availableParallelism()} cores, load ${loadAtStart}\n`,
  );
  try {
    await admin.connect();
    await createTopicsReady(admin, [{ topic, numPartitions: 12 }]);
    const appender = new EventAppender({
      kafka,
      codec: new EventCodec(env.SCHEMA_REGISTRY_URL, topic),
      topic,
      sendTimeoutMs: 120_000,
    });
    await appender.start();
    let nextSeed: number;
    try {
      nextSeed = await appendGenerated(appender, total, 1000);
    } finally {
      await appender.stop();
    }

    // The replay at each step: a share of every partition, so each step is a prefix of the log.
    const steps: { events: number; swaps: number; self: number; postgres: number; rss: number }[] = [];
    let largest = '';
    const times: Figure[] = [];
    for (const n of counts) {
      console.log(`  replaying ${n.toLocaleString('en')} events...`);
      const r = await replayInChild(topic, { num: BigInt(n), den: BigInt(total) }, replayBatch);
      schemas.push(r.schema);
      const swaps = await countSwaps(pool, r.schema);
      steps.push({ events: r.events, swaps, self: r.cpu.self, postgres: r.cpu.postgres, rss: r.peakRssMiB });
      console.log(
        `  ${r.events} events (${swaps} swaps) in ${round(r.seconds, 1)} s: ${r.cpu.self} µs replay + ${r.cpu.postgres} µs Postgres an event, peak RSS ${r.peakRssMiB} MiB`,
      );
      // The 1M figure `npm run bench` points to: a step sized 1M or more, measured on its own events (a share
      // of each partition, so a few events short of the step), judged per million.
      if (n >= MILLION)
        times.push(
          replayTimeFigure(
            r.events,
            r.seconds,
            true,
            `a prefix of a ${total.toLocaleString('en')}-event topic`,
          ),
        );
      largest = r.schema;
    }
    figures.push(...times);
    // Each step beside the one before it: the smallest carries the process's fixed start-up cost over fewer
    // events, so only a step against its neighbour shows a cost that grows with the log.
    const cost = (s: (typeof steps)[number]) => s.self + s.postgres;
    const perSwap = (s: (typeof steps)[number]) => round((cost(s) * s.events) / s.swaps);
    for (const [i, s] of steps.entries()) {
      if (i === 0) continue;
      const base = steps[i - 1]!;
      const at = `at ${base.events.toLocaleString('en')}`;
      figures.push(
        {
          name: `replay CPU an event at ${s.events.toLocaleString('en')} events`,
          value: round(cost(s)),
          unit: 'µs',
          reference: { name: at, value: round(cost(base)), unit: 'µs' },
          ratio: cost(s) / cost(base),
          goal: `<= ${FLAT}x (flat as the log grows)`,
          pass: cost(s) / cost(base) <= FLAT,
          note: `replay process ${s.self} µs + Postgres ${s.postgres} µs (${at}: ${base.self} + ${base.postgres})`,
        },
        {
          name: `replay CPU a swap at ${s.events.toLocaleString('en')} events`,
          value: perSwap(s),
          unit: 'µs',
          reference: { name: at, value: perSwap(base), unit: 'µs' },
          ratio: perSwap(s) / perSwap(base),
          goal: `<= ${FLAT}x`,
          pass: perSwap(s) / perSwap(base) <= FLAT,
          note: `${s.swaps} swaps (${at}: ${base.swaps})`,
        },
        {
          name: `replay peak RSS at ${s.events.toLocaleString('en')} events`,
          value: s.rss,
          unit: 'MiB',
          reference: { name: at, value: base.rss, unit: 'MiB' },
          ratio: s.rss / base.rss,
          goal: `<= ${FLAT}x`,
          pass: s.rss / base.rss <= FLAT,
        },
      );
    }

    // The live projector with millions of rows against an empty schema: the same kind of fresh events
    // (new swaps) folded into each, alternating, the best of `rounds` kept after an untimed first round (the
    // fold's code not yet compiled).
    const fullRows = await rowsOf(pool, largest);
    const largePool = createPool(env.DATABASE_URL, { searchPath: largest, max: 2 });
    let empty = Infinity;
    let full = Infinity;
    try {
      for (let i = 0; i <= rounds; i++) {
        const timed = i > 0;
        const emptySchema = `bench_${run}_growth_empty_${i}`;
        schemas.push(emptySchema);
        const emptyPool = await freshSchema(env.DATABASE_URL, emptySchema);
        try {
          const a = lifecycleScenario(Math.ceil(liveEvents / 6), nextSeed++).slice(0, liveEvents);
          const cost = await liveFoldCost(emptyPool, a, 5000);
          if (timed) empty = Math.min(empty, cost);
        } finally {
          await emptyPool.end();
        }
        const b = lifecycleScenario(Math.ceil(liveEvents / 6), nextSeed++).slice(0, liveEvents);
        const cost = await liveFoldCost(largePool, b, 5000);
        if (timed) full = Math.min(full, cost);
        if (timed)
          console.log(`  live fold round ${i}: empty ${empty} µs, ${fullRows} rows ${full} µs an event`);
      }
    } finally {
      await largePool.end();
    }
    figures.push({
      name: `live projector CPU an event, ${fullRows.toLocaleString('en')} rows in its tables`,
      value: full,
      unit: 'µs',
      reference: { name: 'into an empty schema', value: empty, unit: 'µs' },
      ratio: full / empty,
      goal: `<= ${FLAT}x`,
      pass: full / empty <= FLAT,
      note: `${liveEvents} fresh events through the projector's batch path (5,000 a transaction), projector process + Postgres; best of ${rounds} alternating rounds after an untimed one`,
    });
  } finally {
    if (process.argv.includes('--keep')) {
      console.log(`--keep: left schemas ${schemas.join(', ')} and topic ${topic}`);
    } else {
      for (const s of schemas) await pool.query(`drop schema if exists ${s} cascade`);
      await admin.deleteTopics({ topics: [topic] }).catch(() => {});
    }
    await pool.end();
    await admin.disconnect();
  }

  console.log();
  printFigures(figures);
  const result: BenchResult = {
    kind: 'bench:growth',
    date: new Date().toISOString(),
    machine: machine(loadAtStart),
    options: { steps: counts.join(', '), liveEvents, rounds },
    figures,
  };
  const file = resultFile(result.date);
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  console.log(`\nwrote ${file}`);
  if (!process.argv.includes('--no-readme')) console.log(regenerateReadme());
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
