import { execFileSync } from 'node:child_process';
import { EventAppender, EventCodec } from '../../src/events/index.ts';
import { createTopics } from '../../src/events/topics.ts';
import { swapKey } from '../../src/events/keys.ts';
import { partitionOf } from '../../src/events/produce-rules.ts';
import { swapCreated } from '../../src/testing/events.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import { clusterInstances, kafkaService } from '../../scripts/stack/kafka.ts';
import { runningPid } from '../../scripts/stack/process.ts';
import { freshProjection, testKafka, testStack, uniqueName } from '../support/context.ts';
import { replayIsEqual, spawnProjector, waitForProjection } from '../support/event-log.ts';
import { postStatus, spawnWebhook, testProvider, writeProvidersFile } from '../ingest/webhook-support.ts';
import { CLUSTER_BROKERS } from './cluster.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const PARTITIONS = 12;

/** What a scenario measured: printed, then asserted (lost 0, doubled 0, no 500, replay EQUAL). */
export interface Figures {
  scenario: string;
  requests: number;
  acknowledged: number;
  byStatus: Record<string, number>;
  /** Acknowledged reports (200) not in the log. */
  lost: number;
  /** Acknowledged reports in the log more than once. */
  doubled: number;
  /** Events in the topic, and journal rows the projection folded them into (exactly once: equal). */
  events: number;
  journaled: number;
  kills: string[];
  /** Longest stretch with no 200 at all, ms (every partition blocked behind one fault, if large). */
  longestGapMs: number;
  /** The same, of the probe's reports only (partitions whose leader the fault spared), if one ran. */
  probeGapMs?: number;
  replay: string;
  deadLetters: number;
  workersAlive: boolean;
}

export function printFigures(f: Figures): void {
  console.log(
    `[faults] ${f.scenario}: events ${f.events}, journaled ${f.journaled}, requests ${f.requests}, ` +
      `acknowledged ${f.acknowledged} (${Object.entries(f.byStatus)
        .map(([s, n]) => `${s}:${n}`)
        .join(' ')}), kills [${f.kills.join('; ')}], lost ${f.lost}, doubled ${f.doubled}, ` +
      `longest stretch without a 200 ${f.longestGapMs} ms` +
      (f.probeGapMs === undefined ? '' : ` (${f.probeGapMs} ms on the partitions the fault spared)`) +
      `, dead letters ${f.deadLetters}, replay ${f.replay}`,
  );
}

/** The pid of node `nodeId` of the cluster (its broker process). */
export function brokerPid(nodeId: number): number {
  const instance = clusterInstances(CLUSTER_BROKERS)[nodeId - 1]!;
  const pid = runningPid(kafkaService(instance));
  if (pid === undefined) throw new Error(`broker node ${nodeId} is not running`);
  return pid;
}

/** The node leading most partitions of `topic`, and the partitions it leads. */
export async function busiestLeader(
  topic: string,
): Promise<{ nodeId: number; partitions: number; led: number[] }> {
  const admin = testKafka('faults-leader').admin();
  await admin.connect();
  try {
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    const led = new Map<number, number[]>();
    for (const p of meta.topics[0]!.partitions)
      led.set(p.leader, [...(led.get(p.leader) ?? []), p.partitionId]);
    const [nodeId, partitions] = [...led].sort((a, b) => b[1].length - a[1].length)[0]!;
    return { nodeId, partitions: partitions.length, led: partitions };
  } finally {
    await admin.disconnect();
  }
}

/**
 * One scenario's platform: a replicated topic (RF 3, min ISR 2), a projection, `swaps` open swaps folded,
 * a `webhook serve` and `projectors` projector processes; `load()` posts unique reports until stopped.
 */
