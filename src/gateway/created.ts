import type pg from 'pg';

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
