import type { Config } from '../config/config.ts';
import { createPool } from '../db/client.ts';
import { chainClients, loadChainSources, verifyChainSources } from '../chain/index.ts';
import { openAppender } from '../events/open.ts';
import type { Logger } from '../observability/log.ts';
import { openOpsListener, type OpsListener } from '../observability/listener.ts';
import { MetricsRegistry } from '../observability/metrics.ts';
import { dependencyChecks } from '../ops/health.ts';
import { createChainWatchMetrics } from './metrics.ts';
import { ChainWatcher, type RoundReport } from './watcher.ts';
import { WorkLeases } from '../db/lease.ts';

/**
 * How long a watcher holds a transaction's lease at most: a round's lookups of one source and their append
 * (a slow node is minutes at worst); only a watcher that died loses it, and its transactions wait this long.
 */
export const CHAIN_LEASE_MS = 300_000;

export interface RunningChainWatcher {
  readonly watcher: ChainWatcher;
  /** One round now (joins one under way). */
  round(): Promise<RoundReport>;
  readonly ops: OpsListener | undefined;
  stop(): Promise<void>;
}

/**
 * `chain watch`: the chain watcher on its interval (CHAIN_WATCH_INTERVAL_MS), with the sources of
 * CHAIN_SOURCES_FILE (their URLs from this process's environment), until stop(); it starts only once every
 * token's decimals() (and configured chain id) agree with the file (verifyChainSources). Ready while Kafka, the
 * registry and Postgres answer and its rounds go on; a chain node down is a metric and an alert, not a
 * readiness failure (the other chains are still watched).
 */
export async function startChainWatcher(
  config: Config,
  logger: Logger,
  extra: { env?: NodeJS.ProcessEnv; schedule?: boolean } = {},
): Promise<RunningChainWatcher> {
  const sources = loadChainSources(config.CHAIN_SOURCES_FILE);
  const clients = chainClients(sources, extra.env ?? process.env);
  await verifyChainSources(sources, clients);
  const projection = createPool(config.DATABASE_URL, {
    searchPath: config.PROJECTION_SCHEMA,
    max: 2,
    applicationName: 'swap-ledger-chain-watch',
  });
  const closing: (() => Promise<unknown>)[] = [() => projection.end()];
  const stop = async () => {
    for (const close of closing.reverse()) await close().catch(() => undefined);
  };
  try {
    const appender = await openAppender(config, 'chain-watch', logger);
    closing.push(() => appender.stop());
    const registry = new MetricsRegistry();
    const metrics = createChainWatchMetrics(registry);
    // Several watchers share the transactions by lease: one looks each up at a time.
    const leases = new WorkLeases(projection, 'chain', CHAIN_LEASE_MS);
    const watcher = new ChainWatcher({ projection, appender, sources, clients, logger, metrics, leases });
    let lastRoundAt = Date.now();
    let timer: NodeJS.Timeout | undefined;
    let stopping = false;
    const tick = async () => {
      try {
        const r = await watcher.round();
        if (r.appended > 0 || r.failed > 0) logger.info(r, 'chain watch round');
      } catch (e) {
        logger.error({ err: e }, 'chain watch round failed');
      } finally {
        lastRoundAt = Date.now();
      }
    };
    if (extra.schedule !== false) {
      const loop = async () => {
        await tick();
        // A stop during the round must not be followed by another round: its timer would keep the process alive.
        if (!stopping) timer = setTimeout(() => void loop(), config.CHAIN_WATCH_INTERVAL_MS);
      };
      void loop();
    }
    closing.push(async () => {
      stopping = true;
      if (timer) clearTimeout(timer);
      await watcher.settled();
    });
    const ops = await openOpsListener(
      config,
      registry,
      [
        ...dependencyChecks(config),
        {
          name: 'chain-watch-rounds',
          check: async () => {
            const late = Date.now() - lastRoundAt;
            const ok = extra.schedule === false || late < 10 * config.CHAIN_WATCH_INTERVAL_MS + 60_000;
            return { ok, detail: `last round ${Math.round(late / 1000)} s ago` };
          },
        },
      ],
      logger,
    );
    if (ops) closing.push(() => ops.close());
    logger.info(
      { sources: [...sources.sources.keys()], currencies: [...sources.currencies.keys()] },
      sources.currencies.size === 0
        ? 'chain watcher running with no chain source: every chain check stays UNVERIFIABLE'
        : 'chain watcher running',
    );
    return { watcher, round: () => watcher.round(), ops, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
