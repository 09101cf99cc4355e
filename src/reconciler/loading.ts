import type pg from 'pg';
import { NO_CHAIN_SOURCES, type ChainSources } from '../chain/config.ts';
import { loadChainEvidence } from './chain-load.ts';
import { perSwapLookup } from './per-swap-lookup.ts';
import { readProviderSetup, type ProviderSetup } from '../providers/reads.ts';
import { formatSwapRef, type SwapRef } from '../swap/ref.ts';
import type { JudgedRow, SwapToJudge } from './judging.ts';

/**
 * The reconciler's reads: what the checks of a round of swaps read (its rows, their SwapCreated, their
 * conflicts, their providers' setups), each by its own index probe, and the swaps' verdict history.
 */

export class ReconcileError extends Error {
  override name = 'ReconcileError';
}

/** What the checks of one swap read, and when it became final. */
export interface LoadedSwap extends SwapToJudge {
  readonly finalAtMs: number | null;
}

/**
 * What the checks of several swaps read, in three queries whatever their number (the swaps rows, their
 * applied SwapCreated, their status conflicts) and one read of each provider's keys: a swap that cannot
 * be checked is a ReconcileError of its own, never the batch's.
 */
export async function loadSwaps(
  projection: pg.Pool | pg.PoolClient,
  platform: pg.Pool,
  refs: readonly SwapRef[],
  /** The chain sources configured (CHAIN_SOURCES_FILE): none, no chain evidence and no chain checks. */
  chainSources: ChainSources = NO_CHAIN_SOURCES,
): Promise<Map<string, LoadedSwap | ReconcileError>> {
  const keys = [refs.map((r) => r.providerId), refs.map((r) => r.swapId)];
  // The columns the checks read, not the row's forty-odd.
  const swaps = await projection.query(
    perSwapLookup(
      `x.provider_id, x.swap_id, x.status, x.status_class, x.extra_fees, x.webhook_network_fees, x.final,
       extract(epoch from x.final_at) * 1000 as final_at_ms,
       x.last_event_id, x.last_correction_event_id,
       x.amount_to, x.provider_fees, x.referral_fees, x.payout_network_fees, x.payin_transaction_id,
       x.payout_transaction_id, x.refund_transaction_id`,
      'swaps',
    ),
    keys,
  );
  // As text: parsed where it is judged (a judge thread), not on the event loop.
  const created = await projection.query<{ provider_id: string; swap_id: string; payload: string }>(
    perSwapLookup(
      'x.provider_id, x.swap_id, x.payload::text as payload',
      'event_journal',
      `and x.event_type = 'SwapCreated' and x.outcome = 'applied'`,
    ),
    keys,
  );
  const conflicts = await projection.query<{
    provider_id: string;
    swap_id: string;
    field: string;
    final_value: string | null;
    reported_value: string | null;
    event_id: string;
    source: string;
  }>(
    `${perSwapLookup(
      'x.provider_id, x.swap_id, x.field, x.final_value, x.reported_value, x.event_id, x.source, x.occurred_at, x.conflict_id',
      'status_conflicts',
    )} order by t.occurred_at, t.conflict_id`,
    keys,
  );
  // A provider whose setup cannot be read fails its own swaps, not the round's others.
  const setups = new Map<string, Promise<ProviderSetup | undefined | ReconcileError>>();
  const setupOf = (providerId: string) => {
    let s = setups.get(providerId);
    if (!s)
      setups.set(
        providerId,
        (s = readProviderSetup(platform, providerId).catch(
          (e: unknown) =>
            new ReconcileError(`provider ${providerId}'s setup cannot be read: ${(e as Error).message}`),
        )),
      );
    return s;
  };
  const byRef = <T extends { provider_id: string; swap_id: string }>(rows: T[]) => {
    const m = new Map<string, T[]>();
    for (const row of rows) {
      const k = formatSwapRef({ providerId: row.provider_id, swapId: row.swap_id });
      const list = m.get(k);
      if (list) list.push(row);
      else m.set(k, [row]);
    }
    return m;
  };
  const rowOf = byRef(swaps.rows as (JudgedRow & { swap_id: string; final_at_ms: string | null })[]);
  const createdOf = byRef(created.rows);
  const conflictsOf = byRef(conflicts.rows);
  // Figures the poller gave up asking for at the confirmation deadline: "never reported", not "not yet".
  const never = await projection.query<{ provider_id: string; swap_id: string; missing: string[] }>(
    perSwapLookup('x.provider_id, x.swap_id, x.missing', 'platform.confirmations_never_reported'),
    keys,
  );
  const neverOf = byRef(never.rows);
  // What the chain watcher saw of the swaps' transactions (chain_observations); none without a chain source.
  const chainOf = await loadChainEvidence(projection, refs, chainSources);
  const loaded = new Map<string, LoadedSwap | ReconcileError>();
  for (const ref of refs) {
    const k = formatSwapRef(ref);
    const row = rowOf.get(k)?.[0];
    const payload = createdOf.get(k)?.[0]?.payload;
    const setup = await setupOf(ref.providerId);
    if (!row) loaded.set(k, new ReconcileError(`no swap ${k} in the projection`));
    else if (!payload)
      loaded.set(k, new ReconcileError(`swap ${k} has no applied SwapCreated in the journal`));
    else if (setup instanceof ReconcileError) loaded.set(k, setup);
    else
      loaded.set(k, {
        ref,
        row,
        createdJson: payload,
        finalAtMs: row.final_at_ms === null ? null : Number(row.final_at_ms),
        conflicts: (conflictsOf.get(k) ?? []).map((c) => ({
          field: c.field,
          finalValue: c.final_value,
          reportedValue: c.reported_value,
          eventId: c.event_id,
          source: c.source,
        })),
        setup: setup && { payloadKeys: setup.payloadKeys, defaultSlippage: setup.defaultSlippage },
        neverReported: neverOf.get(k)?.[0]?.missing ?? [],
        ...(chainOf.has(k) ? { chain: chainOf.get(k) } : {}),
      });
  }
  return loaded;
}

/** Final swaps that became final at or after `since`, oldest first (for `reconcile --since`). */
export async function finalSwapsSince(projection: pg.Pool, since: Date): Promise<SwapRef[]> {
  const r = await projection.query<{ provider_id: string; swap_id: string }>(
    'select provider_id, swap_id from swaps where final and final_at >= $1 order by final_at, provider_id, swap_id',
    [since.toISOString()],
  );
  return r.rows.map((row) => ({ providerId: row.provider_id, swapId: row.swap_id }));
}

/** Every verdict recorded for a swap, oldest first (the last is the current one). */
export async function verdictHistory(
  projection: pg.Pool,
  ref: SwapRef,
): Promise<{ verdict: string; reconciledAt: string; basedOnEventId: string; eventId: string }[]> {
  const r = await projection.query<{
    verdict: string;
    reconciled_at: string;
    based_on_event_id: string;
    event_id: string;
  }>(
    `select verdict, reconciled_at, based_on_event_id, event_id from reconciliation_history
     where provider_id = $1 and swap_id = $2 order by reconciled_at, event_id`,
    [ref.providerId, ref.swapId],
  );
  return r.rows.map((h) => ({
    verdict: h.verdict,
    reconciledAt: h.reconciled_at,
    basedOnEventId: h.based_on_event_id,
    eventId: h.event_id,
  }));
}
