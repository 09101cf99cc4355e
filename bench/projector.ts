/**
 * Projector and replay throughput, against the real Postgres (and Kafka for the replay figure).
 *
 *   npm run bench -- [--swaps 20000] [--batch 5000]
 *
 * Prints events/s for: the batched projector write path, the same rows loaded by a raw COPY (the
 * ceiling), a one-transaction-per-event projector (the floor), and a full replay from Kafka, with the
 * targets of docs/architecture.md beside them. Needs the stack (`npm run stack:up`) or the three env variables.
 */
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import copyStreams from 'pg-copy-streams';
import { getTableColumns, getTableName } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { createPool, projection } from '../src/db/client.ts';
import { migrateProjection } from '../src/db/migrate.ts';
import { projectBatch, readCheckpoint, type BatchItem } from '../src/projector/batch.ts';
import { lifecycleScenario } from '../src/testing/scenarios.ts';
import { EventAppender, EventCodec, createKafka } from '../src/events/index.ts';
import { replay } from '../src/ops/replay.ts';
import { createLogger } from '../src/observability/log.ts';
import { stackUp } from '../scripts/stack/stack.ts';
import type { SwapEvent } from '../src/events/types.ts';

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const swaps = option('swaps', 20_000);
const batch = option('batch', 5000);
const run = randomBytes(3).toString('hex');

async function endpoints() {
  const { KAFKA_BROKERS, SCHEMA_REGISTRY_URL, DATABASE_URL } = process.env;
  if (KAFKA_BROKERS && SCHEMA_REGISTRY_URL && DATABASE_URL)
    return { KAFKA_BROKERS, SCHEMA_REGISTRY_URL, DATABASE_URL };
  return stackUp(() => {});
}

async function freshSchema(url: string, label: string): Promise<{ schema: string; pool: pg.Pool }> {
  const schema = `bench_${run}_${label}`;
  await migrateProjection(url, schema);
  return { schema, pool: createPool(url, { searchPath: schema, max: 2 }) };
}

