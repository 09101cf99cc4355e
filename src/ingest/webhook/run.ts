import type { FastifyInstance } from 'fastify';
import { Teardown } from '../../lifecycle/teardown.ts';
import type pg from 'pg';
import type { Config } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { migratePlatform } from '../../db/migrate.ts';
import { createKafka, EventAppender, EventCodec } from '../../events/index.ts';
import type { Logger } from '../../observability/log.ts';
import {
  dependencyChecks,
  openOpsListener,
  type OpsConfig,
  type OpsListener,
} from '../../observability/listener.ts';
import { ProviderRegistryCache } from '../../providers/cache.ts';
import { loadProvidersFileIfSet } from '../../providers/store.ts';
import { outboxKeyFlusher } from '../../outbox/outbox.ts';
import { buildWebhookServer, createWebhookMetrics, type SwapLookup, type WebhookMetrics } from './server.ts';
import { RateLimiter } from './rate-limit.ts';

interface PendingLookup {
  swapId: string;
  providerId: string;
  resolve: (found: { final: boolean } | undefined) => void;
  reject: (e: Error) => void;
}

/**
 * Finds swaps with indexed queries: the projected swap (primary key swap_id) of this provider, or the
 * gateway's record of it (primary key swap_id, provider_id). `pool`'s search_path is the projection.
 * Lookups that arrive while `maxInFlight` queries are running share the next query (at most
 * `maxBatch` swaps each): one round trip for many webhooks under load, none added when idle. Requests
 * that leave the lookup together also reach the event appender together, so they share a produce
 * request as well.
 */
export function postgresSwapLookup(
  pool: pg.Pool,
  options: { maxInFlight?: number; maxBatch?: number } = {},
): SwapLookup {
  const maxInFlight = options.maxInFlight ?? 4;
  const maxBatch = options.maxBatch ?? 500;
  let queue: PendingLookup[] = [];
  let inFlight = 0;

  const run = async (batch: PendingLookup[]) => {
    try {
      const r = await pool.query<{ i: string; final: boolean | null; created: boolean }>({
        name: 'webhook-swap-lookup',
        text: `select q.i, s.final,
                 exists (select 1 from platform.created_swaps c
                         where c.swap_id = q.swap_id and c.provider_id = q.provider_id) as created
               from unnest($1::text[], $2::text[]) with ordinality as q(swap_id, provider_id, i)
               left join swaps s on s.swap_id = q.swap_id and s.provider_id = q.provider_id`,
        values: [batch.map((p) => p.swapId), batch.map((p) => p.providerId)],
      });
      for (const row of r.rows) {
        const p = batch[Number(row.i) - 1]!;
        p.resolve(row.final === null && !row.created ? undefined : { final: row.final === true });
      }
    } catch (e) {
      for (const p of batch) p.reject(e as Error);
    }
  };

  const pump = () => {
    while (inFlight < maxInFlight && queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      inFlight++;
      void run(batch).finally(() => {
        inFlight--;
        pump();
      });
    }
  };

  return {
    find(swapId, providerId) {
      return new Promise((resolve, reject) => {
        queue.push({ swapId, providerId, resolve, reject });
        pump();
      });
    },
  };
}

export type WebhookConfig = Pick<
  Config,
  | 'DATABASE_URL'
  | 'KAFKA_BROKERS'
  | 'SCHEMA_REGISTRY_URL'
  | 'EVENTS_TOPIC'
  | 'KAFKA_CLIENT_ID'
  | 'KAFKA_SEND_TIMEOUT_MS'
  | 'PROJECTION_SCHEMA'
  | 'PROVIDERS_FILE'
  | 'PROVIDER_REFRESH_MS'
  | 'WEBHOOK_HOST'
  | 'WEBHOOK_PORT'
  | 'WEBHOOK_BODY_LIMIT_BYTES'
>;

export interface RunningWebhook {
  readonly app: FastifyInstance;
  /** http://host:port the server listens on. */
  readonly url: string;
  readonly port: number;
  readonly metrics: WebhookMetrics;
  readonly registry: ProviderRegistryCache;
  readonly appender: EventAppender;
  /** The metrics and health listener (when METRICS_PORT is configured). */
  readonly ops: OpsListener | undefined;
  stop(): Promise<void>;
}

/**
 * Wires and starts the webhook server: migrates the platform schema, loads PROVIDERS_FILE (when set)
 * into Postgres, caches the registry, connects the event appender, then listens.
 */
export async function startWebhook(
  config: WebhookConfig & OpsConfig,
  logger: Logger,
  extra: { onBatchSent?: (messages: number) => void; env?: NodeJS.ProcessEnv } = {},
): Promise<RunningWebhook> {
  await migratePlatform(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, {
    searchPath: config.PROJECTION_SCHEMA,
    max: 8,
    applicationName: 'swap-ledger-webhook',
  });
  const teardown = new Teardown();
  teardown.add(() => pool.end());
  const stopAll = () => teardown.run();
  try {
    await loadProvidersFileIfSet(pool, config.PROVIDERS_FILE, logger, extra.env);
    const registry = new ProviderRegistryCache(pool, { refreshMs: config.PROVIDER_REFRESH_MS, logger });
    await registry.start();
    teardown.add(() => registry.stop());
    const metrics = createWebhookMetrics();
    const appender = new EventAppender({
      kafka: createKafka({
        brokers: config.KAFKA_BROKERS,
        clientId: `${config.KAFKA_CLIENT_ID}-webhook`,
        logger,
      }),
      codec: new EventCodec(config.SCHEMA_REGISTRY_URL, config.EVENTS_TOPIC),
      topic: config.EVENTS_TOPIC,
      sendTimeoutMs: config.KAFKA_SEND_TIMEOUT_MS,
      logger,
      onBatchSent: (messages) => {
        metrics.batchMessages.observe({}, messages);
        logger.debug({ messages }, 'produce request acknowledged');
        extra.onBatchSent?.(messages);
      },
    });
    await appender.start();
    teardown.add(() => appender.stop());
    const app = buildWebhookServer({
      appender,
      swaps: postgresSwapLookup(pool),
      registry,
      logger,
      metrics,
      rateLimiter: new RateLimiter(),
      bodyLimitBytes: config.WEBHOOK_BODY_LIMIT_BYTES,
      ensureKeyPublished: outboxKeyFlusher({ pool, appender, topic: config.EVENTS_TOPIC }),
    });
    await app.listen({ host: config.WEBHOOK_HOST, port: config.WEBHOOK_PORT });
    teardown.add(() => app.close());
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.WEBHOOK_PORT;
    const host = config.WEBHOOK_HOST.includes(':') ? `[${config.WEBHOOK_HOST}]` : config.WEBHOOK_HOST;
    const ops = await openOpsListener(config, metrics.registry, dependencyChecks(config), logger);
    if (ops) teardown.add(() => ops.close());
    return { app, url: `http://${host}:${port}`, port, metrics, registry, appender, ops, stop: stopAll };
  } catch (e) {
    await stopAll().catch(() => undefined);
    throw e;
  }
}
