import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { Config } from '../../config/config.ts';
import type { EventAppender } from '../../events/index.ts';
import type { Logger } from '../../observability/log.ts';
import { openOpsListener, type OpsConfig, type OpsListener } from '../../observability/listener.ts';
import { dependencyChecks } from '../../ops/health.ts';
import { ProviderRegistryCache } from '../../providers/cache.ts';
import { openProviderPool } from '../../providers/start.ts';
import { listenEdge } from '../../http/edge.ts';
import { outboxKeyFlusher } from '../../outbox/outbox.ts';
import { openAppender, type AppenderConfig } from '../../events/open.ts';
import { reportValuesOfRow, type ReportColumns } from '../../swap/report.ts';
import {
  buildWebhookServer,
  DEFAULT_OUTSIDER_LIMITS,
  createWebhookMetrics,
  type KnownSwap,
  type SwapLookup,
  type WebhookMetrics,
} from './server.ts';
import { RateLimiter } from '../../work/rate-limit.ts';

interface PendingLookup {
  swapId: string;
  providerId: string;
  resolve: (found: KnownSwap | undefined) => void;
  reject: (e: Error) => void;
}

interface LookupRow extends ReportColumns {
  i: string;
  final: boolean | null;
  created: boolean;
  status: string | null;
  status_class: string | null;
}

