/**
 * Reconciler throughput (issue 15: >= 5,000 swaps/s judged and recorded), measured on the worker itself:
 * N final swaps whose creation carries a real secp256k1-signed payload (the public test vector) are folded
 * into a projection schema of their own, then `Reconciler.drainAll` (as `reconciler run` calls it) takes
 * them from the queue until every one has its SwapReconciled appended to Kafka (acks = all): the queue
 * read, each swap's rows, the signature verification, every check, the append and the verdict's log line
 * (written to /dev/null). The reference is the pure checks alone (reconcileSwap) over ready-made inputs.
 * A warm-up of WARM_UP swaps goes through the same worker first, untimed: a first run after the stack
 * started measured the broker's JIT (Kafka at 136-164 µs a swap, against 38-64 warm), not the worker's
 * steady state. 2,000 swaps were not enough: the broker took 45-88 µs a swap in the timed drain that
 * followed, 22-28 once a whole run had gone through it.
 */
import os from 'node:os';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { Kafka } from 'kafkajs';
import type pg from 'pg';
import { createPool } from '../src/db/client.ts';
import { migratePlatform } from '../src/db/migrate.ts';
import { createTopicsReady, EventAppender, EventCodec } from '../src/events/index.ts';
import { createLogger } from '../src/observability/log.ts';
import { MetricsRegistry } from '../src/observability/metrics.ts';
import { loadProviders } from '../src/providers/store.ts';
import { parseProvidersFile } from '../src/providers/file.ts';
import { DEFAULT_RECONCILIATION_POLICY, reconcileSwap, Reconciler } from '../src/reconciler/index.ts';
import { input } from '../test/reconciler/support.ts';
import { finished, vectorProviderYaml, vectorSwap } from '../test/reconciler/vector-swaps.ts';
import { foldAll, freshSchema } from './projector.ts';
import { coresAllow, cpuPerItem, cpuReading, round, seconds, type Endpoints, type Figure } from './common.ts';

/** Swaps judged and recorded before the timed drain (their queue rows then removed, as a fold of their verdicts would). */
const WARM_UP = 20_000;

/** Ready-made inputs that vary the reported amount and fees, so that every verdict's path is taken. */
function inputs(n: number) {
  return Array.from({ length: n }, (_, i) =>
    input({
      final: {
        amount: i % 7 === 0 ? `1.2341478901234567${i % 100}` : '1.234147890123456789',
        providerFees: i % 5 === 0 ? '0.0016' : '0.0015',
        payoutTransactionId: i % 13 === 0 ? null : `0x${i.toString(16).padStart(64, '0')}`,
      },
    }),
  );
}

/** The pure checks alone over ready-made inputs, in swaps a second (the inputs gone once it returns). */
function pureChecksRate(swaps: number): number {
  const given = inputs(swaps);
  const started = process.hrtime.bigint();
  for (const i of given) reconcileSwap(i, DEFAULT_RECONCILIATION_POLICY);
  return Math.round(swaps / seconds(started));
}

/** The verdicts go to a topic no projector folds: their rounds' claims on the queued swaps would stay an hour. */
const dropClaims = (pool: pg.Pool, schema: string) =>
  pool.query(
    `delete from platform.reconciliation_claims
     where queued_by_event_ids && array(select queued_by_event_id from ${schema}.reconciliation_queue)`,
  );

