import type { Admin, ITopicConfig } from 'kafkajs';

export interface TopicPlan {
  eventsTopic: string;
  dlqTopic: string;
  partitions: number;
  /** Replicas of each partition; 0 or none: 3 on a cluster of three brokers or more, else one a broker. */
  replicationFactor?: number;
  /** `min.insync.replicas` of both topics; 0 or none: 2 with three replicas or more, else 1. */
  minInsyncReplicas?: number;
}

export interface TopicReport {
  topic: string;
  created: boolean;
  partitions: number;
  /** Replicas of its partition with the fewest. */
  replicationFactor: number;
  minInsyncReplicas: number;
  /** What makes it less durable than asked (an existing topic is reported, never changed); none: as asked. */
  problems: string[];
}

/** The replication asked for, resolved against the cluster's size. */
export interface Replication {
  replicationFactor: number;
  minInsyncReplicas: number;
  /** Said once at creation and at a writer's start when the log is not replicated. */
  warning?: string;
}

/**
 * The replication a topic must have: as configured, else 3 replicas and min.insync.replicas 2 on three
 * brokers or more (a leader may die and acks=all still needs two copies), else one replica a broker with
 * min.insync.replicas 1 and a warning (a dev or test broker: one disk holds the only copy).
 */
export function resolveReplication(
  brokers: number,
  asked: { replicationFactor?: number; minInsyncReplicas?: number } = {},
): Replication {
  const replicationFactor = asked.replicationFactor || Math.min(3, Math.max(1, brokers));
  const minInsyncReplicas = asked.minInsyncReplicas || (replicationFactor >= 3 ? 2 : 1);
  if (replicationFactor > brokers)
    throw new TopicReplicationError(
      `a replication factor of ${replicationFactor} needs as many brokers; the cluster has ${brokers}`,
    );
  if (minInsyncReplicas > replicationFactor)
    throw new TopicReplicationError(
      `min.insync.replicas ${minInsyncReplicas} is more than the replication factor ${replicationFactor}: no write could be acknowledged`,
    );
  const warning =
    replicationFactor < 2
      ? `topics are not replicated (replication factor ${replicationFactor}, min.insync.replicas ${minInsyncReplicas} on ${brokers} broker(s)): losing that broker's disk loses the log; a production cluster has 3 brokers (TOPIC_REPLICATION_FACTOR, TOPIC_MIN_INSYNC_REPLICAS)`
      : undefined;
  return { replicationFactor, minInsyncReplicas, ...(warning ? { warning } : {}) };
}

/** A topic less replicated than configured, or a replication the cluster cannot give: not a transient error. */
export class TopicReplicationError extends Error {
  override name = 'TopicReplicationError';
}

/** The event log keeps everything: no retention limit, no compaction (replay starts at offset 0). */
const LOG_CONFIG = [
  { name: 'cleanup.policy', value: 'delete' },
  { name: 'retention.ms', value: '-1' },
  { name: 'retention.bytes', value: '-1' },
];

/** Metadata errors of a topic whose creation has not reached every broker yet: worth a wait. */
const SETTLING = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_FOR_PARTITION']);

/**
 * Creates topics and returns once every partition has a leader. kafkajs' own `waitForLeaders` waits out
 * LEADER_NOT_AVAILABLE only: a broker under load can still answer "does not host this topic-partition"
 * (UNKNOWN_TOPIC_OR_PARTITION) for a topic it has just created, and that threw (kafkajs issue 815). This
 * polls the metadata, as sarama and rdkafka do, until the leaders stand or `timeoutMs` passes.
 */
export async function createTopicsReady(
  admin: Admin,
  topics: ITopicConfig[],
  timeoutMs = 30_000,
  /** Topics another creator made: only waited for. */
  alsoWait: string[] = [],
): Promise<void> {
  if (topics.length > 0) await admin.createTopics({ topics, waitForLeaders: false });
  const names = [...topics.map((t) => t.topic), ...alsoWait];
  const deadline = Date.now() + timeoutMs;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    let missing: string;
    try {
      const meta = await admin.fetchTopicMetadata({ topics: names });
      // A leader for every partition, and every replica in sync: a fresh topic is ready for acks=all.
      const partitions = meta.topics.flatMap((t) => t.partitions.map((p) => ({ ...p, name: t.name })));
      const leaderless = partitions.filter((p) => p.leader < 0);
      const lagging = partitions.filter((p) => (p.isr?.length ?? 0) < (p.replicas?.length ?? 0));
      if (leaderless.length === 0 && lagging.length === 0) return;
      const named = (ps: typeof partitions) =>
        ps
          .slice(0, 10)
          .map((p) => `${p.name}[${p.partitionId}]`)
          .join(', ');
      missing =
        leaderless.length > 0
          ? `no leader yet for ${named(leaderless)}`
          : `replicas not in sync yet for ${named(lagging)}`;
    } catch (e) {
      if (!SETTLING.has((e as { type?: string }).type ?? '')) throw e;
      missing = (e as Error).message;
    }
    if (Date.now() >= deadline)
      throw new Error(`topics ${names.join(', ')} not ready in ${timeoutMs} ms: ${missing}`);
    await new Promise((r) => setTimeout(r, wait));
  }
}

/** The cluster's brokers, as its metadata lists them. */
export async function brokerCount(admin: Admin): Promise<number> {
  return (await admin.describeCluster()).brokers.length;
}

