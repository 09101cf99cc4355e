import { swapKey } from '../../src/events/keys.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../../src/events/kafka.ts';
import { createTopicsReady } from '../../src/events/topics.ts';
import { runCli } from '../support/cli.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { privateKafka } from '../support/private-kafka.ts';
import { valueOf } from '../../src/observability/metrics.ts';
import {
  ADDRESSES,
  api,
  eventually,
  idempotencyKey,
  nonce,
  startPlatform,
  statusJournal,
  swapRow,
  type Platform,
} from '../gateway/support.ts';

const SEND_TIMEOUT_MS = 1500;

/**
 * Kafka stopped while the wallet creates swaps (a private broker, stopped and started again): the swap
 * is answered, its events land in the Postgres outbox, a webhook for it meanwhile is not a 404, and
 * once Kafka is back the relay publishes the events in order with their original ids, before the
 * webhook's StatusReported.
 */
describe('gateway while Kafka is down: the outbox', () => {
  const stack = testStack();
  const topic = uniqueName('events');
  let broker: Awaited<ReturnType<typeof privateKafka>>;
  let p: Platform;

  beforeAll(async () => {
    broker = await privateKafka('gw-outbox');
    const admin = createKafka({ brokers: [broker.brokers], clientId: 'test-admin' }).admin();
    await admin.connect();
    await createTopicsReady(admin, [
      { topic, numPartitions: 2 },
      { topic: `${topic}.dlq`, numPartitions: 1 },
    ]);
    await admin.disconnect();
    p = await startPlatform({
      label: 'gw-outbox',
      topic,
      kafkaBrokers: broker.brokers,
      sendTimeoutMs: SEND_TIMEOUT_MS,
      // Started once Kafka is back: what is under test is the gateway's outbox, not the projector's outage.
      projector: false,
    });
    await p.poller.syncCatalogs();
  }, 150_000);

  afterAll(async () => {
    await p?.stop();
    await broker?.remove();
  }, 60_000);

  const outbox = async () =>
    (
      await p.pool.query<{
        seq: string;
        aggregate_key: string;
        event_id: string;
        event_type: string;
        published: boolean;
      }>(
        `select seq::text as seq_text, aggregate_key, event_id, event_type, published_at is not null as published
         from platform.outbox where provider_id = $1 order by seq`,
        [p.providerId],
      )
    ).rows;

  it('answers the swap, keeps its events in order and relays them with their ids once Kafka is back', async () => {
    const q = await api(p, 'POST', '/v1/quotes', {
      providerId: p.providerId,
      from: 'btc',
      to: 'eth',
      amount: '0.1',
    });
    expect(q.status).toBe(200);
    expect(await outbox()).toEqual([]); // Kafka acknowledged the quote itself

    await broker.stop();
    const started = Date.now();
    const s = await api(
      p,
      'POST',
      '/v1/swaps',
      {
        providerId: p.providerId,
        tradeMethod: 'fixed',
        quoteRef: q.body.quoteRef,
        nonce: nonce(),
        ...ADDRESSES,
      },
      { 'idempotency-key': idempotencyKey() },
    );
    const took = Date.now() - started;
    expect(s.status).toBe(201);
    expect(s.body.signatureValid).toBe(true);
    // One Kafka deadline (SwapRequested), then the outbox directly (SwapCreated): not two deadlines.
    expect(took).toBeGreaterThanOrEqual(SEND_TIMEOUT_MS - 50);
    expect(took).toBeLessThan(2 * SEND_TIMEOUT_MS + 1000);
    const swapId = s.body.swapId as string;
    const requestKey = `request:${s.body.requestId as string}`;

    // A second swap meanwhile goes straight to the outbox.
    const f = await api(
      p,
      'POST',
      '/v1/swaps',
      {
        providerId: p.providerId,
        tradeMethod: 'float',
        from: 'ltc',
        to: 'btc',
        amount: '2',
        nonce: nonce(),
        ...ADDRESSES,
      },
      { 'idempotency-key': idempotencyKey() },
    );
    expect(f.status).toBe(201);
    expect(Date.now() - started - took).toBeLessThan(SEND_TIMEOUT_MS);

    const pending = await outbox();
    expect(pending.map((r) => [r.event_type, r.aggregate_key, r.published])).toEqual([
      ['SwapRequested', requestKey, false],
      ['SwapCreated', swapKey(p.providerId, swapId), false],
      // A float swap sent without a quote is quoted by the gateway first (every swap has a quote).
      ['QuoteReceived', expect.stringMatching(/^quote:/), false],
      ['SwapRequested', `request:${f.body.requestId as string}`, false],
      ['SwapCreated', swapKey(p.providerId, f.body.swapId as string), false],
    ]);
    expect(await valueOf(p.gateway.metrics.outbox.published, { path: 'outbox' })).toBe(5);

    // The webhook finds the swap (the gateway's created_swaps), so never a 404; it cannot append: 503.
    p.sim.advance(swapId, 'PENDING');
    await p.sim.settled();
    const during = p.sim.webhookDeliveries().filter((d) => d.swapId === swapId);
    expect(during.map((d) => d.status)).toEqual([503]);

    const listed = await runCli(['outbox', 'list'], { DATABASE_URL: stack.databaseUrl });
    expect(listed.code).toBe(0);
    for (const r of pending) expect(listed.stdout).toContain(r.event_id);

    await broker.start();
    await eventually(
      'the relay to publish the outbox',
      async () => ((await outbox()).every((r) => r.published) ? true : undefined),
      60_000,
    );
    expect(await outbox()).toHaveLength(5);
    const again = await p.sim.pushWebhook(swapId);
    expect(again.status).toBe(200);

    await p.startProjector();
    // (waitForProjection reads the shared broker; this topic lives on the private one.)
    const row = await eventually(
      'the projection of the relayed swap and its report',
      async () => {
        const r = await swapRow(p.pool, swapId);
        const other = await swapRow(p.pool, f.body.swapId as string);
        return r?.status === 'PENDING' && other ? r : undefined;
      },
      60_000,
    );
    expect(row).toMatchObject({ status: 'PENDING', request_id: s.body.requestId });
    expect((await statusJournal(p.pool, swapId)).map((j) => `${j.source}:${j.outcome}`)).toEqual([
      'webhook:applied',
    ]);
    // The log holds the outbox events with their original ids, SwapCreated before the StatusReported.
    const journal = await p.pool.query<{
      event_id: string;
      event_type: string;
      offset: string;
      aggregate_key: string;
    }>(
      `select event_id, event_type, "offset"::text, aggregate_key from event_journal
       where aggregate_key = any($1) and outcome = 'applied' order by aggregate_key, "offset"`,
      [[swapKey(p.providerId, swapId), requestKey]],
    );
    const ids = new Map(pending.map((r) => [r.event_type + r.aggregate_key, r.event_id]));
    expect(journal.rows.find((j) => j.event_type === 'SwapCreated')!.event_id).toBe(
      ids.get('SwapCreated' + swapKey(p.providerId, swapId)),
    );
    expect(journal.rows.find((j) => j.event_type === 'SwapRequested')!.event_id).toBe(
      ids.get('SwapRequested' + requestKey),
    );
    const created = journal.rows.find((j) => j.event_type === 'SwapCreated')!;
    const reported = journal.rows.find((j) => j.event_type === 'StatusReported')!;
    expect(BigInt(reported.offset)).toBeGreaterThan(BigInt(created.offset));
    expect(await swapRow(p.pool, f.body.swapId as string)).toMatchObject({ status: 'CREATED' });
  }, 120_000);
});
