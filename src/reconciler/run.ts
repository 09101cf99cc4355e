import type { Config } from '../config/config.ts';
import { loadChainSources } from '../chain/config.ts';
import { createPool } from '../db/client.ts';
import { openAppender } from '../events/open.ts';
import type { Logger } from '../observability/log.ts';
import type { MetricsRegistry } from '../observability/metrics.ts';
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
  return {
    reconciler,
    async close() {
      await reconciler.stop();
      await appender.stop();
      await projection.end();
      await platform.end();
    },
  };
}