/** `read`, waiting out the errors of a topic whose creation has not reached every broker yet. */
async function settled<T>(read: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    try {
      return await read();
    } catch (e) {
      if (!SETTLING.has((e as { type?: string }).type ?? '') || Date.now() >= deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, wait));
  }
}

/** What each topic's replication is: the fewest replicas of any partition, and its min.insync.replicas. */
export async function topicReplication(
  admin: Admin,
  topics: string[],
): Promise<Map<string, { partitions: number; replicationFactor: number; minInsyncReplicas: number }>> {
  // Both asked of brokers that may not know a topic created a moment ago (on a cluster, its configs are
  // asked of any broker, which answered "does not host this topic-partition" half the time).
  const meta = await settled(() => admin.fetchTopicMetadata({ topics }));
  const configs = await settled(() =>
    admin.describeConfigs({
      resources: topics.map((name) => ({ type: 2, name, configNames: ['min.insync.replicas'] })),
      includeSynonyms: false,
    }),
  );
  const minIsr = new Map(
    configs.resources.map((r) => [
      r.resourceName,
      Number(r.configEntries.find((e) => e.configName === 'min.insync.replicas')?.configValue ?? '1'),
    ]),
  );
  return new Map(
    meta.topics.map((t) => [
      t.name,
      {
        partitions: t.partitions.length,
        replicationFactor: Math.min(...t.partitions.map((p) => p.replicas.length)),
        minInsyncReplicas: minIsr.get(t.name) ?? 1,
      },
    ]),
  );
}

function replicationProblems(
  found: { replicationFactor: number; minInsyncReplicas: number },
  wanted: Replication,
): string[] {
  const problems: string[] = [];
  if (found.replicationFactor < wanted.replicationFactor)
    problems.push(`replication factor ${found.replicationFactor} < ${wanted.replicationFactor}`);
  if (found.minInsyncReplicas < wanted.minInsyncReplicas)
    problems.push(`min.insync.replicas ${found.minInsyncReplicas} < ${wanted.minInsyncReplicas}`);
  return problems;
}

/**
 * Refuses a writer on a topic replicated less than configured (TopicReplicationError naming what is
 * short): acks=all on one copy, or on two when three were meant, is not the durability a 200 promises.
 * Returns the replication asked for (with its warning when the log is not replicated at all).
 */
export async function assertReplicated(
  admin: Admin,
  topic: string,
  asked: { replicationFactor?: number; minInsyncReplicas?: number } = {},
): Promise<Replication> {
  const wanted = resolveReplication(await brokerCount(admin), asked);
  // A topic never created is refused at once (its metadata would be retried as "settling" for 30 s); one
  // created a moment ago on a cluster gets a few seconds to reach the broker asked.
  for (let waited = 0; !(await admin.listTopics()).includes(topic); waited += 500) {
    if (waited >= 5_000)
      throw new TopicReplicationError(`topic ${topic} does not exist: run swap-ledger topics create`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const found = (await topicReplication(admin, [topic])).get(topic);
  if (!found) throw new TopicReplicationError(`topic ${topic} does not exist: run swap-ledger topics create`);
  const problems = replicationProblems(found, wanted);
  if (problems.length > 0)
    throw new TopicReplicationError(
      `topic ${topic} is less replicated than configured (${problems.join(', ')}): no writer starts on it; recreate it or move its partitions (kafka-reassign-partitions), or lower TOPIC_REPLICATION_FACTOR / TOPIC_MIN_INSYNC_REPLICAS knowingly`,
    );
  return wanted;
}

/**
 * Creates the events and dead-letter topics with the configured replication; a topic that exists is
 * reported (with what makes it less replicated than asked), never changed. Concurrent creators (two `up`s)
 * are fine: a topic another created meanwhile is reported as existing.
 */
export async function createTopics(admin: Admin, plan: TopicPlan): Promise<TopicReport[]> {
  const replication = resolveReplication(await brokerCount(admin), plan);
  const wanted = [
    { topic: plan.eventsTopic, numPartitions: plan.partitions },
    // Dead letters are few; their order follows the events topic partition they came from.
    { topic: plan.dlqTopic, numPartitions: 1 },
  ];
  const existing = new Set(await admin.listTopics());
  const toCreate = wanted.filter((t) => !existing.has(t.topic));
  if (toCreate.length > 0) {
    try {
      await createTopicsReady(
        admin,
        toCreate.map((t) => ({
          ...t,
          replicationFactor: replication.replicationFactor,
          configEntries: [
            ...LOG_CONFIG,
            { name: 'min.insync.replicas', value: String(replication.minInsyncReplicas) },
          ],
        })),
      );
    } catch (e) {
      if (!/already exists/i.test((e as Error).message)) throw e;
      // Created by another at the same moment: wait until it settles, then report it as existing.
      await createTopicsReady(
        admin,
        [],
        30_000,
        toCreate.map((t) => t.topic),
      );
      for (const t of toCreate) existing.add(t.topic);
    }
  }
  const found = await topicReplication(
    admin,
    wanted.map((t) => t.topic),
  );
  return wanted.map((t) => {
    const f = found.get(t.topic) ?? { partitions: 0, replicationFactor: 0, minInsyncReplicas: 0 };
    return {
      topic: t.topic,
      created: !existing.has(t.topic),
      ...f,
      problems: replicationProblems(f, replication),
    };
  });
}
