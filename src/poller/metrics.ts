import { MetricsRegistry, type Counter, type Gauge } from '../observability/metrics.ts';

/** The poller's metrics: its polls and appends by provider and outcome, its confirmations, its sets. */

export interface PollerMetrics {
  readonly registry: MetricsRegistry;
  /** GET /status results by provider and outcome (changed, unchanged, unmappable, not_found, error...). */
  readonly polls: Counter;
  readonly appended: Counter;
  /** Partner statuses the provider's mapping does not know: logged, counted, the swap stays in the set. */
  readonly unmappable: Counter;
  readonly rateLimited: Counter;
  /** Confirming polls of swaps made final by webhook, by outcome (`deadline`: given up). */
  readonly confirmations: Counter;
  /** Swaps whose confirming stopped at the deadline before a complete answer. */
  readonly confirmationsAbandoned: Counter;
  /** Swaps in the polling set at the last tick. */
  readonly setSize: Gauge;
  /** Providers paused by a 420 (Retry-After) at the last tick. */
  readonly pausedProviders: Gauge;
  /** Closed swaps with money moved that left the grace window unsettled, by provider: alerted on. */
  readonly expiredWithMoney: Gauge;
}

export function createPollerMetrics(registry = new MetricsRegistry()): PollerMetrics {
  return {
    registry,
    polls: registry.counter('swap_ledger_poller_polls_total', 'GET /status results by provider and outcome', [
      'provider',
      'outcome',
    ]),
    appended: registry.counter(
      'swap_ledger_poller_status_reported_total',
      'StatusReported events appended by polls',
      ['provider'],
    ),
    unmappable: registry.counter(
      'swap_ledger_poller_unmappable_status_total',
      'Polled partner statuses the provider mapping does not know (the swap stays in the polling set)',
      ['provider'],
    ),
    rateLimited: registry.counter('swap_ledger_poller_rate_limited_total', 'Partner 420 answers to polls', [
      'provider',
    ]),
    confirmations: registry.counter(
      'swap_ledger_poller_confirmations_total',
      'Confirming polls of swaps made final by webhook, by outcome',
      ['provider', 'outcome'],
    ),
    confirmationsAbandoned: registry.counter(
      'swap_ledger_poller_confirmations_abandoned_total',
      'Swaps made final by webhook whose confirming stopped at the deadline (POLL_CONFIRM_DEADLINE_HOURS) before GET /status reported every figure',
      ['provider'],
    ),
    setSize: registry.gauge(
      'swap_ledger_poller_polling_set_size',
      'Swaps in the polling set at the last tick',
    ),
    pausedProviders: registry.gauge(
      'swap_ledger_poller_paused_providers',
      'Providers paused after a 420 (Retry-After) at the last tick',
    ),
    expiredWithMoney: registry.gauge(
      'swap_ledger_poller_expired_with_money_past_grace',
      'Closed (EXPIRED) swaps where money moved (a deposit, a payout, a refund or an amount) that left the slow polling set (POLL_CLOSED_GRACE_HOURS) with no final status to settle them, at the last tick',
      ['provider'],
    ),
  };
}