function knownSwap(row: LookupRow): KnownSwap | undefined {
  if (row.final === null) return row.created ? { final: false, projected: false } : undefined;
  if (!row.final) return { final: false, projected: true };
  return {
    final: true,
    projected: true,
    status: row.status!,
    statusClass: row.status_class!,
    ...reportValuesOfRow(row),
  };
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

  const query = (batch: PendingLookup[]) =>
    pool.query<LookupRow>({
      name: 'webhook-swap-lookup',
      text: `select q.i, s.final, s.status, s.status_class, s.amount_to, s.provider_fees, s.referral_fees,
                 s.payout_network_fees, s.payin_transaction_id, s.payout_transaction_id, s.refund_transaction_id,
                 exists (select 1 from platform.created_swaps c
                         where c.swap_id = q.swap_id and c.provider_id = q.provider_id) as created
               from unnest($1::text[], $2::text[]) with ordinality as q(swap_id, provider_id, i)
               left join swaps s on s.swap_id = q.swap_id and s.provider_id = q.provider_id`,
      values: [batch.map((p) => p.swapId), batch.map((p) => p.providerId)],
    });
  const run = async (batch: PendingLookup[]) => {
    try {
      const r = await query(batch);
      for (const row of r.rows) batch[Number(row.i) - 1]!.resolve(knownSwap(row));
    } catch (e) {
      // One caller's value must never fail its neighbours' lookups: alone, each fails or succeeds for itself.
      if (batch.length === 1) return batch[0]!.reject(e as Error);
      for (const p of batch) void run([p]);
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

/**
 * Remembers for `ttlMs` that a swap exists and is not final, so that reports to open swaps (nearly all
 * of them) cost no Postgres round trip. Only "open" is cached: a final swap is read every time (its
 * figures decide between 405 and a recorded contradiction), and so is an unknown one. A stale "open" is
 * safe: a swap never goes from final back to open, and a report let through to a swap that became final
 * meanwhile reaches the fold, which records it as a contradiction, as if it had arrived a moment earlier.
 * `forget` stops caching a swap for a minute: the webhook calls it when it appends a final report itself,
 * so once the fold made the swap final the next report is answered from Postgres (405), not let through.
 * Bounded: past `maxEntries`, the oldest entry goes first.
 */
export function cachedSwapLookup(
  inner: SwapLookup,
  options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
): SwapLookup & { forget(swapId: string, providerId: string): void } {
  const ttlMs = options.ttlMs ?? 2000;
  const maxEntries = options.maxEntries ?? 100_000;
  const now = options.now ?? (() => performance.now());
  const openUntil = new Map<string, number>();
  const readUntil = new Map<string, number>();
  const remember = (map: Map<string, number>, key: string, until: number) => {
    map.delete(key); // re-inserted last: the Map's order is the eviction order
    map.set(key, until);
    if (map.size > maxEntries) map.delete(map.keys().next().value!);
  };
  return {
    async find(swapId, providerId) {
      // Provider ids hold no ':', so the key is unambiguous whatever the swap id holds.
      const key = `${providerId}:${swapId}`;
      const until = openUntil.get(key);
      if (until !== undefined) {
        if (until > now()) return { final: false, projected: true };
        openUntil.delete(key);
      }
      const found = await inner.find(swapId, providerId);
      const readAlways = (readUntil.get(key) ?? 0) > now();
      // Only a projected open swap is remembered: one known only to the gateway may still have its
      // SwapCreated in the outbox, which the route must flush first.
      if (found && !found.final && found.projected && !readAlways) remember(openUntil, key, now() + ttlMs);
      return found;
    },
    forget(swapId, providerId) {
      const key = `${providerId}:${swapId}`;
      openUntil.delete(key);
      remember(readUntil, key, now() + 60_000);
    },
  };
}

export type WebhookConfig = AppenderConfig &
  Pick<
    Config,
    | 'DATABASE_URL'
    | 'PROJECTION_SCHEMA'
    | 'PROVIDERS_FILE'
    | 'PROVIDER_REFRESH_MS'
    | 'WEBHOOK_HOST'
    | 'WEBHOOK_PORT'
    | 'WEBHOOK_BODY_LIMIT_BYTES'
  > &
  Partial<
    Pick<
      Config,
      | 'HTTP_REQUEST_TIMEOUT_MS'
      | 'WEBHOOK_AUTH_FAILURE_BURST'
      | 'WEBHOOK_AUTH_FAILURE_PER_MINUTE'
      | 'WEBHOOK_REFUSAL_LOG_LINES'
    >
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
  const { pool, teardown } = await openProviderPool(
    config,
    {
      searchPath: config.PROJECTION_SCHEMA,
      max: 8,
      applicationName: 'swap-ledger-webhook',
      // A Postgres that does not answer: the lookup fails in time and the partner gets 503, not a hang.
      connectTimeoutMs: 5000,
    },
    logger,
    extra.env,
  );
  const stopAll = () => teardown.run();
  try {
    const registry = new ProviderRegistryCache(pool, { refreshMs: config.PROVIDER_REFRESH_MS, logger });
    await registry.start();
    teardown.add(() => registry.stop());
    const metrics = createWebhookMetrics();
    const appender = await openAppender(config, 'webhook', logger, (messages) => {
      metrics.batchMessages.observe({}, messages);
      logger.debug({ messages }, 'produce request acknowledged');
      extra.onBatchSent?.(messages);
    });
    teardown.add(() => appender.stop());
    const swaps = cachedSwapLookup(postgresSwapLookup(pool));
    const app = buildWebhookServer({
      appender: {
        // A final report makes its swap final: from now on it is read, not remembered open.
        append: (event) => {
          if (event.eventType === 'StatusReported' && event.payload.final && event.swapId)
            swaps.forget(event.swapId, event.providerId);
          return appender.append(event);
        },
      },
      swaps,
      registry,
      logger,
      metrics,
      rateLimiter: new RateLimiter(),
      bodyLimitBytes: config.WEBHOOK_BODY_LIMIT_BYTES,
      outsiders: {
        burst: config.WEBHOOK_AUTH_FAILURE_BURST ?? DEFAULT_OUTSIDER_LIMITS.burst,
        perSecond:
          config.WEBHOOK_AUTH_FAILURE_PER_MINUTE !== undefined
            ? config.WEBHOOK_AUTH_FAILURE_PER_MINUTE / 60
            : DEFAULT_OUTSIDER_LIMITS.perSecond,
        linesPerWindow: config.WEBHOOK_REFUSAL_LOG_LINES ?? DEFAULT_OUTSIDER_LIMITS.linesPerWindow,
      },
      ...(config.HTTP_REQUEST_TIMEOUT_MS !== undefined
        ? { requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS }
        : {}),
      ensureKeyPublished: outboxKeyFlusher({ pool, appender, topic: config.EVENTS_TOPIC }),
    });
    const { url, port } = await listenEdge(
      app,
      { host: config.WEBHOOK_HOST, port: config.WEBHOOK_PORT },
      teardown,
    );
    const ops = await openOpsListener(config, metrics.registry, dependencyChecks(config), logger);
    if (ops) teardown.add(() => ops.close());
    return { app, url, port, metrics, registry, appender, ops, stop: stopAll };
  } catch (e) {
    await stopAll().catch(() => undefined);
    throw e;
  }
}
