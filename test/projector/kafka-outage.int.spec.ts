import { afterAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/client.ts';
import { migrateProjection } from '../../src/db/migrate.ts';
import { EventAppender, EventCodec, createKafka, createTopicsReady } from '../../src/events/index.ts';
import { createLogger } from '../../src/observability/log.ts';
import { projectionLag } from '../../src/projector/lag.ts';
import { startProjector } from '../../src/projector/run.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { privateKafka } from '../support/private-kafka.ts';

describe('projector across a Kafka outage (private broker)', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  });

  it('goes on folding after the broker comes back, without a restart', async () => {
    const stack = testStack();
    const broker = await privateKafka('projector-outage');
    cleanups.push(() => broker.remove());
    const kafka = createKafka({ brokers: broker.brokers.split(','), clientId: 'outage-test' });
    const topic = uniqueName('outage');
    const admin = kafka.admin();
    await admin.connect();
    await createTopicsReady(admin, [{ topic, numPartitions: 2 }, { topic: `${topic}.dlq` }]);
    await admin.disconnect();
    const codec = new EventCodec(stack.registryUrl, topic);
    const schema = uniqueName('outage', '_');
    await migrateProjection(stack.databaseUrl, schema);
    const pool = createPool(stack.databaseUrl, { searchPath: schema });
    cleanups.push(() => pool.end());
    const running = await startProjector(
      {
        DATABASE_URL: stack.databaseUrl,
        KAFKA_BROKERS: broker.brokers.split(','),
        SCHEMA_REGISTRY_URL: stack.registryUrl,
        EVENTS_TOPIC: topic,
        DLQ_TOPIC: `${topic}.dlq`,
        KAFKA_CLIENT_ID: 'outage-test',
        PROJECTION_SCHEMA: schema,
      },
      createLogger({ level: 'silent' }),
    );
    cleanups.push(() => running.stop());
    const append = async (events: Parameters<EventAppender['appendAll']>[0]) => {
      const appender = new EventAppender({ kafka, codec, topic, sendTimeoutMs: 30_000 });
      await appender.start();
      await appender.appendAll(events);
      await appender.stop();
    };
    const folded = async (swapId: string, status: string, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const r = await pool.query('select status from swaps where swap_id = $1', [swapId]);
        if (r.rows[0]?.status === status) return true;
        await new Promise((res) => setTimeout(res, 250));
      }
      return false;
    };

    await append([swapCreated('out-1'), statusReported('out-1', 'PENDING')]);
    expect(await folded('out-1', 'PENDING', 30_000)).toBe(true);

    await broker.stop();
    await new Promise((r) => setTimeout(r, 12_000)); // longer than the consumer's session timeout
    await broker.start();

    await append([statusReported('out-1', 'FINISHED', { amount: '1' })]);
    expect(await folded('out-1', 'FINISHED', 60_000)).toBe(true);
    const admin2 = kafka.admin();
    await admin2.connect();
    const client = await pool.connect();
    try {
      expect((await projectionLag(admin2, client, topic)).every((p) => p.lag === 0n)).toBe(true);
    } finally {
      client.release();
      await admin2.disconnect();
    }
    // Its own waits (a broker start twice, 12 s down, up to 30 + 60 s of folding) outlast the default 60 s.
  }, 180_000);
});
