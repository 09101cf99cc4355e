import { ConfigResourceTypes, type Admin } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { EventAppender, EventCodec } from '../../src/events/index.ts';
import { createKafka } from '../../src/events/kafka.ts';
import { produceOutcome } from '../../src/events/produce-rules.ts';
import { createTopics } from '../../src/events/topics.ts';
import { swapCreated } from '../../src/testing/events.ts';
import { testKafka, testStack, uniqueName } from '../support/context.ts';
import { CLUSTER_BROKERS, useClusterStack } from './cluster.ts';
import { startKafkaProxy } from './kafka-proxy.ts';
import { readWholeTopic, sleep } from './rig.ts';

/**
 * The appender's one path where a 200 could lie (issue 41, item 10), made to happen on the real cluster:
 * a batch is written but its answer lost (a proxy drops it and closes the connection), the topic's
 * max.message.bytes is then lowered so the broker refuses the resend (it checks the size before it looks
 * for a duplicate), and restored. The next batch of the same size would take the refused batch's
 * sequence number, which the broker holds: acknowledged as a duplicate, never written; unless the
 * appender renewed its producer id.
 */
useClusterStack();
const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
});

/** Sets (or with undefined removes) one config of `topic`, keeping its other own configs. */
async function setTopicConfig(admin: Admin, topic: string, name: string, value: string | undefined) {
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
  });
  const own = described.resources[0]!.configEntries.filter(
    (e) => !e.isDefault && !e.readOnly && e.configName !== name,
  );
  await admin.alterConfigs({
    validateOnly: false,
    resources: [
      {
        type: ConfigResourceTypes.TOPIC,
        name: topic,
        configEntries: [
          ...own.map((e) => ({ name: e.configName, value: e.configValue })),
          ...(value === undefined ? [] : [{ name, value }]),
        ],
      },
    ],
  });
}

/** Waits until the partition's leader applies the size limit (`refuses`) or no longer does. */
async function untilLeader(topic: string, codec: EventCodec, refuses: boolean): Promise<void> {
  const producer = testKafka('faults-size-probe').producer({ retry: { retries: 0 } });
  await producer.connect();
  try {
    for (let i = 0; i < 100; i++) {
      const refused = await producer
        .send({
          topic,
          acks: -1,
          messages: [{ partition: 0, value: await codec.encode(swapCreated(`probe-${i}`)) }],
        })
        .then(
          () => false,
          (e: { type?: string }) => e.type === 'MESSAGE_TOO_LARGE',
        );
      if (refused === refuses) return;
      await sleep(200);
    }
    throw new Error(`the leader of ${topic} did not ${refuses ? 'apply' : 'drop'} the size limit`);
  } finally {
    await producer.disconnect();
  }
}

describe(`the appender on ${CLUSTER_BROKERS} brokers, a resend refused`, () => {
  it('a batch refused after an answer was lost: the next batch of its size is written, not taken for it', async () => {
    const stack = testStack();
    const topic = uniqueName('resend');
    const admin = testKafka('faults-resend').admin();
    await admin.connect();
    stops.push(() => admin.disconnect());
    await createTopics(admin, { eventsTopic: topic, dlqTopic: `${topic}.dlq`, partitions: 1 });

    const proxy = await startKafkaProxy(stack.kafkaBrokers.split(','));
    stops.push(() => proxy.close());
    const codec = new EventCodec(stack.registryUrl, topic);
    const appender = new EventAppender({
      kafka: createKafka({ brokers: proxy.brokers, clientId: 'faults-resend', requestTimeoutMs: 5000 }),
      codec,
      topic,
      sendTimeoutMs: 30_000,
    });
    stops.push(() => appender.stop());
    const event = (n: number) => swapCreated(`resend-${n}`, { providerId: 'faults' });
    const [first, lostAnswer, next] = [event(1), event(2), event(3)];

    await appender.append(first); // the producer id, and sequence 0 written
    const dropped = proxy.dropNextProduceAnswer();
    const refused = appender.append(lostAnswer).then(
      () => undefined,
      (e: Error) => e,
    );
    await dropped; // written at sequence 1; the client does not know
    await setTopicConfig(admin, topic, 'max.message.bytes', '1');
    await untilLeader(topic, codec, true);
    proxy.releaseProduce(); // the resend of sequence 1: refused, MESSAGE_TOO_LARGE
    const error = await refused;
    expect(error, 'the resend was refused').toBeInstanceOf(Error);
    expect(produceOutcome(error)).toBe('refused');
    expect(error!.message).not.toMatch(/did not acknowledge/);

    await setTopicConfig(admin, topic, 'max.message.bytes', undefined);
    await untilLeader(topic, codec, false);
    await appender.append(next); // one message, as the refused batch: sequence 1 again on the old producer id

    const inLog = new Set<string>();
    await readWholeTopic(topic, codec, (e) => inLog.add(e.eventId));
    expect(inLog.has(first.eventId)).toBe(true);
    expect(inLog.has(lostAnswer.eventId), 'the batch whose answer was lost is in the log').toBe(true);
    expect(inLog.has(next.eventId), 'the batch acknowledged after the refusal is in the log').toBe(true);
  });
});
