import { createServer, request as httpRequest, type Server } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { EventCodec } from '../../src/events/index.ts';
import { createTopics } from '../../src/events/topics.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import { testKafka, testStack, uniqueName } from '../support/context.ts';
import { createSwapViaGateway, startPlatform } from '../gateway/support.ts';
import { CLUSTER_BROKERS, useClusterStack } from './cluster.ts';
import { postgresServer } from './postgres-server.ts';
import { readWholeTopic, registryWritesAgain, sleep } from './rig.ts';

/**
 * Issue 41, item 10: a swap the partner created while Postgres restarted was recorded nowhere (the
 * outbox transaction failed, the wallet got an error, the partner's webhooks 404). Here a proxy in front
 * of the partner stops the DATABASE_URL's server after the partner created the swap and before the
 * gateway hears of it, and starts it 3 s later: the gateway keeps retrying its record within its bound.
 * WARNING: it stops the Postgres server of DATABASE_URL for 3 s (see faults.faults.spec.ts).
 */
useClusterStack();
const log = (line: string) => console.log(`[faults] ${line}`);
const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
});

/** A proxy to the partner: once armed, the next swap creation's answer waits for `between()`. */
async function creationProxy(target: string) {
  let armed: (() => Promise<void>) | undefined;
  let done: Promise<void> | undefined;
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const out = httpRequest(
      {
        host: to.hostname,
        port: to.port,
        path: `${to.pathname.replace(/\/$/, '')}${req.url}`,
        method: req.method,
        headers: { ...req.headers, host: to.host },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          const between = req.method === 'POST' && req.url?.includes('/swap/') ? armed : undefined;
          if (between) armed = undefined;
          done = (between ?? (async () => undefined))();
          void done.then(() => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(chunks));
          });
        });
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}${to.pathname}`,
    arm: (between: () => Promise<void>) => (armed = between),
    close: () => new Promise((r) => server.close(r)),
  };
}

describe(`a swap created while Postgres restarts, on ${CLUSTER_BROKERS} brokers`, () => {
  it('is recorded: the wallet gets it, the log holds its SwapCreated, its webhooks are accepted', async () => {
    const stack = testStack();
    const topic = uniqueName('pgdown');
    const admin = testKafka('faults-pgdown').admin();
    await admin.connect();
    try {
      await createTopics(admin, { eventsTopic: topic, dlqTopic: `${topic}.dlq`, partitions: 3 });
    } finally {
      await admin.disconnect();
    }
    const server = await postgresServer(stack.databaseUrl);
    let proxy: Awaited<ReturnType<typeof creationProxy>> | undefined;
    const p = await startPlatform({
      label: 'pgdown',
      topic,
      kafkaBrokers: stack.kafkaBrokers,
      partnerUrl: async (url) => {
        proxy = await creationProxy(url);
        return proxy.url;
      },
    });
    stops.push(
      () => p.stop(),
      () => proxy!.close(),
    );
    await p.poller.syncCatalogs();
    const codec = new EventCodec(stack.registryUrl, topic);
    await codec.register(); // before the restart: the registry keeps its storage in that Postgres

    let restarted: Promise<void> | undefined;
    // However the test ends, the server is started again before the next scenario.
    stops.unshift(() => restarted ?? Promise.resolve());
    proxy!.arm(async () => {
      // The partner has created the swap; the gateway has not heard of it yet.
      await server.stop();
      log('Postgres stopped after the partner created the swap');
      restarted = sleep(3000)
        .then(() => server.start())
        .then(() => log('Postgres started again'));
    });
    const swapId = await createSwapViaGateway(p, 'fixed');
    expect(restarted, 'Postgres was stopped between the creation and its record').toBeDefined();
    await restarted;

    const inLog: SwapEvent[] = [];
    await readWholeTopic(topic, codec, (e) => {
      if (e.eventType === 'SwapCreated' && e.swapId === swapId) inLog.push(e);
    });
    expect(inLog, 'SwapCreated in the log').toHaveLength(1);

    for (const status of ['PENDING', 'FINISHED']) {
      p.sim.advance(swapId, status, undefined, { notify: false });
      const delivery = await p.sim.pushWebhook(swapId);
      expect(delivery.status, `${status} webhook: ${delivery.responseBody ?? delivery.error}`).toBe(200);
    }
    // The next scenario's writers start against the registry, whose storage pool lags the restart.
    log(`the registry writes again after ${await registryWritesAgain(stack.registryUrl)} ms`);
  });
});