export async function startRig(label: string, options: { swaps?: number; projectors?: number } = {}) {
  const stack = testStack();
  const provider = testProvider(label);
  const providersFile = writeProvidersFile([provider]);
  const topic = uniqueName(label);
  const dlqTopic = `${topic}.dlq`;
  const admin = testKafka('faults-topics').admin();
  await admin.connect();
  try {
    const report = await createTopics(admin, { eventsTopic: topic, dlqTopic, partitions: PARTITIONS });
    if (report.some((t) => t.replicationFactor !== 3 || t.minInsyncReplicas !== 2))
      throw new Error(`topics not replicated as asked: ${JSON.stringify(report)}`);
  } finally {
    await admin.disconnect();
  }
  await migratePlatform(stack.databaseUrl);
  const projection = await freshProjection(label.replaceAll('-', '_'));
  const codec = new EventCodec(stack.registryUrl, topic);
  const seed = new EventAppender({ kafka: testKafka('faults-seed'), codec, topic, sendTimeoutMs: 30_000 });
  await seed.start();
  const swaps = Array.from({ length: options.swaps ?? 100 }, (_, i) => `${label}-${i}`);
  await seed.appendAll(swaps.map((id) => swapCreated(id, { providerId: provider.id })));
  await seed.stop();

  const group = uniqueName(`${label}-group`);
  const projectors = Array.from({ length: options.projectors ?? 1 }, () =>
    spawnProjector({ topic, schema: projection.schema, group }),
  );
  await waitForProjection(projection.pool, topic, 90_000);
  const env = {
    DATABASE_URL: stack.databaseUrl,
    KAFKA_BROKERS: stack.kafkaBrokers,
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    EVENTS_TOPIC: topic,
    DLQ_TOPIC: dlqTopic,
    PROJECTION_SCHEMA: projection.schema,
    PROVIDERS_FILE: providersFile,
    KAFKA_CLIENT_ID: `faults-${label}`,
  };
  const webhook = await spawnWebhook(env);

  const acknowledged = new Set<string>();
  const byStatus: Record<string, number> = {};
  const okTimes: number[] = [];
  let probeTimes: number[] | undefined;
  let requests = 0;
  let next = 0;
  let loading = false;
  const running: Promise<void>[] = [];

  /** `connections` posters of unique reports (the amount is the report's identity) to `targets`. */
  const post = (connections: number, targets: string[], times: number[]) =>
    Promise.all(
      Array.from({ length: connections }, async () => {
        while (loading) {
          const n = next++;
          const amount = `${n}.5`;
          const swapId = targets[n % targets.length]!;
          requests++;
          const r = await postStatus(
            webhook.url,
            swapId,
            { providerId: provider.id, providerStatus: 'PENDING', amount },
            { 'x-api-key': provider.key.key },
          ).catch((e: Error) => ({ status: 0, body: e.message }));
          byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
          if (r.status === 200) {
            acknowledged.add(amount);
            times.push(Date.now());
          } else await sleep(50); // a refused partner retries a moment later
        }
      }),
    ).then(() => undefined);

  return {
    topic,
    projection,
    webhook,
    projectors,
    env,
    /** Starts `connections` posters of unique reports over every swap. */
    load(connections = 16) {
      loading = true;
      running.push(post(connections, swaps, okTimes));
    },
    /**
     * One more poster, only to the swaps whose partition is not in `avoid` (a killed leader's): its own
     * longest stretch without a 200 says whether the fault on those partitions held the others back.
     */
    probe(avoid: readonly number[]) {
      const targets = swaps.filter(
        (id) => !avoid.includes(partitionOf(swapKey(provider.id, id), PARTITIONS)),
      );
      probeTimes = [];
      running.push(post(1, targets, probeTimes));
    },
    async stopLoad() {
      loading = false;
      await Promise.all(running);
    },
    /** Reads the whole topic, folds, replays: the scenario's figures. */
    async figures(scenario: string, kills: string[]): Promise<Figures> {
      const inLog = await readReports(topic, codec);
      let lost = 0;
      let doubled = 0;
      for (const a of acknowledged) {
        const n = inLog.amounts.get(a) ?? 0;
        if (n === 0) lost++;
        if (n > 1) doubled++;
      }
      await waitForProjection(projection.pool, topic, 120_000);
      const journaled = (
        await projection.pool.query<{ n: number }>('select count(*)::int as n from event_journal')
      ).rows[0]!.n;
      // In-process, as `swap-ledger replay` rebuilds and compares (test/ops/replay.int.spec.ts runs the command).
      const verdict = await replayIsEqual({ topic, codec }, projection, `faults-replay-${label}`).then(
        (equal) => (equal ? 'EQUAL' : 'DIFFERENT'),
        (e: Error) => `failed: ${e.message.slice(0, 300)}`,
      );
      const gap = longestGap(okTimes);
      return {
        scenario,
        requests,
        acknowledged: acknowledged.size,
        byStatus,
        lost,
        doubled,
        events: inLog.events,
        journaled,
        kills,
        longestGapMs: gap,
        ...(probeTimes ? { probeGapMs: longestGap(probeTimes) } : {}),
        replay: verdict,
        deadLetters: await endOffsetSum(dlqTopic),
        workersAlive: projectors.every((p) => p.exitCode === null),
      };
    },
    async stop() {
      loading = false;
      await Promise.all(running);
      // A worker that does not exit within 30 s of its SIGTERM is named, its last output printed, and killed.
      const hung = (name: string, kill: () => void, output: () => string) =>
        setTimeout(() => {
          console.log(
            `[faults] ${name} still running 30 s after SIGTERM; its last output:\n${output().slice(-3000)}`,
          );
          kill();
        }, 30_000);
      const webhookTimer = hung('webhook serve', () => webhook.kill(), webhook.output);
      const codes = [await webhook.stop()];
      clearTimeout(webhookTimer);
      for (const p of projectors) {
        if (p.exitCode === null) p.kill('SIGTERM');
        const timer = hung('a projector', () => p.kill('SIGKILL'), p.output);
        codes.push(await p.exited);
        clearTimeout(timer);
      }
      await projection.pool.end();
      return codes;
    },
  };
}