export async function benchReconciler(
  kafka: Kafka,
  env: Endpoints,
  run: string,
  swaps: number,
  /** Writes a V8 CPU profile of the drain alone (not the fold before it) to this file. */
  profileFile?: string,
  /** ReconcilerOptions.judgeThreads (`reconciler run` takes RECONCILER_JUDGE_THREADS). */
  judgeThreads = 0,
): Promise<{ figures: Figure[]; topic: string; schemas: string[] }> {
  const pureRate = pureChecksRate(swaps);

  const providerId = `bench-${run}`;
  const schema = `bench_${run}_recon`;
  const topic = `bench.${run}.reconciled`;
  const folder = await freshSchema(env.DATABASE_URL, schema);
  await migratePlatform(env.DATABASE_URL);
  // The pools `reconciler run` opens (src/reconciler/run.ts).
  const projection = createPool(env.DATABASE_URL, { searchPath: schema, max: 5 });
  const platform = createPool(env.DATABASE_URL, { max: 2 });
  const admin = kafka.admin();
  await admin.connect();
  await createTopicsReady(admin, [{ topic, numPartitions: 12 }]);
  await admin.disconnect();
  const appender = new EventAppender({
    kafka,
    codec: new EventCodec(env.SCHEMA_REGISTRY_URL, topic),
    topic,
    sendTimeoutMs: 60_000,
    onBatchSent: (messages) => {
      produceRequests++;
      produced += messages;
    },
  });
  let produceRequests = 0;
  let reconciler: Reconciler | undefined;
  let produced = 0;
  try {
    await loadProviders(platform, parseProvidersFile(vectorProviderYaml(providerId)));
    // Every 7th wallet got less than signed (MISMATCH), the rest what was signed (MATCHED).
    const swapEvents = (ids: string[]) =>
      ids.flatMap((id, i) => [
        vectorSwap(id, providerId),
        finished(id, providerId, i % 7 === 0 ? '0.0000049' : '0.000005'),
      ]);
    // Made where they are folded and dropped after: a worker holds no log in memory, and 40,000 events
    // kept alive through the drain were marked by every full GC of its event loop's heap.
    await foldAll(
      folder,
      swapEvents(Array.from({ length: WARM_UP }, (_, i) => `bench-${run}-warm-${i}`)),
      5000,
    );
    await appender.start();
    const verdicts = new Map<string, number>();
    reconciler = new Reconciler({
      projection,
      platform,
      appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger: createLogger({ level: 'info', destination: '/dev/null' }),
      metrics: new MetricsRegistry(),
      judgeThreads,
      onVerdict: (v) => verdicts.set(v.verdict, (verdicts.get(v.verdict) ?? 0) + 1),
    });
    const profiler = profileFile ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    // The judge threads started and warm, as in a running worker: not their start-up (~1 s of loading).
    await reconciler.prepare();
    const warmed = await reconciler.drainAll();
    if (warmed !== WARM_UP) throw new Error(`the warm-up judged ${warmed} of ${WARM_UP} swaps`);
    await dropClaims(folder, schema);
    await folder.query('delete from reconciliation_queue');
    verdicts.clear();
    const tFold = await foldAll(
      folder,
      swapEvents(Array.from({ length: swaps }, (_, i) => `bench-${run}-${i}`)),
      5000,
    );
    // As autovacuum would have by then (a live schema grows slowly; a promoted replay is analyzed): the
    // worker's lookups are planned from statistics, and a table filled seconds ago has none.
    await folder.query('analyze');
    produceRequests = 0;
    produced = 0;
    const cpuBefore = cpuReading();
    const started = process.hrtime.bigint();
    let judged = 0;
    while (judged < swaps) {
      const n = await reconciler.drainAll();
      if (n === 0) throw new Error(`the queue ran dry after ${judged} of ${swaps} swaps`);
      judged += n;
    }
    const t = seconds(started);
    const cpu = cpuPerItem(cpuBefore, cpuReading(), judged);
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(profileFile!, JSON.stringify(profile));
      profiler.disconnect();
    }
    if (judged !== swaps) throw new Error(`${judged} verdicts for ${swaps} swaps: a swap was judged twice`);
    const rate = Math.round(judged / t);
    return {
      topic,
      schemas: [schema],
      figures: [
        {
          name: `reconciler: judged and recorded, ${judged.toLocaleString('en')} swaps`,
          value: rate,
          unit: 'swaps/s',
          reference: { name: 'pure checks alone', value: pureRate, unit: 'swaps/s' },
          ratio: rate / pureRate,
          goal: '>= 5,000 swaps/s',
          pass: rate >= 5000,
          note: `the worker's drainAll over ${judged} queued swaps, after ${WARM_UP} untimed (rounds of 500, two lanes, ${judgeThreads} judge thread${judgeThreads === 1 ? '' : 's'}) in ${round(t, 2)} s: rows read, secp256k1 signature verified, checks, SwapReconciled appended (acks=all) in ${produceRequests} produce requests (${Math.round(produced / Math.max(1, produceRequests))} a request), ${[...verdicts].map(([v, k]) => `${v} ${k}`).join(', ')}; the ${2 * swaps} events folded beforehand in ${round(tFold, 1)} s; CPU a swap: worker ${cpu.self} µs, Postgres ${cpu.postgres} µs, Kafka ${cpu.kafka} µs, registry ${cpu.registry} µs, machine ${cpu.machine} µs in all (at that cost its ${os.availableParallelism()} cores allow ${coresAllow(cpu.machine)} swaps/s)`,
        },
      ],
    };
  } finally {
    await reconciler?.stop();
    await appender.stop().catch(() => {});
    await projection.end();
    await platform.end();
    await folder.end();
    const cleanup = createPool(env.DATABASE_URL, { max: 1 });
    await cleanup.query(`delete from platform.providers where id = $1`, [providerId]).catch(() => {});
    await dropClaims(cleanup, schema).catch(() => {});
    await cleanup.end();
  }
}
