import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/config.ts';
import { openAppender, type AppenderConfig } from '../events/open.ts';
import type { EventAppender } from '../events/producer.ts';
import type { Logger } from '../observability/log.ts';
import { openOpsListener, type OpsConfig, type OpsListener } from '../observability/listener.ts';
import { dependencyChecks } from '../ops/health.ts';
import { registerOutboxGauges } from '../outbox/gauges.ts';
import { DurablePublisher, OutboxRelay } from '../outbox/outbox.ts';
import { ProviderClients } from '../providers/clients.ts';
import { openProviderPool } from '../providers/start.ts';
import { checkCredentials } from '../providers/reads.ts';
import { createGatewayMetrics, type GatewayMetrics } from './metrics.ts';
import { listenEdge } from '../http/edge.ts';
import { buildGatewayServer, walletKeyIndex } from './server.ts';
import { GatewayService } from './service.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';

export type GatewayConfig = AppenderConfig &
  Pick<
    Config,
    | 'DATABASE_URL'
    | 'PROVIDERS_FILE'
    | 'PROVIDER_REFRESH_MS'
    | 'GATEWAY_HOST'
    | 'GATEWAY_PORT'
    | 'GATEWAY_API_KEY_DIGESTS'
    | 'GATEWAY_QUOTE_MIN_VALIDITY_MS'
    | 'GATEWAY_IDEMPOTENCY_LEASE_MS'
    | 'OUTBOX_RELAY_INTERVAL_MS'
    | 'OUTBOX_RELAY_BATCH'
  > &
  Partial<Pick<Config, 'GATEWAY_RECORD_RETRY_MS' | 'HTTP_REQUEST_TIMEOUT_MS'>>;

export interface RunningGateway {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly port: number;
  readonly metrics: GatewayMetrics;
  readonly publisher: DurablePublisher;
  readonly relay: OutboxRelay;
  readonly appender: EventAppender;
  /** The metrics and health listener (when METRICS_PORT is configured). */
  readonly ops: OpsListener | undefined;
  stop(): Promise<void>;
}

export class GatewayConfigError extends InputRefusedError {
  override name = 'GatewayConfigError';
}

/**
 * Wires and starts the gateway: migrates the platform schema, loads PROVIDERS_FILE when set, connects
 * the event appender, starts the outbox relay (every OUTBOX_RELAY_INTERVAL_MS), then listens. Refuses
 * to start without a wallet key digest: no call may pass without a key.
 */
export async function startGateway(
  config: GatewayConfig & OpsConfig,
  logger: Logger,
  extra: { env?: NodeJS.ProcessEnv; now?: () => Date } = {},
): Promise<RunningGateway> {
  if (config.GATEWAY_API_KEY_DIGESTS.length === 0)
    throw new GatewayConfigError(
      'GATEWAY_API_KEY_DIGESTS lists no key digest: the gateway would refuse every call; set the SHA-256 digest of the wallet backend key',
    );
  const keys = walletKeyIndex(config.GATEWAY_API_KEY_DIGESTS);
  const { pool, teardown } = await openProviderPool(
    config,
    // A Postgres that does not answer: 503 in time, not a hang.
    { max: 10, applicationName: 'swap-ledger-gateway', connectTimeoutMs: 5000 },
    logger,
    extra.env,
  );
  const stopAll = () => teardown.run();
  try {
    await checkCredentials(pool, logger, extra.env);
    const metrics = createGatewayMetrics();
    registerOutboxGauges(metrics.registry, pool, config.EVENTS_TOPIC);
    const appender = await openAppender(config, 'gateway', logger);
    teardown.add(() => appender.stop());
    const publisher = new DurablePublisher({
      pool,
      appender,
      topic: config.EVENTS_TOPIC,
      logger,
      metrics: metrics.outbox,
    });
    const relay = new OutboxRelay({
      pool,
      appender,
      topic: config.EVENTS_TOPIC,
      logger,
      metrics: metrics.outbox,
      batchSize: config.OUTBOX_RELAY_BATCH,
      onPublished: () => publisher.kafkaIsBack(),
    });
    relay.start(config.OUTBOX_RELAY_INTERVAL_MS);
    teardown.add(() => relay.stop());
    const service = new GatewayService({
      pool,
      partners: new ProviderClients(pool, {
        refreshMs: config.PROVIDER_REFRESH_MS,
        ...(extra.env ? { env: extra.env } : {}),
      }),
      publisher,
      logger,
      metrics,
      now: extra.now ?? (() => new Date()),
      quoteMinValidityMs: config.GATEWAY_QUOTE_MIN_VALIDITY_MS,
      idempotencyLeaseMs: config.GATEWAY_IDEMPOTENCY_LEASE_MS,
      recordRetryMs: config.GATEWAY_RECORD_RETRY_MS,
    });
    const app = buildGatewayServer({
      service,
      keys,
      logger,
      metrics,
      ...(config.HTTP_REQUEST_TIMEOUT_MS !== undefined
        ? { requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS }
        : {}),
    });
    const { url, port } = await listenEdge(
      app,
      { host: config.GATEWAY_HOST, port: config.GATEWAY_PORT },
      teardown,
    );
    const ops = await openOpsListener(config, metrics.registry, dependencyChecks(config), logger);
    if (ops) teardown.add(() => ops.close());
    return {
      app,
      url,
      port,
      metrics,
      publisher,
      relay,
      appender,
      ops,
      stop: stopAll,
    };
  } catch (e) {
    await stopAll().catch(() => undefined);
    throw e;
  }
}
