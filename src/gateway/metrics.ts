import { MetricsRegistry, type Counter, type Histogram } from '../observability/metrics.ts';
import { createOutboxMetrics, type OutboxMetrics } from '../outbox/outbox.ts';

export interface GatewayMetrics {
  readonly registry: MetricsRegistry;
  /** Every answer, by route and HTTP status. */
  readonly responses: Counter;
  /** Every refusal at the edge, by route and a bounded reason code (unauthorized, quote_expired...). */
  readonly refusals: Counter;
  readonly duration: Histogram;
  /** Partner calls by provider, operation and outcome (ok, or the error's kind). */
  readonly partnerCalls: Counter;
  /** Created swaps whose signed payload did not match: recorded, not handed to the wallet. */
  readonly payloadRejections: Counter;
  readonly outbox: OutboxMetrics;
}

// Shaped like the webhook's createWebhookMetrics on purpose: each process registers and names its own series.
export function createGatewayMetrics(registry: MetricsRegistry = new MetricsRegistry()): GatewayMetrics {
  return {
    registry,
    responses: registry.counter(
      'swap_ledger_gateway_responses_total',
      'Gateway responses by route and HTTP status',
      ['route', 'status'],
    ),
    refusals: registry.counter(
      'swap_ledger_gateway_refusals_total',
      'Gateway refusals at the edge (nothing stored, or a partner refusal passed on), by route and reason',
      ['route', 'reason'],
    ),
    duration: registry.histogram(
      'swap_ledger_gateway_request_duration_seconds',
      'Gateway time from request to response, by route',
      ['route'],
      [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    ),
    partnerCalls: registry.counter(
      'swap_ledger_gateway_partner_calls_total',
      'Partner calls of the gateway by provider, operation and outcome',
      ['provider', 'operation', 'outcome'],
    ),
    payloadRejections: registry.counter(
      'swap_ledger_gateway_payload_rejections_total',
      'Swaps the partner created whose signed payload did not match the request (answered 502)',
      ['provider'],
    ),
    outbox: createOutboxMetrics(registry),
  };
}
