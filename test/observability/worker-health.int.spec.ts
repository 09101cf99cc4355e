import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/demo/provision.ts';
import { createLogger } from '../../src/observability/log.ts';
import { startOpsListener, type OpsListener } from '../../src/observability/listener.ts';
import { MetricsRegistry } from '../../src/observability/metrics.ts';
import { Supervisor } from '../../src/supervisor/supervisor.ts';
import { parseWorkerEndpoints, readWorkerHealth } from '../../src/observability/worker-health.ts';
import { createTopic, freshProjection, testStack, uniqueName } from '../support/context.ts';

const quiet = createLogger({ level: 'silent' });

/** A worker's metrics listener with one readiness check that passes or fails as told. */
function listener(ok: boolean): Promise<OpsListener> {
  return startOpsListener({
    host: '127.0.0.1',
    port: 0,
    metrics: new MetricsRegistry(),
    checks: [
      { name: 'postgres', check: async () => ({ ok: true, detail: 'PostgreSQL 16' }) },
      {
        name: 'kafka',
        check: async () => ({ ok, detail: ok ? '1 broker(s)' : '127.0.0.1:1: connection refused' }),
      },
    ],
    logger: quiet,
  });
}

describe("a worker's health, read from its /readyz", () => {
  const opened: OpsListener[] = [];
  afterAll(async () => {
    for (const l of opened) await l.close();
  });

  it('is ready on 200, not ready with the failing checks on 503, unreachable when nothing answers', async () => {
    const ready = await listener(true);
    const failing = await listener(false);
    opened.push(ready, failing);
    expect(await readWorkerHealth(ready.url)).toEqual({ state: 'ready' });
    expect(await readWorkerHealth(failing.url)).toEqual({
      state: 'not ready',
      reason: 'kafka: 127.0.0.1:1: connection refused',
    });
    const closed = `http://127.0.0.1:${await freePort()}`;
    const gone = await readWorkerHealth(closed);
    expect(gone.state).toBe('unreachable');
    expect(gone.state !== 'ready' && gone.reason).toContain(`${closed}/readyz`);
  });

  it('reads name=url lists, and refuses anything else with a clear error', () => {
    expect(parseWorkerEndpoints('projector=http://127.0.0.1:9101/, poller=http://[::1]:9102')).toEqual([
      { name: 'projector', url: 'http://127.0.0.1:9101' },
      { name: 'poller', url: 'http://[::1]:9102' },
    ]);
    expect(() => parseWorkerEndpoints('http://127.0.0.1:9101')).toThrow(/is not name=http/);
    expect(() => parseWorkerEndpoints('x=ftp://h:1')).toThrow(/must use http/);
    expect(() => parseWorkerEndpoints('x=not a url')).toThrow(/is not a URL/);
  });
});

/** The supervisor of `up` on the real stack: a worker is ready only when its own /readyz says 200. */
describe('supervisor readiness', () => {
  let notReady: Server;
  let notReadyUrl: string;

  beforeAll(async () => {
    // Stands in for a listener whose checks fail: the body is the listener's own form.
    notReady = createServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          status: 'not ready',
          checks: [{ name: 'projector', ok: false, detail: 'partition 3 stalled for 300 s' }],
        }),
      );
    });
    await new Promise<void>((r) => notReady.listen(0, '127.0.0.1', r));
    notReadyUrl = `http://127.0.0.1:${(notReady.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => notReady?.close(r)));

  it("says a worker ready when its /readyz answers 200, and one that never is NOT READY with /readyz's reason", async () => {
    const stack = testStack();
    // Its own empty projection: a reconciler on a shared one would judge other runs' swaps.
    const projection = await freshProjection('readiness');
    await projection.pool.end();
    const topic = uniqueName('events');
    // Writers start only on a topic that exists (as `up` creates them first).
    await createTopic(topic, 1);
    await createTopic(`${topic}.dlq`, 1);
    const port = await freePort();
    const lines: string[] = [];
    const supervisor = new Supervisor(
      [
        {
          name: 'reconciler',
          args: ['reconciler', 'run'],
          env: { METRICS_PORT: String(port) },
          readyUrl: `http://127.0.0.1:${port}`,
        },
        // A real worker whose readiness is read from a listener that keeps saying 503.
        { name: 'stalled', args: ['reconciler', 'run'], env: { METRICS_PORT: '0' }, readyUrl: notReadyUrl },
      ],
      {
        write: (l) => lines.push(l),
        readyTimeoutMs: 1500,
        readyPollMs: 200,
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: stack.databaseUrl,
          KAFKA_BROKERS: stack.kafkaBrokers,
          SCHEMA_REGISTRY_URL: stack.registryUrl,
          PROJECTION_SCHEMA: projection.schema,
          EVENTS_TOPIC: topic,
          DLQ_TOPIC: `${topic}.dlq`,
          LOG_LEVEL: 'warn',
        },
      },
    );
    const waitFor = async (pattern: RegExp, ms = 60_000) => {
      const deadline = Date.now() + ms;
      while (!lines.some((l) => pattern.test(l))) {
        if (Date.now() > deadline) throw new Error(`no ${pattern} in:\n${lines.join('\n')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      return lines.find((l) => pattern.test(l))!;
    };
    supervisor.start();
    try {
      expect(supervisor.readiness()).toEqual({ reconciler: false, stalled: false });
      await waitFor(new RegExp(`reconciler ready: http://127\\.0\\.0\\.1:${port}/readyz answered 200`));
      expect(supervisor.readiness().reconciler).toBe(true);
      const loud = await waitFor(/stalled NOT READY/);
      expect(loud).toContain('!!! stalled NOT READY after');
      expect(loud).toContain('(not ready): projector: partition 3 stalled for 300 s');
      expect(supervisor.readiness().stalled).toBe(false);
      expect(lines.some((l) => l.includes('all workers ready'))).toBe(false);
    } finally {
      expect(await supervisor.stop()).toBe(0);
    }
  }, 90_000);
});
