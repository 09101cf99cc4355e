import type { Counter, Gauge, Histogram, MetricsRegistry } from '../observability/metrics.ts';

/** The chain watcher's metrics (on its ops listener; every one on ops/grafana/dashboard.json). */
export interface ChainWatchMetrics {
  readonly registry: MetricsRegistry;
  /** Lookups by source and outcome: found, pending, not_found, reverted, error, refused. */
  readonly lookups: Counter;
  readonly lookupSeconds: Histogram;
  /** Observations appended, by role and status. */
  readonly observations: Counter;
  /** Lookups failed in a row per source (0 once it answers): a node down or slow. */
  readonly sourceFailures: Gauge;
  /** Reported transactions still watched (not at depth, not reverted, not past their deadline unseen). */
  readonly watched: Gauge;
}

export function createChainWatchMetrics(registry: MetricsRegistry): ChainWatchMetrics {
  return {
    registry,
    lookups: registry.counter(
      'swap_ledger_chain_lookups_total',
      'Chain lookups of reported transactions, by source and outcome (error: no answer; refused: an answer that cannot be the transaction)',
      ['source', 'outcome'],
    ),
    lookupSeconds: registry.histogram(
      'swap_ledger_chain_lookup_seconds',
      'Time of one chain lookup (every request of it, rate-limit waits included), by source',
      ['source'],
      [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    ),
    observations: registry.counter(
      'swap_ledger_chain_observations_total',
      'ChainTransactionObserved events appended, by role and status',
      ['role', 'status'],
    ),
    sourceFailures: registry.gauge(
      'swap_ledger_chain_source_consecutive_failures',
      'Lookups that failed in a row on a chain source (a node down, slow or lying); 0 once it answers',
      ['source'],
    ),
    watched: registry.gauge(
      'swap_ledger_chain_watched_transactions',
      'Reported transactions the chain watcher still looks at',
    ),
  };
}
