import { describe, expect, it } from 'vitest';
import type { Admin } from 'kafkajs';
import { createTopicsReady } from '../../src/events/topics.ts';

/**
 * The waiting rule of createTopicsReady over a scripted admin (the broker's answers, in order): the real
 * broker gives the settling answers only now and then, under load, so the rule is checked here and the
 * creation itself by the integration suites that create topics through it.
 */
function scriptedAdmin(answers: (Error | number[])[]) {
  const asked: string[][] = [];
  const admin = {
    createTopics: async () => true,
    fetchTopicMetadata: async ({ topics }: { topics: string[] }) => {
      asked.push(topics);
      const next = answers.shift();
      if (next === undefined) throw new Error('asked more often than scripted');
      if (next instanceof Error) throw next;
      return {
        topics: topics.map((name) => ({
          name,
          partitions: next.map((leader, partitionId) => ({ partitionId, leader })),
        })),
      };
    },
  } as unknown as Admin;
  return { admin, asked };
}

const kafkaError = (type: string) => Object.assign(new Error(`kafka says ${type}`), { type });

describe('createTopicsReady', () => {
  it('waits out "does not host this topic-partition" and leaderless partitions, then returns', async () => {
    const { admin, asked } = scriptedAdmin([
      kafkaError('UNKNOWN_TOPIC_OR_PARTITION'),
      kafkaError('LEADER_NOT_AVAILABLE'),
      [1, -1],
      [1, 1],
    ]);
    await createTopicsReady(admin, [{ topic: 't', numPartitions: 2 }]);
    expect(asked).toHaveLength(4);
  });

  it('throws any other metadata error at once', async () => {
    const { admin, asked } = scriptedAdmin([kafkaError('TOPIC_AUTHORIZATION_FAILED')]);
    await expect(createTopicsReady(admin, [{ topic: 't' }])).rejects.toThrow(/TOPIC_AUTHORIZATION_FAILED/);
    expect(asked).toHaveLength(1);
  });

  it('gives up after its deadline, naming what was still missing', async () => {
    const { admin } = scriptedAdmin(Array.from({ length: 50 }, () => [-1]));
    await expect(createTopicsReady(admin, [{ topic: 't' }], 120)).rejects.toThrow(
      /topics t not ready in 120 ms: no leader yet for t\[0\]/,
    );
  });
});
