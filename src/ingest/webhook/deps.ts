import type { EventAppender } from '../../events/producer.ts';
import type { Logger } from '../../observability/log.ts';
import { MetricsRegistry, type Counter, type Histogram } from '../../observability/metrics.ts';
import type { RegistrySnapshot } from '../../providers/cache.ts';
import type { ReportedSwap } from '../../swap/report.ts';
import type { AuthFailureThrottle, RefusalLogSampler } from './outsiders.ts';
import type { RateLimiter } from '../../work/rate-limit.ts';

/** What the status webhook's server and route are built from (apart, so neither imports the other). */

/**
 * What the webhook needs of a swap: whether it is final and, if so, what a report could contradict;
 * `projected`: its SwapCreated is folded already, so nothing of it can still wait in the gateway's outbox.
 */
export type KnownSwap =
  { final: false; projected: boolean } | ({ final: true; projected: true } & ReportedSwap);

export interface SwapLookup {
  /** The swap with this id that belongs to this provider, or undefined (another provider's is "none"). */
  find(swapId: string, providerId: string): Promise<KnownSwap | undefined>;
}

export interface WebhookMetrics {
  readonly registry: MetricsRegistry;
  readonly responses: Counter;
  readonly duration: Histogram;
  readonly batchMessages: Histogram;
  readonly unauthenticated: Counter;
  readonly linesSuppressed: Counter;
}

export function createWebhookMetrics(registry: MetricsRegistry = new MetricsRegistry()): WebhookMetrics {
  return {
    registry,
    // No provider label: the webhook is partner-facing, so its series name no provider (fail closed).
    responses: registry.counter(
      'swap_ledger_webhook_responses_total',
      'Status webhook responses by HTTP status and whether the caller was authenticated',
      ['status', 'authenticated'],
    ),
    duration: registry.histogram(
      'swap_ledger_webhook_request_duration_seconds',
      'Status webhook time from request to response, by HTTP status',
      ['status'],
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ),
    unauthenticated: registry.counter(
      'swap_ledger_webhook_unauthenticated_refusals_total',
      'Webhook calls refused without authentication (401, 429 past the failure throttle, and the like), by HTTP status',
      ['status'],
    ),
    linesSuppressed: registry.counter(
      'swap_ledger_webhook_refusal_log_lines_suppressed_total',
      'Log lines of unauthenticated refusals left out by the per-source sampling (summed up in one line a minute)',
      [],
    ),
    batchMessages: registry.histogram(
      'swap_ledger_event_append_batch_messages',
      'Events carried by each Kafka produce request of the event appender',
      [],
      [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
    ),
  };
}

export interface WebhookDeps {
  readonly appender: Pick<EventAppender, 'append'>;
  readonly swaps: SwapLookup;
  readonly registry: { snapshot(): RegistrySnapshot };
  readonly logger: Logger;
  readonly metrics: WebhookMetrics;
  readonly rateLimiter: RateLimiter;
  /** Per source address: authentication failures past the limits get 429. */
  readonly authFailures: AuthFailureThrottle;
  /** Per source address: the log lines of unauthenticated refusals. */
  readonly refusalLog: RefusalLogSampler;
  readonly bodyLimitBytes: number;
  /** HTTP_REQUEST_TIMEOUT_MS (default: src/observability/http-timeouts.ts). */
  readonly requestTimeoutMs?: number;
  readonly now: () => Date;
  /**
   * Publishes the swap's unpublished outbox events (its SwapCreated, when Kafka was down at creation)
   * before its StatusReported is appended, so the report never reaches the log ahead of them. Throws
   * like the appender (AppendTimeoutError: 503). None: nothing is flushed.
   */
  readonly ensureKeyPublished?: (key: string) => Promise<void>;
}