/** Folds `events` (one partition) through the projector's batch path, `size` events per transaction. */
async function fold(pool: pg.Pool, events: SwapEvent[], size: number): Promise<number> {
  const client = await pool.connect();
  const started = process.hrtime.bigint();
  try {
    let next = await readCheckpoint(client, 'bench', 0);
    for (let i = 0; i < events.length; i += size) {
      const items: BatchItem[] = events
        .slice(i, i + size)
        .map((event, j) => ({ event, position: { topic: 'bench', partition: 0, offset: BigInt(i + j) } }));
      const r = await projectBatch(client, 'bench', 0, next, items);
      if (!r.ok) throw new Error('checkpoint moved');
      next = r.nextOffset;
    }
  } finally {
    client.release();
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

function csvValue(v: unknown, json: boolean): string {
  if (v === null || v === undefined) return '';
  const text = json ? JSON.stringify(v) : typeof v === 'bigint' ? v.toString() : String(v);
  return `"${text.replaceAll('"', '""')}"`;
}

/** Loads the rows another schema holds into `target` with COPY: the same rows, written the fastest way. */
async function copyRows(source: pg.Pool, target: pg.Pool, tables: PgTable[]): Promise<number> {
  const dumps = new Map<PgTable, string[]>();
  for (const table of tables) {
    const cols = Object.values(getTableColumns(table));
    const rows = (await source.query(`select * from ${getTableName(table)}`)).rows as Record<
      string,
      unknown
    >[];
    dumps.set(
      table,
      rows.map((r) => cols.map((c) => csvValue(r[c.name], c.getSQLType() === 'jsonb')).join(',') + '\n'),
    );
  }
  const client = await target.connect();
  const started = process.hrtime.bigint();
  try {
    await client.query('begin');
    for (const [table, lines] of dumps) {
      const cols = Object.values(getTableColumns(table)).map((c) => `"${c.name}"`);
      const stream = client.query(
        copyStreams.from(`copy ${getTableName(table)} (${cols.join(', ')}) from stdin with (format csv)`),
      );
      await pipeline(Readable.from(lines), stream);
    }
    await client.query('commit');
  } finally {
    client.release();
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function main() {
  const env = await endpoints();
  const events = lifecycleScenario(swaps, 11);
  const n = events.length;
  const rate = (seconds: number, count = n) => Math.round(count / seconds);
  console.log(`${n} events (${swaps} swaps), batch ${batch}, 2 cores\n`);

  const batched = await freshSchema(env.DATABASE_URL, 'batched');
  const tBatched = await fold(batched.pool, events, batch);

  const copied = await freshSchema(env.DATABASE_URL, 'copy');
  // The trigger guards updates only; COPY inserts the final rows once, as the ceiling should.
  const tCopy = await copyRows(batched.pool, copied.pool, [
    projection.eventJournal,
    projection.swaps,
    projection.swapRequests,
    projection.quotes,
    projection.reconciliationQueue,
    projection.ledgerPostings,
  ]);

  const single = await freshSchema(env.DATABASE_URL, 'single');
  const sample = events.slice(0, Math.min(n, 5000));
  const tSingle = await fold(single.pool, sample, 1);

  // End to end: append to a fresh topic, then replay it from offset 0 with the real consumer.
  const kafka = createKafka({ brokers: env.KAFKA_BROKERS.split(','), clientId: 'bench' });
  const topic = `bench.${run}.events`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 12 }], waitForLeaders: true });
  const codec = new EventCodec(env.SCHEMA_REGISTRY_URL, topic);
  const appender = new EventAppender({ kafka, codec, topic, sendTimeoutMs: 60_000 });
  await appender.start();
  const tAppendStart = process.hrtime.bigint();
  for (let i = 0; i < n; i += 5000) await appender.appendAll(events.slice(i, i + 5000));
  const tAppend = Number(process.hrtime.bigint() - tAppendStart) / 1e9;
  await appender.stop();
  const replayed = await replay({
    databaseUrl: env.DATABASE_URL,
    kafka,
    codec,
    topic,
    liveSchema: `bench_${run}_live`,
    logger: createLogger({ level: 'silent' }),
    batchEvents: batch,
  });
  const rss = Math.round(process.memoryUsage().rss / 2 ** 20);

  const rows = [
    [
      'batched projector write path',
      `${rate(tBatched)} ev/s`,
      `>= ${Math.round(rate(tCopy) / 2)} ev/s (half of COPY)`,
    ],
    ['raw COPY of the same rows', `${rate(tCopy)} ev/s`, 'ceiling'],
    [
      'one transaction per event',
      `${rate(tSingle, sample.length)} ev/s`,
      `<= ${Math.round(rate(tBatched) / 10)} ev/s (a tenth of batched)`,
    ],
    ['append to Kafka (acks=all)', `${rate(tAppend)} ev/s`, ''],
    [
      'replay from Kafka, end to end',
      `${rate(replayed.seconds, replayed.events)} ev/s`,
      '>= 16667 ev/s (1M in < 60 s)',
    ],
    [
      'replay of 1M events, projected',
      `${Math.round((1e6 / rate(replayed.seconds, replayed.events)) * 10) / 10} s`,
      '< 60 s',
    ],
    ['resident memory at the end', `${rss} MiB`, 'bounded'],
  ];
  const w = Math.max(...rows.map((r) => r[0]!.length));
  console.log(`${'measure'.padEnd(w)}  ${'figure'.padStart(14)}  target`);
  for (const [name, figure, target] of rows)
    console.log(`${name!.padEnd(w)}  ${figure!.padStart(14)}  ${target}`);
  console.log(
    `\nreplay checksum equal to the batched fold: n/a (12 partitions vs 1); replay events ${replayed.events}`,
  );

  for (const p of [batched.pool, copied.pool, single.pool]) await p.end();
  const cleanup = createPool(env.DATABASE_URL, { max: 1 });
  for (const s of ['batched', 'copy', 'single', 'live'])
    await cleanup.query(`drop schema if exists bench_${run}_${s} cascade`);
  await cleanup.query(`drop schema if exists ${replayed.schema} cascade`);
  await cleanup.end();
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
