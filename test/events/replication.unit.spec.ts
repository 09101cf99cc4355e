import { describe, expect, it } from 'vitest';
import type { Admin } from 'kafkajs';
import {
  assertReplicated,
  createTopics,
  resolveReplication,
  TopicReplicationError,
} from '../../src/events/topics.ts';

/** An admin client over a cluster of `brokers` whose topics have the given replicas and min ISR. */
function fakeAdmin(brokers: number, topics: Record<string, { replicas: number; minIsr: number }>) {
  const created: unknown[] = [];
  let settleAfter = 2; // metadata right after a creation: "does not host this topic-partition", twice
  let configsSettleAfter = 0; // and its configs, asked of another broker, once
  const admin = {
    describeCluster: async () => ({
      brokers: Array.from({ length: brokers }, (_, i) => ({ nodeId: i })),
      controller: 0,
      clusterId: 'c',
    }),
    listTopics: async () => Object.keys(topics),
    createTopics: async ({
      topics: asked,
    }: {
      topics: {
        topic: string;
        replicationFactor: number;
        configEntries: { name: string; value: string }[];
      }[];
    }) => {
      for (const t of asked) {
        created.push(t);
        topics[t.topic] = {
          replicas: t.replicationFactor,
          minIsr: Number(t.configEntries.find((e) => e.name === 'min.insync.replicas')!.value),
        };
      }
      settleAfter = 2;
      configsSettleAfter = 1;
      return true;
    },
    fetchTopicMetadata: async ({ topics: names }: { topics: string[] }) => {
      if (settleAfter-- > 0)
        throw Object.assign(new Error('This server does not host this topic-partition'), {
          type: 'UNKNOWN_TOPIC_OR_PARTITION',
        });
      return {
        topics: names.map((name) => ({
          name,
          partitions: [0, 1].map((partitionId) => ({
            partitionId,
            leader: 0,
            replicas: Array.from({ length: topics[name]!.replicas }, (_, i) => i),
            isr: Array.from({ length: topics[name]!.replicas }, (_, i) => i),
          })),
        })),
      };
    },
    describeConfigs: async ({ resources }: { resources: { name: string }[] }) => {
      if (configsSettleAfter-- > 0)
        throw Object.assign(new Error('This server does not host this topic-partition'), {
          type: 'UNKNOWN_TOPIC_OR_PARTITION',
        });
      return {
        resources: resources.map((r) => ({
          resourceName: r.name,
          configEntries: [{ configName: 'min.insync.replicas', configValue: String(topics[r.name]!.minIsr) }],
        })),
      };
    },
  };
  return { admin: admin as unknown as Admin, created };
}

describe('replicated topics', () => {
  it('resolves the replication from the cluster size: 3 and 2 on three brokers or more, 1 and 1 with a warning on one', () => {
    expect(resolveReplication(3)).toEqual({ replicationFactor: 3, minInsyncReplicas: 2 });
    expect(resolveReplication(5)).toEqual({ replicationFactor: 3, minInsyncReplicas: 2 });
    expect(resolveReplication(2)).toEqual({ replicationFactor: 2, minInsyncReplicas: 1 });
    const one = resolveReplication(1);
    expect(one).toMatchObject({ replicationFactor: 1, minInsyncReplicas: 1 });
    expect(one.warning).toMatch(/not replicated/);
    expect(resolveReplication(5, { replicationFactor: 5, minInsyncReplicas: 3 })).toEqual({
      replicationFactor: 5,
      minInsyncReplicas: 3,
    });
    expect(() => resolveReplication(1, { replicationFactor: 3 })).toThrow(TopicReplicationError);
    expect(() => resolveReplication(3, { replicationFactor: 2, minInsyncReplicas: 3 })).toThrow(
      /no write could be acknowledged/,
    );
  });

  it('creates both topics with the replication and min.insync.replicas, waiting out metadata that has not settled', async () => {
    const { admin, created } = fakeAdmin(3, {});
    const report = await createTopics(admin, { eventsTopic: 'ev', dlqTopic: 'ev.dlq', partitions: 2 });
    expect(created).toMatchObject([
      {
        topic: 'ev',
        replicationFactor: 3,
        configEntries: expect.arrayContaining([{ name: 'min.insync.replicas', value: '2' }]),
      },
      { topic: 'ev.dlq', replicationFactor: 3 },
    ]);
    expect(
      report.map((t) => [t.topic, t.created, t.replicationFactor, t.minInsyncReplicas, t.problems]),
    ).toEqual([
      ['ev', true, 3, 2, []],
      ['ev.dlq', true, 3, 2, []],
    ]);
  });

  it('reports an existing topic less replicated than configured, and refuses a writer on it', async () => {
    const { admin } = fakeAdmin(3, { ev: { replicas: 1, minIsr: 1 }, 'ev.dlq': { replicas: 3, minIsr: 2 } });
    const report = await createTopics(admin, { eventsTopic: 'ev', dlqTopic: 'ev.dlq', partitions: 2 });
    expect(report[0]).toMatchObject({
      created: false,
      problems: ['replication factor 1 < 3', 'min.insync.replicas 1 < 2'],
    });
    expect(report[1]!.problems).toEqual([]);
    await expect(assertReplicated(admin, 'ev')).rejects.toThrow(
      /topic ev is less replicated than configured \(replication factor 1 < 3, min.insync.replicas 1 < 2\)/,
    );
    await expect(assertReplicated(admin, 'ev.dlq')).resolves.toMatchObject({ replicationFactor: 3 });
    // Configured knowingly lower: the writer starts.
    await expect(
      assertReplicated(admin, 'ev', { replicationFactor: 1, minInsyncReplicas: 1 }),
    ).resolves.toMatchObject({
      replicationFactor: 1,
    });
  });
});
