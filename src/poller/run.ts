import cron, { type ScheduledTask } from 'node-cron';
import { openOpsListener, type OpsConfig, type OpsListener } from '../observability/listener.ts';
import { dependencyChecks } from '../ops/health.ts';
import type pg from 'pg';
import { syncCatalog, type CatalogSyncReport } from '../catalog/sync.ts';
import type { Config } from '../config/config.ts';
import { openAppender, type AppenderConfig } from '../events/open.ts';
import type { Logger } from '../observability/log.ts';
import { outboxKeyFlusher } from '../outbox/outbox.ts';
import { ProviderClients } from '../providers/clients.ts';
import { openProviderPool } from '../providers/start.ts';
import { checkCredentials } from '../providers/reads.ts';
import { CONFIRM_DEADLINE_HOURS } from './confirm.ts';
import { Poller, postgresPollerStore, type TickReport } from './poller.ts';
import { WorkLeases } from '../db/lease.ts';

/**
 * How long a poller holds a swap's lease at most: past a GET /status, the key's outbox flush and the append
 * (two Kafka sends, each up to KAFKA_SEND_TIMEOUT_MS), so only a poller that died loses it; its swaps wait
 * this long before another polls them.
 */
export const pollLeaseMs = (sendTimeoutMs: number) => Math.max(60_000, 3 * sendTimeoutMs + 30_000);

export type PollerConfig = AppenderConfig &
  Pick<
    Config,
    | 'DATABASE_URL'
    | 'PROJECTION_SCHEMA'
    | 'PROVIDERS_FILE'
    | 'PROVIDER_REFRESH_MS'
    | 'POLL_CRON'
    | 'POLL_PROVIDERS'
    | 'POLL_CLOSED_GRACE_HOURS'
    | 'POLL_CONCURRENCY'
    | 'POLL_RATE_PER_SECOND'
    | 'POLL_RATE_BURST'
    | 'POLL_BACKOFF_BASE_MS'
    | 'POLL_BACKOFF_MAX_MS'
    | 'POLL_CONFIRM_WINDOW_HOURS'
    | 'CATALOG_SYNC_CRON'
  > &
  /** Optional (default 48): configurations written before the key existed stay valid. */
  Partial<Pick<Config, 'POLL_CONFIRM_DEADLINE_HOURS'>>;

export interface RunningPoller {
  readonly poller: Poller;
  /** Runs one poll tick now (joins one under way). */
  tick(): Promise<TickReport>;
  /** Syncs every enabled provider's catalog now. */
  syncCatalogs(): Promise<CatalogSyncReport[]>;
  /** The metrics and health listener (when METRICS_PORT is configured). */
  readonly ops: OpsListener | undefined;
  stop(): Promise<void>;
}

/** One catalog sync of every enabled provider (or of those named), sequentially. */
export async function syncAllCatalogs(
  pool: pg.Pool,
  clients: ProviderClients,
  logger: Logger,
  only?: readonly string[],
): Promise<CatalogSyncReport[]> {
  const ids = only?.length ? only : await clients.enabledIds();
  const reports: CatalogSyncReport[] = [];
  for (const id of ids) {
    const partner = await clients.get(id);
    if (!partner) throw new Error(`no provider ${id}`);
    reports.push(await syncCatalog(pool, partner.client, id, { logger }));
  }
  return reports;
}

/**
 * `poller run`: the status poller on POLL_CRON and, unless CATALOG_SYNC_CRON is `off`, the catalog sync
 * on its own schedule (also once at start), in one process, for the providers in POLL_PROVIDERS (all
 * enabled ones when empty). Several pollers of the same providers share the work by swap leases
 * (platform.work_leases): a swap is polled by one of them at a time. Both node-cron tasks skip a run while the
 * previous one is still going. stop() ends the schedules and waits for the work under way.
 */
export async function startPoller(
  config: PollerConfig & OpsConfig,
  logger: Logger,
  extra: { env?: NodeJS.ProcessEnv; now?: () => number; schedule?: boolean } = {},
): Promise<RunningPoller> {
  const { pool, teardown } = await openProviderPool(
    config,
    {
      searchPath: config.PROJECTION_SCHEMA,
      max: 6,
      applicationName: 'swap-ledger-poller',
    },
    logger,
    extra.env,
  );
  const stopAll = () => teardown.run();
  try {
    await checkCredentials(pool, logger, extra.env);
    const appender = await openAppender(config, 'poller', logger);
    teardown.add(() => appender.stop());
    // The poller's own rules handle 420 and failures (pause, backoff): no retries inside the client.
    const clients = new ProviderClients(pool, {
      refreshMs: config.PROVIDER_REFRESH_MS,
      ...(extra.env ? { env: extra.env } : {}),
      clientOverrides: { retry: { maxAttempts: 1 } },
    });
    const poller = new Poller({
      store: postgresPollerStore(
        pool,
        config.POLL_CONFIRM_WINDOW_HOURS,
        config.POLL_PROVIDERS,
        config.POLL_CLOSED_GRACE_HOURS,
      ),
      partners: clients,
      appender,
      ensureKeyPublished: outboxKeyFlusher({ pool, appender, topic: config.EVENTS_TOPIC }),
      logger,
      concurrency: config.POLL_CONCURRENCY,
      rateLimit: { perSecond: config.POLL_RATE_PER_SECOND, burst: config.POLL_RATE_BURST },
      backoff: { baseMs: config.POLL_BACKOFF_BASE_MS, maxMs: config.POLL_BACKOFF_MAX_MS },
      leases: new WorkLeases(pool, 'poll', pollLeaseMs(config.KAFKA_SEND_TIMEOUT_MS)),
      confirm: { deadlineMs: (config.POLL_CONFIRM_DEADLINE_HOURS ?? CONFIRM_DEADLINE_HOURS) * 3_600_000 },
      ...(extra.now ? { now: extra.now } : {}),
    });
    const catalogClients = new ProviderClients(pool, {
      refreshMs: config.PROVIDER_REFRESH_MS,
      ...(extra.env ? { env: extra.env } : {}),
    });
    let syncing: Promise<CatalogSyncReport[]> | undefined;
    const syncCatalogs = () => {
      syncing ??= syncAllCatalogs(pool, catalogClients, logger, config.POLL_PROVIDERS).finally(
        () => (syncing = undefined),
      );
      return syncing;
    };
    const tasks: ScheduledTask[] = [];
    if (extra.schedule !== false) {
      tasks.push(
        cron.schedule(
          config.POLL_CRON,
          async () => {
            await poller.tick().catch((e: unknown) => logger.error({ err: e }, 'poller tick failed'));
          },
          { name: 'poller', noOverlap: true },
        ),
      );
      if (config.CATALOG_SYNC_CRON !== 'off') {
        const run = () =>
          syncCatalogs().catch((e: unknown) => logger.error({ err: e }, 'catalog sync failed'));
        void run();
        tasks.push(cron.schedule(config.CATALOG_SYNC_CRON, run, { name: 'catalog-sync', noOverlap: true }));
      }
    }
    teardown.add(async () => {
      for (const t of tasks) await t.destroy();
      await Promise.allSettled([poller.settled(), syncing]);
    });
    const ops = await openOpsListener(config, poller.metrics.registry, dependencyChecks(config), logger);
    if (ops) teardown.add(() => ops.close());
    return { poller, tick: () => poller.tick(), syncCatalogs, ops, stop: stopAll };
  } catch (e) {
    await stopAll().catch(() => undefined);
    throw e;
  }
}
