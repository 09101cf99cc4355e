/**
 * Replay end to end: the events appended to a fresh 12-partition topic, then rebuilt from offset 0 by
 * `replay` in a child process, once to a tenth of every partition and once to the end, so that the
 * peak resident memory of both can be compared (issue 15: within 1.25x; 1M events in < 60 s, judged only on
 * a replay of 1M or more: replay-figures.ts).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Kafka } from 'kafkajs';
import { configSpec } from '../src/config/config.ts';
import { createTopicsReady, EventAppender, EventCodec } from '../src/events/index.ts';
import type { SwapEvent } from '../src/events/types.ts';
import type { ReplayResult } from '../src/ops/replay.ts';
import {
  coresAllow,
  cpuPerItem,
  cpuReading,
  round,
  seconds,
  type CpuPerItem,
  type Endpoints,
  type Figure,
} from './common.ts';
import { replayFigures } from './replay-figures.ts';

interface ChildResult {
  events: number;
  seconds: number;
  peakRssMiB: number;
  schema: string;
  checksum: string;
  phases: ReplayResult['phases'];
  cpuSeconds: number;
  /** Microseconds of CPU an event, by process group, over the child's life. */
  cpu: CpuPerItem;
}

const CHILD = fileURLToPath(new URL('./replay-child.ts', import.meta.url));

/** How much of every partition to replay: 1/N of it, or num/den of it. */
export type Share = number | { num: bigint; den: bigint };

export async function replayInChild(
  topic: string,
  fraction: Share,
  batch: number,
  profileDir?: string,
): Promise<ChildResult> {
  const before = cpuReading();
  const r = await runChild(topic, fraction, batch, profileDir);
  const cpu = cpuPerItem(before, cpuReading(), r.events);
  // The child has ended, so the readings cannot see it: it says its own.
  return { ...r, cpu: { ...cpu, self: round((r.cpuSeconds * 1e6) / r.events) } };
}

function runChild(
  topic: string,
  fraction: Share,
  batch: number,
  /** V8 CPU profiles of the child, one a thread (its fold workers'), written here. */
  profileDir?: string,
): Promise<Omit<ChildResult, 'cpu'>> {
  return new Promise((resolve, reject) => {
    // Under the heap budget `swap-ledger replay` runs with (bin/swap-ledger.mjs), so the memory is the command's.
    const heap = process.env.REPLAY_HEAP_MB ?? String(configSpec.REPLAY_HEAP_MB.default);
    const child = spawn(
      process.execPath,
      [
        `--max-old-space-size=${heap}`,
        ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
        '--import',
        'tsx',
        CHILD,
        '--topic',
        topic,
        ...(typeof fraction === 'number'
          ? ['--fraction', String(fraction)]
          : ['--share', `${fraction.num}/${fraction.den}`]),
        '--batch',
        String(batch),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`replay child exited with ${code}`));
      const line = out.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(line) as Omit<ChildResult, 'cpu'>);
      } catch {
        reject(new Error(`replay child printed no result: ${out.slice(-500)}`));
      }
    });
  });
}

/** Appends `events` to `topic` (acks = all, 5,000 per call); returns the seconds it took. */
export async function appendAll(kafka: Kafka, env: Endpoints, topic: string, events: readonly SwapEvent[]) {
  const codec = new EventCodec(env.SCHEMA_REGISTRY_URL, topic);
  const appender = new EventAppender({ kafka, codec, topic, sendTimeoutMs: 120_000 });
  await appender.start();
  const started = process.hrtime.bigint();
  try {
    for (let i = 0; i < events.length; i += 5000) await appender.appendAll(events.slice(i, i + 5000));
  } finally {
    await appender.stop();
  }
  return seconds(started);
}

export async function benchReplay(
  kafka: Kafka,
  env: Endpoints,
  run: string,
  events: readonly SwapEvent[],
  batch: number,
  /** The projector's batched fold measured in the same run: the replay's reference. */
  fold: { events: number; rate: number },
  /** Profiles the full replay's process and its fold workers into this directory. */
  profileDir?: string,
): Promise<{ figures: Figure[]; schemas: string[]; topic: string }> {
  const topic = `bench.${run}.events`;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsReady(admin, [{ topic, numPartitions: 12 }]);
  } finally {
    await admin.disconnect();
  }
  const tAppend = await appendAll(kafka, env, topic, events);
  const tenth = await replayInChild(topic, 10, batch);
  const full = await replayInChild(topic, 1, batch, profileDir);
  return {
    topic,
    schemas: [tenth.schema, full.schema],
    figures: replayFigures({
      appended: events.length,
      appendSeconds: tAppend,
      full,
      tenth,
      fold,
      note: `${full.events} events in ${round(full.seconds, 1)} s (12 partitions, group join and checksum included: fold ${round(full.phases.foldSeconds, 1)} s, then side by side index builds ${round(full.phases.finishSeconds, 1)} s and checksums ${round(full.phases.checksumSeconds, 1)} s); CPU an event: replay process ${full.cpu.self} µs, Postgres ${full.cpu.postgres} µs, Kafka ${full.cpu.kafka} µs, machine ${full.cpu.machine} µs in all (at that cost the cores allow ${coresAllow(full.cpu.machine)} ev/s); checksum ${full.checksum}`,
    }),
  };
}
