import { swapKey } from '../../src/events/keys.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SwapEvent } from '../../src/events/types.ts';
import { recordCreatedSwap } from '../../src/gateway/created.ts';
import { createGatewayMetrics } from '../../src/gateway/metrics.ts';
import { GatewayService } from '../../src/gateway/service.ts';
import { createLogger } from '../../src/observability/log.ts';
import { DurablePublisher, OutboxWriteError } from '../../src/outbox/outbox.ts';
import { ProviderClients } from '../../src/providers/clients.ts';
import { freshEventLog } from '../support/event-log.ts';
import {
  ADDRESSES,
  eventually,
  idempotencyKey,
  nonce,
  startPlatform,
  swapRow,
  type Platform,
} from './support.ts';

/**
 * Issue 13 point 5 on the real stack: created_swaps and the SwapCreated outbox row commit in one
 * transaction before any Kafka send. The gateway "dies" in the window (its Kafka sends of SwapCreated
 * fail, as when the process is killed between the commit and the send): the swap is still published, by
 * the webhook's key flush ahead of the first status, or by the outbox relay.
 */
describe('creation is durable before it is visible', () => {
  let p: Platform;
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let service: GatewayService;
  let publisher: DurablePublisher;
  const logger = createLogger({ level: 'silent' });

  beforeAll(async () => {
    log = await freshEventLog(2);
    p = await startPlatform({ label: 'gw-created', topic: log.topic });
    await p.poller.syncCatalogs();
    // The platform's own relay would publish the row within 250 ms: stopped, so the window stays open.
    await p.gateway.relay.stop();
    const real = p.gateway.appender;
    // A gateway whose Kafka sends of SwapCreated never arrive (the process died after the commit).
    const dying = {
      appendAll: async (events: SwapEvent[]) => {
        if (events.some((e) => e.eventType === 'SwapCreated'))
          throw new Error('gateway killed before the send');
        return real.appendAll(events);
      },
    };
    publisher = new DurablePublisher({ pool: p.pool, appender: dying, topic: p.topic, logger, bypassMs: 1 });
    service = new GatewayService({
      pool: p.pool,
      partners: new ProviderClients(p.pool, { refreshMs: 60_000 }),
      publisher,
      logger,
      metrics: createGatewayMetrics(),
      now: () => new Date(),
      quoteMinValidityMs: 2000,
    });
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
    await log?.close();
  });

  const createFloat = async () => {
    const answer = await service.createSwap(
      {
        providerId: p.providerId,
        tradeMethod: 'float',
        from: 'btc',
        to: 'eth',
        amount: '0.01',
        ...ADDRESSES,
        nonce: nonce(),
      },
      idempotencyKey(),
    );
    expect(answer.status).toBe(201);
    return answer.body.swapId as string;
  };

  const outboxRow = async (swapId: string) =>
    (
      await p.pool.query<{ event_type: string; published: boolean }>(
        `select event_type, published_at is not null as published from platform.outbox
         where aggregate_key = $1 and topic = $2`,
        [swapKey(p.providerId, swapId), p.topic],
      )
    ).rows;

  const journal = async (swapId: string) =>
    (
      await p.pool.query<{ event_type: string; outcome: string; status: string | null }>(
        `select event_type, outcome, payload->>'status' as status from event_journal
         where swap_id = $1 order by partition, "offset"`,
        [swapId],
      )
    ).rows;

  it('the webhook of a swap whose SwapCreated is still queued is folded after it: nothing lost', async () => {
    const swapId = await createFloat();
    // Visible to the webhook and the poller, and its SwapCreated queued, unpublished.
    const created = await p.pool.query(
      `select 1 from platform.created_swaps where provider_id = $1 and swap_id = $2`,
      [p.providerId, swapId],
    );
    expect(created.rowCount).toBe(1);
    expect(await outboxRow(swapId)).toEqual([{ event_type: 'SwapCreated', published: false }]);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await swapRow(p.pool, swapId)).toBeUndefined();

    // The partner reports a status at once: the webhook flushes the key first.
    p.sim.advance(swapId, 'PENDING');
    await p.sim.settled();
    expect(
      p.sim
        .webhookDeliveries()
        .filter((d) => d.swapId === swapId)
        .map((d) => d.status),
    ).toEqual([200]);
    const row = await eventually('the swap folded', async () => {
      const r = await swapRow(p.pool, swapId);
      return r?.status === 'PENDING' ? r : undefined;
    });
    expect(row.status).toBe('PENDING');
    expect(await journal(swapId)).toEqual([
      { event_type: 'SwapCreated', outcome: 'applied', status: null },
      { event_type: 'StatusReported', outcome: 'applied', status: 'PENDING' },
    ]);
    expect(await outboxRow(swapId)).toEqual([{ event_type: 'SwapCreated', published: true }]);
  });

  it('with no status report, the outbox relay publishes the SwapCreated', async () => {
    const swapId = await createFloat();
    expect(await outboxRow(swapId)).toEqual([{ event_type: 'SwapCreated', published: false }]);
    p.gateway.relay.start(100);
    try {
      const row = await eventually('the swap folded', async () => swapRow(p.pool, swapId));
      expect(row.status).toBe('CREATED');
      expect(await outboxRow(swapId)).toEqual([{ event_type: 'SwapCreated', published: true }]);
    } finally {
      await p.gateway.relay.stop();
    }
  });

  it('the two writes commit together: a failed created_swaps write queues no SwapCreated', async () => {
    const swapId = `atomic-${nonce().slice(0, 12)}`;
    const event = {
      eventId: crypto.randomUUID(),
      eventType: 'SwapCreated',
      swapId,
      aggregateKey: swapId,
      providerId: p.providerId,
    } as unknown as SwapEvent;
    await expect(
      publisher.publishWith(
        [event],
        async (client) => {
          await recordCreatedSwap(client, { swapId, providerId: p.providerId, createdAt: 'not a time' });
        },
        'test',
      ),
    ).rejects.toBeInstanceOf(OutboxWriteError);
    expect(await outboxRow(swapId)).toEqual([]);
    const created = await p.pool.query(`select 1 from platform.created_swaps where swap_id = $1`, [swapId]);
    expect(created.rowCount).toBe(0);
  });
});
