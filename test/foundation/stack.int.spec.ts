import { afterAll, describe, expect, it } from 'vitest';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { eq } from 'drizzle-orm';
import { stackPorts } from '../../scripts/stack/paths.ts';
import { resolvePostgres } from '../../scripts/stack/postgres.ts';
import { registryService, startRegistry } from '../../scripts/stack/registry.ts';
import { stopService } from '../../scripts/stack/process.ts';
import { projection, projectionDb } from '../../src/db/projection.ts';
import { createTopic, freshProjection, testKafka, testStack, uniqueName } from '../support/context.ts';

// Proves the stack end to end: registry + Kafka + Postgres through the project's own clients.
describe('the stack', () => {
  const stack = testStack();
  const topic = uniqueName('stack-proof');
  const schema = {
    type: 'record',
    name: 'StackProof',
    namespace: 'swapledger.test',
    fields: [
      { name: 'id', type: 'string' },
      { name: 'amount', type: 'string' },
    ],
  };
  let encoded: Buffer;
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('registers an Avro schema, produces with an idempotent acks=all producer, consumes and decodes', async () => {
    const registry = new SchemaRegistry({ host: stack.registryUrl });
    const { id } = await registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(schema) },
      { subject: `${topic}-value` },
    );
    expect(id).toBeGreaterThan(0);
    await createTopic(topic);

    const kafka = testKafka();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    cleanups.push(() => producer.disconnect());
    const value = { id: 'swap-1', amount: '123456789012345678.123456789012345678' };
    const [meta] = await producer.send({
      topic,
      acks: -1,
      messages: [{ key: 'swap-1', value: await registry.encode(id, value) }],
    });
    expect(meta?.errorCode).toBe(0);

    const consumer = kafka.consumer({ groupId: uniqueName('stack-proof-group') });
    await consumer.connect();
    cleanups.push(() => consumer.disconnect());
    await consumer.subscribe({ topic, fromBeginning: true });
    const received = await new Promise<Buffer>((resolve) => {
      void consumer.run({ eachMessage: async ({ message }) => resolve(message.value!) });
    });
    encoded = received;
    expect(await registry.decode(received)).toEqual(value);
  });

  it('writes a row with drizzle through the committed migrations and reads it back', async () => {
    const { pool } = await freshProjection('stack_proof');
    cleanups.push(() => pool.end());
    const db = projectionDb(pool);
    await db.insert(projection.projectorCheckpoints).values({ topic, partition: 3, nextOffset: 2n ** 62n });
    const rows = await db
      .select()
      .from(projection.projectorCheckpoints)
      .where(eq(projection.projectorCheckpoints.topic, topic));
    expect(rows).toEqual([{ topic, partition: 3, nextOffset: 2n ** 62n }]);
  });

  it.runIf(stack.source === 'native stack')(
    'decodes the same message through a registry process started afresh on the same storage',
    async () => {
      expect(encoded).toBeDefined();
      const instance = 'registry-restart-proof';
      const port = stackPorts().registry + 7;
      const url = await startRegistry(await resolvePostgres(), () => {}, instance, port);
      cleanups.push(() => stopService(registryService(instance)));
      // A new client has no cache: the schema comes from the new process, by the id in the message.
      const fresh = new SchemaRegistry({ host: url });
      expect(await fresh.decode(encoded)).toEqual({
        id: 'swap-1',
        amount: '123456789012345678.123456789012345678',
      });
    },
  );
});
