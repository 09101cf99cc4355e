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
});

/** Looks transactions up on one chain source. */
export interface ChainClient {
  lookup(txid: string, currency: ChainCurrencyDefinition): Promise<TxLookup>;
}

/** The source did not answer, or not in time, or not in its protocol: looked up again later. */
export class ChainSourceError extends Error {
  override name = 'ChainSourceError';
}

/** The source answered with something that cannot be the transaction asked for: refused, never recorded. */
export class ChainSourceRefusedError extends ChainSourceError {
  override name = 'ChainSourceRefusedError';
}

/**
 * The detail a contract call carries (EVM): native value it moved by internal calls is not visible over the
 * standard JSON-RPC, so a native check that finds no direct payment says it could not see, not that none was.
 */
export const CONTRACT_CALL_NOTE = 'a contract call';

/** At most this many transfers are kept per transaction (a batch payout may hold thousands). */
export const MAX_TRANSFERS = 200;

/** Keeps the transfers to `addresses` first, then others up to MAX_TRANSFERS; says when some were left. */
export function keepTransfers(
  all: ChainTransfer[],
  matters: (t: ChainTransfer) => boolean,
): { transfers: ChainTransfer[]; note: string | null } {
  if (all.length <= MAX_TRANSFERS) return { transfers: all, note: null };
  const first = all.filter(matters);
  const rest = all.filter((t) => !matters(t));
  const kept = [...first, ...rest.slice(0, Math.max(0, MAX_TRANSFERS - first.length))];
  return { transfers: kept, note: `${all.length - kept.length} of ${all.length} transfers not kept` };
}

/**
 * Spaces the requests to one source at its configured rate: each call waits its turn (a queue of promises),
 * so a watcher round never bursts past a provider's limit and is never refused for it.
 */
export class RateLimiter {
  private next = 0;
  constructor(private readonly perSecond: number) {}

  async take(): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.next);
    this.next = at + 1000 / this.perSecond;
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  }
}

/** found at the depth needed, pending below it. */
export const depthStatus = (confirmations: number, c: ChainCurrencyDefinition): ChainObservationStatus =>
  confirmations >= c.confirmations ? 'found' : 'pending';
