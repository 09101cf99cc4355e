import type { ChainObservationStatus, ChainTransfer } from '../events/types.ts';
import type { ChainCurrencyDefinition } from './config.ts';

/**
 * What one look at a chain found for a transaction id: the facts a ChainTransactionObserved carries, before
 * the watcher adds the swap's side (role, deadline). Amounts are atomic units as decimal text.
 */
export interface TxLookup {
  status: ChainObservationStatus;
  confirmations: number;
  block: number | null;
  blockHash: string | null;
  transfers: ChainTransfer[];
  /** The txid is proven to be this transaction (UTXO: its bytes hash to it; EVM: the receipt names it). */
  proven: boolean;
  detail: string | null;
  /** ISO-8601 UTC of the mining block's header timestamp; null until mined. */
  blockTime: string | null;
  /** Atomic units of the chain's native asset the transaction spent; null when not known. */
  fee: string | null;
  /** EVM: it calls a contract (native value moved by its internal calls is not visible). */
  contractCall: boolean;
}

/** A transaction the source does not know (or an id that cannot name one): nothing seen, with why. */
export const notFound = (detail: string | null): TxLookup => ({
  status: 'not_found',
  confirmations: 0,
  block: null,
  blockHash: null,
  transfers: [],
  proven: false,
  detail,
  blockTime: null,
  fee: null,
  contractCall: false,
});

/**
 * The source answered with something that cannot be the transaction asked for (bytes that do not hash to it,
 * a receipt naming another, another chain id): recorded as such, so the check side can say the source is not
 * to be trusted for it, and nothing of what it said is kept.
 */
export const refused = (detail: string): TxLookup => ({ ...notFound(detail), status: 'refused' });

/** Looks transactions up on one chain source. */
export interface ChainClient {
  lookup(txid: string, currency: ChainCurrencyDefinition): Promise<TxLookup>;
}

/** The source did not answer, or not in time, or not in its protocol: looked up again later. */
export class ChainSourceError extends Error {
  override name = 'ChainSourceError';
}

/**
 * The transfers the watcher keeps per observation, at most (a batch payout may hold thousands): those of the
 * configured asset first. Below the projector's own cap on what it folds (src/projector/chain.ts), so an
 * observation the watcher writes is never one the fold refuses.
 */
export const WATCHER_MAX_TRANSFERS = 200;

/** Keeps the transfers that matter first, then others up to WATCHER_MAX_TRANSFERS; says when some were left. */
export function keepTransfers(
  all: ChainTransfer[],
  matters: (t: ChainTransfer) => boolean,
): { transfers: ChainTransfer[]; note: string | null } {
  if (all.length <= WATCHER_MAX_TRANSFERS) return { transfers: all, note: null };
  const first = all.filter(matters);
  const rest = all.filter((t) => !matters(t));
  const kept = [...first, ...rest.slice(0, Math.max(0, WATCHER_MAX_TRANSFERS - first.length))];
  return { transfers: kept, note: `${all.length - kept.length} of ${all.length} transfers not kept` };
}

/** found at the depth needed, pending below it. */
export const depthStatus = (confirmations: number, c: ChainCurrencyDefinition): ChainObservationStatus =>
  confirmations >= c.confirmations ? 'found' : 'pending';
