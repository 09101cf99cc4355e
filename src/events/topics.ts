import type { Admin } from 'kafkajs';

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
    await admin.createTopics({
      topics: toCreate.map((t) => ({ ...t, configEntries: LOG_CONFIG })),
      waitForLeaders: true,
    });
  }
  const meta = await admin.fetchTopicMetadata({ topics: wanted.map((t) => t.topic) });
  return wanted.map((t) => ({
    topic: t.topic,
    created: !existing.has(t.topic),
    partitions: meta.topics.find((m) => m.name === t.topic)?.partitions.length ?? 0,
  }));
}
