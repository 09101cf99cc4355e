import type { Config } from '../config/config.ts';
import { loadChainSources } from '../chain/config.ts';
import { createPool } from '../db/client.ts';
import { createKafka } from '../events/kafka.ts';
import { openAppender } from '../events/open.ts';
import type { Logger } from '../observability/log.ts';
import type { MetricsRegistry } from '../observability/metrics.ts';
import { ProjectionWatch } from '../projector/watch.ts';
import { CaseNotifier } from '../ops/case-notifier.ts';
import { createReconcilerMetrics } from './metrics.ts';
import { parseReconciliationPolicy } from './policy.ts';
import { Reconciler } from './worker.ts';

/** The reconciler's policy from the RECONCILE_* keys configuration passed through (blank ones are not set). */
export function policyFromConfig(config: Pick<Config, 'RECONCILE'>) {
  return parseReconciliationPolicy(config.RECONCILE ?? {});
}

/** A reconciler wired from configuration; `stop()` closes what it opened. */
export async function openReconciler(config: Config, logger: Logger, metrics?: MetricsRegistry) {
  // The policy first: a refused one (exit 2) opens no connection.
  const policy = policyFromConfig(config);
  const chainSources = loadChainSources(config.CHAIN_SOURCES_FILE);
  // Two lanes of rounds (drainAll), each a transaction that also does its reads, the sweep and the metrics.
  const projection = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 5 });
  const platform = createPool(config.DATABASE_URL, { max: 2 });
  const appender = await openAppender(config, 'reconciler', logger);
  const measured = metrics ? createReconcilerMetrics(metrics, projection) : undefined;
  // The projection's lag and stall from outside the projector: a frozen or dead projector answers no scrape.
  const watch = metrics
    ? new ProjectionWatch({
        admin: createKafka({
          brokers: config.KAFKA_BROKERS,
          clientId: `${config.KAFKA_CLIENT_ID}-reconciler-watch`,
          logger,
        }).admin(),
        pool: projection,
        topic: config.EVENTS_TOPIC,
      })
    : undefined;
  if (watch && metrics) watch.register(metrics);
  const reconciler = new Reconciler({
    projection,
    platform,
    appender,
    policy,
    chainSources,
    confirmWaitMs: config.RECONCILER_CONFIRM_WAIT_MS,
    judgeThreads: config.RECONCILER_JUDGE_THREADS,
    logger,
    ...(metrics ? { metrics } : {}),
    ...(measured ? { onVerdict: (r) => measured.onVerdict(r) } : {}),
  });
  // Case notifications in their own loop: a slow or failing endpoint never holds a round of verdicts up.
  const notifier = config.CASE_NOTIFY_URL
    ? new CaseNotifier({
        projection,
        platform,
        url: config.CASE_NOTIFY_URL,
        ageLimitMs: config.CASE_NOTIFY_AGE_HOURS * 3_600_000,
        logger,
        ...(metrics ? { metrics } : {}),
      })
    : undefined;
  const notifying = notifier
    ? setInterval(
        () =>
          void notifier.round().catch((e: unknown) => logger.warn({ err: e }, 'case notifier round failed')),
        config.CASE_NOTIFY_INTERVAL_MS,
      )
    : undefined;
  return {
    reconciler,
    notifier,
    async close() {
      clearInterval(notifying);
      await notifier?.round().catch(() => undefined);
      await reconciler.stop();
      await appender.stop();
      await watch?.close();
      await projection.end();
      await platform.end();
    },
  };
}
