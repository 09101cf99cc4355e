import type pg from 'pg';
import type { Logger } from '../observability/log.ts';
import type { DurablePublisher } from '../outbox/outbox.ts';
import type { TradeMethod } from '../partner/types.ts';
import type { ProviderPartner } from '../providers/clients.ts';
import type { GatewayMetrics } from './metrics.ts';

/** What the gateway's flows are built from (apart from the service, so the flows never import it). */

export interface GatewayServiceDeps {
  readonly pool: pg.Pool;
  readonly partners: { get(providerId: string): Promise<ProviderPartner | undefined> };
  readonly publisher: Pick<DurablePublisher, 'publish' | 'publishWith' | 'publishWithKept'>;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  readonly now: () => Date;
  /** A fixed quote expiring sooner than this is refused for a swap. */
  readonly quoteMinValidityMs: number;
  /** An Idempotency-Key in progress longer than this has an unknown outcome. Default 2 minutes. */
  readonly idempotencyLeaseMs?: number;
  /** How long a created swap's record is retried in Postgres before it goes straight to Kafka. Default 20 s. */
  readonly recordRetryMs?: number;
}

export interface QuoteBody {
  readonly providerId: string;
  readonly from: string;
  readonly to: string;
  readonly amount: string;
  readonly tradeMethod?: TradeMethod;
}
