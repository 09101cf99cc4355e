import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePlatform } from '../../src/db/migrate.ts';
import { createKafka } from '../../src/events/kafka.ts';
import { createTopicsReady } from '../../src/events/topics.ts';
import { startWebhook, type RunningWebhook } from '../../src/ingest/webhook/run.ts';
import { recordCreatedSwap } from '../../src/gateway/created.ts';
import { freshProjection, testStack, uniqueName } from '../support/context.ts';
import { privateKafka } from '../support/private-kafka.ts';
import { valueOf } from '../../src/observability/metrics.ts';
import {
  capturedLogger,
  endOffsets,
  postStatus,
  testProvider,
  writeProvidersFile,
  type WebhookCall,
} from './webhook-support.ts';

const SEND_TIMEOUT_MS = 1500;

describe('status webhook while Kafka is down (a private broker, stopped and started again)', () => {
  const stack = testStack();
  const P = testProvider('down');
  const logs = capturedLogger('info');
  let broker: Awaited<ReturnType<typeof privateKafka>>;
  let projection: Awaited<ReturnType<typeof freshProjection>>;
  let webhook: RunningWebhook;
  const topic = uniqueName('events');
  const swapId = uniqueName('swap');

  const post = (status = 'PENDING') =>
    postStatus(
      webhook.url,
      swapId,
      { providerId: P.id, providerStatus: status, amount: '' },
      {
        'x-api-key': P.key.key,
      },
    );

  beforeAll(async () => {
    [broker, projection] = await Promise.all([
      privateKafka('webhook-down'),
      freshProjection('kafka_down'),
      migratePlatform(stack.databaseUrl),
    ]).then(([b, p]) => [b, p] as const);
    const admin = createKafka({ brokers: [broker.brokers], clientId: 'test-admin' }).admin();
    await admin.connect();
    await createTopicsReady(admin, [{ topic, numPartitions: 1 }]);
    await admin.disconnect();
    await recordCreatedSwap(projection.pool, {
      swapId,
      providerId: P.id,
      createdAt: new Date().toISOString(),
    });
    webhook = await startWebhook(
      {
        DATABASE_URL: stack.databaseUrl,
        KAFKA_BROKERS: [broker.brokers],
        SCHEMA_REGISTRY_URL: stack.registryUrl,
        EVENTS_TOPIC: topic,
        KAFKA_CLIENT_ID: 'webhook-down-test',
        KAFKA_SEND_TIMEOUT_MS: SEND_TIMEOUT_MS,
        PROJECTION_SCHEMA: projection.schema,
        PROVIDERS_FILE: writeProvidersFile([P]),
        PROVIDER_REFRESH_MS: 60_000,
        WEBHOOK_HOST: '127.0.0.1',
        WEBHOOK_PORT: 0,
        WEBHOOK_BODY_LIMIT_BYTES: 4096,
      },
      logs.logger,
    );
  }, 120_000);

  afterAll(async () => {
    await webhook?.stop();
    await projection?.pool.end();
    await broker?.remove();
  }, 60_000);

  it('answers an error, never "queued", within the deadline; after Kafka is back, "queued" again without a restart', async () => {
    const first = await post();
    expect(first.status).toBe(200);
    expect(first.json()).toEqual({ message: 'queued' });

    await broker.stop();
    const down: WebhookCall[] = await Promise.all([post(), post('ON_HOLD'), post()]);
    for (const r of down) {
      expect(r.status).toBe(503);
      expect(r.body).not.toContain('queued');
      expect(r.json()).toEqual({ error: 'the update was not accepted in time; retry later' });
      expect(r.headers['retry-after']).toBe('1');
      expect(r.ms).toBeGreaterThanOrEqual(SEND_TIMEOUT_MS - 50);
      expect(r.ms).toBeLessThan(SEND_TIMEOUT_MS + 2500);
    }
    expect(await valueOf(webhook.metrics.responses, { status: '503', authenticated: 'true' })).toBe(3);
    expect(logs.lines.filter((l) => l.msg === 'webhook refused' && l.status === 503)).toHaveLength(3);

    await broker.start();
    // The same server, never restarted: keep posting until Kafka acknowledges again.
    const deadline = Date.now() + 40_000;
    const after: WebhookCall[] = [];
    for (;;) {
      const r = await post('FINISHED');
      after.push(r);
      if (r.status === 200 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const last = after.at(-1)!;
    expect(last.status).toBe(200);
    expect(last.json()).toEqual({ message: 'queued' });
    for (const r of after.slice(0, -1)) expect(r.status).toBe(503); // no other answer meanwhile
    // Both acknowledged events are in the log; a timed-out one may be too (its outcome was "unknown").
    expect(await endOffsets(broker.brokers, topic)).toBeGreaterThanOrEqual(2n);
    const next = await post('FINISHED');
    expect(next.status).toBe(200);
  });
});