function longestGap(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < sorted.length; i++) gap = Math.max(gap, sorted[i]! - sorted[i - 1]!);
  return gap;
}

async function endOffsetSum(topic: string): Promise<number> {
  const admin = testKafka('faults-offsets').admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((s, p) => s + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}

/** Every message of the topic to its end offsets, decoded and handed to `visit`; how many there were. */
export async function readWholeTopic(
  topic: string,
  codec: EventCodec,
  visit: (e: SwapEvent) => void,
): Promise<number> {
  const admin = testKafka('faults-read').admin();
  await admin.connect();
  const ends = new Map(
    (await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)] as const),
  );
  await admin.disconnect();
  const total = [...ends.values()].reduce((a, b) => a + b, 0n);
  // A short fetch wait: the disconnect after the last message waits out the fetch in flight (5 s by default).
  const consumer = testKafka('faults-read').consumer({
    groupId: uniqueName('faults-read'),
    maxWaitTimeInMs: 100,
  });
  let events = 0;
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`read ${events} of ${total} messages in 120 s`)),
      120_000,
    );
    if (total === 0n) return resolve();
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        if (BigInt(message.offset) >= (ends.get(partition) ?? 0n)) return;
        events++;
        visit(await codec.decode(message.value!));
        if (BigInt(events) === total) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  return events;
}

/** Every message of the topic (to its end offsets): how many, and each webhook report's amount, counted. */
async function readReports(topic: string, codec: EventCodec) {
  const amounts = new Map<string, number>();
  const events = await readWholeTopic(topic, codec, (e) => {
    if (e.eventType === 'StatusReported' && e.source === 'webhook') {
      const amount = (e.payload as { amount: string }).amount;
      amounts.set(amount, (amounts.get(amount) ?? 0) + 1);
    }
  });
  return { events, amounts };
}

/** The Debian cluster's restart, waited out (pg_isready). Every client of the server loses its connections. */
export async function restartPostgres(): Promise<number> {
  const version = execFileSync('ls', ['/etc/postgresql'], { encoding: 'utf8' }).trim().split('\n')[0]!;
  const started = Date.now();
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'restart'], {
    stdio: 'inherit',
  });
  for (let i = 0; i < 60; i++) {
    try {
      execFileSync('pg_isready', ['-q', '-h', '127.0.0.1', '-p', '5432']);
      return Date.now() - started;
    } catch {
      await sleep(500);
    }
  }
  throw new Error('Postgres did not come back within 30 s of its restart');
}

/**
 * Waits until the registry writes again (PUT /config on a probe subject answers 200): after a Postgres
 * restart, Apicurio 3.0.9 answers 500 ("terminating connection due to administrator command") until its
 * pool has dropped the dead connections. Returns how long that took.
 */
export async function registryWritesAgain(registryUrl: string, timeoutMs = 180_000): Promise<number> {
  const started = Date.now();
  const subject = `faults-probe-${started}-value`;
  while (Date.now() - started < timeoutMs) {
    const res = await fetch(`${registryUrl}/config/${subject}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility: 'BACKWARD' }),
    }).catch(() => undefined);
    if (res?.ok) return Date.now() - started;
    await sleep(1000);
  }
  throw new Error(`the registry did not write again within ${timeoutMs} ms`);
}
