import type pg from 'pg';
import type { Finding } from '../events/types.ts';
import { instantProblem, isoInstant } from '../events/time.ts';

/**
 * platform.created_swaps, owned by the gateway: the swaps it created, which the webhook and the poller may
 * see before the projector folds their SwapCreated. A row is written only in the transaction that also
 * queues the swap's SwapCreated in the outbox (GatewayService), so a swap anyone can see always has its
 * SwapCreated queued ahead of any status report.
 */

type Db = pg.Pool | pg.ClientBase;

export interface CreatedSwapRecord {
  readonly swapId: string;
  readonly providerId: string;
  readonly createdAt: string;
}

/** Idempotent: a swap recorded twice (a retried transaction) keeps its first row. */
export async function recordCreatedSwap(db: Db, swap: CreatedSwapRecord): Promise<void> {
  await db.query(
    `insert into platform.created_swaps (swap_id, provider_id, created_at) values ($1, $2, $3)
     on conflict (swap_id, provider_id) do nothing`,
    [swap.swapId, swap.providerId, swap.createdAt],
  );
}

/**
 * The partner's `createdAt` as the platform records it: ISO-8601 UTC when it is a time by the one strict
 * rule (src/events/time.ts: years 0001-0099 kept as written, an offset Postgres stores); otherwise the
 * gateway's own time of the answer, with a `response.created_at` finding keeping the text as sent. The
 * partner has created the swap either way: it is recorded, never lost to a time Postgres would refuse.
 */
export function partnerCreatedAt(text: string, answeredAt: Date): { createdAt: string; finding?: Finding } {
  const iso = isoInstant(text);
  if (iso !== undefined) return { createdAt: iso };
  return {
    createdAt: answeredAt.toISOString(),
    finding: {
      check: 'response.created_at',
      outcome: 'unverifiable',
      expected: 'an ISO-8601 time with an offset, years 0001-9999, offset within ±15:59',
      actual: text.slice(0, 100),
      detail: `not a time Postgres stores (${instantProblem(text) ?? 'unreadable'}): recorded at the gateway's time of the answer`,
    },
  };
}
