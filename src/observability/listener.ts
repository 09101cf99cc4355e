import Fastify, { type FastifyInstance } from 'fastify';
import { listenerTimeouts } from './http-timeouts.ts';
import type { Logger } from './log.ts';
import type { MetricsRegistry } from './metrics.ts';

/** One readiness condition: a dependency reachable, or the process's own work going on. */
export interface ReadinessCheck {
  readonly name: string;
  check(): Promise<{ ok: boolean; detail: string }>;
}

export interface OpsListener {
  readonly app: FastifyInstance;
  /** http://host:port */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The operator's port of a process, apart from any partner- or wallet-facing one (those answer 404 on
 * these paths): GET /metrics (Prometheus text), /healthz (the process answers), /readyz (every check
 * passes: 200, else 503; the body says which failed).
 */
export async function startOpsListener(options: {
  host: string;
  port: number;
  metrics: MetricsRegistry;
  checks: readonly ReadinessCheck[];
  logger: Logger;
  /** HTTP_REQUEST_TIMEOUT_MS (default: src/observability/http-timeouts.ts). */
  requestTimeoutMs?: number;
}): Promise<OpsListener> {
  const app = Fastify({ logger: false, ...listenerTimeouts(options.requestTimeoutMs) });
  // A worker not yet ready while it starts is the normal start (info); once it has been ready, a fall back is
  // something wrong (warn), said once when the failing checks change rather than at every probe.
  let beenReady = false;
  let lastFailed = '';
  app.get('/metrics', async (_request, reply) =>
    reply.type(options.metrics.contentType).send(await options.metrics.expose()),
  );
  app.get('/healthz', async () => ({ status: 'alive' }));
  app.get('/readyz', async (_request, reply) => {
    const results = await Promise.all(
      options.checks.map(async (c) => {
        try {
          return { name: c.name, ...(await c.check()) };
        } catch (e) {
          return { name: c.name, ok: false, detail: (e as Error).message };
        }
      }),
    );
    const ready = results.every((r) => r.ok);
    const failed = results.filter((r) => !r.ok);
    const said = JSON.stringify(failed.map((r) => r.name));
    if (ready) beenReady = true;
    else if (said !== lastFailed) options.logger[beenReady ? 'warn' : 'info']({ failed }, 'not ready');
    lastFailed = ready ? '' : said;
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks: results });
  });
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `http://${host}:${port}`;
  options.logger.info({ url }, 'metrics and health listening');
  return { app, url, close: () => app.close() };
}

/** Where the metrics listener goes; absent METRICS_PORT (e.g. a test's hand-made config): no listener. */
export interface OpsConfig {
  METRICS_HOST?: string;
  METRICS_PORT?: number;
  HTTP_REQUEST_TIMEOUT_MS?: number;
}

/** Starts the process's metrics listener when configured, with Node's default metrics added. */
export async function openOpsListener(
  config: OpsConfig,
  metrics: MetricsRegistry,
  checks: readonly ReadinessCheck[],
  logger: Logger,
): Promise<OpsListener | undefined> {
  if (config.METRICS_PORT === undefined) return undefined;
  metrics.collectDefaults();
  return startOpsListener({
    host: config.METRICS_HOST ?? '127.0.0.1',
    port: config.METRICS_PORT,
    metrics,
    checks,
    logger,
    ...(config.HTTP_REQUEST_TIMEOUT_MS !== undefined
      ? { requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS }
      : {}),
  });
}
