import type { Admin, ITopicConfig } from 'kafkajs';

export interface TopicPlan {
  eventsTopic: string;
  dlqTopic: string;
  partitions: number;
}

export interface TopicReport {
  topic: string;
  created: boolean;
  partitions: number;
}

/** The event log keeps everything: no retention limit, no compaction (replay starts at offset 0). */
const LOG_CONFIG = [
  { name: 'cleanup.policy', value: 'delete' },
  { name: 'retention.ms', value: '-1' },
  { name: 'retention.bytes', value: '-1' },
];

/** Metadata errors of a topic whose creation has not reached every part of the broker yet: worth a wait. */
const SETTLING = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);

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
): Promise<void> {
  await admin.createTopics({ topics, waitForLeaders: false });
  const deadline = Date.now() + timeoutMs;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    let missing: string;
    try {
      const meta = await admin.fetchTopicMetadata({ topics: topics.map((t) => t.topic) });
      const leaderless = meta.topics.flatMap((t) =>
        t.partitions.filter((p) => p.leader < 0).map((p) => `${t.name}[${p.partitionId}]`),
      );
      if (leaderless.length === 0) return;
      missing = `no leader yet for ${leaderless.join(', ')}`;
    } catch (e) {
      if (!SETTLING.has((e as { type?: string }).type ?? '')) throw e;
      missing = (e as Error).message;
    }
    if (Date.now() >= deadline)
      throw new Error(
        `topics ${topics.map((t) => t.topic).join(', ')} not ready in ${timeoutMs} ms: ${missing}`,
      );
    await new Promise((r) => setTimeout(r, wait));
  }
}

/** Creates the events and dead-letter topics; a topic that exists is reported, never changed. */
export async function createTopics(admin: Admin, plan: TopicPlan): Promise<TopicReport[]> {
  const wanted = [
    { topic: plan.eventsTopic, numPartitions: plan.partitions },
    // Dead letters are few; their order follows the events topic partition they came from.
    { topic: plan.dlqTopic, numPartitions: 1 },
  ];
  const existing = new Set(await admin.listTopics());
  const toCreate = wanted.filter((t) => !existing.has(t.topic));
  if (toCreate.length > 0) {
    await createTopicsReady(
      admin,
      toCreate.map((t) => ({ ...t, configEntries: LOG_CONFIG })),
    );
  }
  const meta = await admin.fetchTopicMetadata({ topics: wanted.map((t) => t.topic) });
  return wanted.map((t) => ({
    topic: t.topic,
    created: !existing.has(t.topic),
    partitions: meta.topics.find((m) => m.name === t.topic)?.partitions.length ?? 0,
  }));
}
