import type { ChainRole, ChainTransactionObserved, SwapEventOf } from '../events/types.ts';
import { swapKey } from '../events/keys.ts';
import { instantProblem } from '../events/time.ts';
import { sameAddress, transferKey } from '../swap/chain-transfer.ts';
import { storableTextProblem } from '../swap/text.ts';
import type { SwapRow, WorkingSet } from './state.ts';
import { queueForReconciliation } from './swaps.ts';
import { applied, rejected, type FoldDecision } from './decision.ts';

/**
 * The fold of ChainTransactionObserved: what the chain watcher saw of a transaction a partner reported. Pure:
 * the watcher took every decision (depth needed, asset, deadline passed) and the event carries it, so the
 * fold reads no chain, no clock and no configuration, and a replay rebuilds the same rows. The latest
 * observation of a (swap, role, txid) by log order is its row; one of a closed or final swap queues it for
 * reconciliation, so its verdict is judged again on the new evidence. A proven observation also records the
 * swap's claims on the transfers it sees paying the swap's address for the role (chain_claims: one transfer,
 * one claim), each written once, by the first observation of the swap that saw it.
 */

const ROLES: ReadonlySet<string> = new Set<ChainRole>(['payin', 'payout', 'refund']);
const STATUSES = new Set(['found', 'pending', 'not_found', 'reverted', 'refused']);
const FAMILIES = new Set(['evm', 'utxo']);
/** Atomic units: a non-negative integer that fits numeric(78, 0). */
const ATOMIC = /^(0|[1-9]\d{0,77})$/;
const MAX_TEXT = 512;
/** The most transfers one observation may carry into the projection (a row's jsonb stays bounded). */
const MAX_FOLDED_TRANSFERS = 1000;
/**
 * The note an observation written before `contractCall` was a field carries in its detail: such an event is
 * read as a contract call, so it is judged as it was (the watcher's CONTRACT_CALL_NOTE of that time).
 */
const LEGACY_CONTRACT_CALL_NOTE = 'a contract call';

/** Why the observation cannot be folded (a hand-made or injected event), or undefined. */
export function observationProblem(p: ChainTransactionObserved): string | undefined {
  if (!ROLES.has(p.role)) return `role ${JSON.stringify(p.role)} is not payin, payout or refund`;
  if (!STATUSES.has(p.status))
    return `status ${JSON.stringify(p.status)} is not found, pending, not_found, reverted or refused`;
  if (!FAMILIES.has(p.family)) return `family ${JSON.stringify(p.family)} is not evm or utxo`;
  for (const [name, v] of Object.entries({
    currency: p.currency,
    chain: p.chain,
    txid: p.txid,
    asset: p.asset,
    source: p.source,
    blockHash: p.blockHash,
    detail: p.detail,
  })) {
    if (v === null) continue;
    if (name !== 'detail' && name !== 'blockHash' && v.trim() === '') return `${name} is empty`;
    if (name !== 'detail' && v.length > MAX_TEXT) return `${name} is longer than ${MAX_TEXT} characters`;
    const problem = storableTextProblem(v);
    if (problem) return `${name} ${problem}`;
  }
  for (const [name, v] of Object.entries({
    confirmations: p.confirmations,
    requiredConfirmations: p.requiredConfirmations,
    decimals: p.decimals,
  }))
    if (!Number.isSafeInteger(v) || v < 0) return `${name} ${v} is not a non-negative integer`;
  if (p.block !== null && (!Number.isSafeInteger(p.block) || p.block < 0))
    return `block ${p.block} is not a non-negative integer`;
  const when = instantProblem(p.observedAt);
  if (when) return `observedAt ${JSON.stringify(p.observedAt.slice(0, 60))}: ${when}`;
  if (p.blockTime !== null && p.blockTime !== undefined) {
    const bad = instantProblem(p.blockTime);
    if (bad) return `blockTime ${JSON.stringify(p.blockTime.slice(0, 60))}: ${bad}`;
  }
  if (p.fee !== null && p.fee !== undefined && !ATOMIC.test(p.fee))
    return `fee ${JSON.stringify(p.fee.slice(0, 90))} is not atomic units (an integer)`;
  if (p.transfers.length > MAX_FOLDED_TRANSFERS) return `more than ${MAX_FOLDED_TRANSFERS} transfers`;
  for (const [i, t] of p.transfers.entries()) {
    if (!ATOMIC.test(t.amount))
      return `transfers[${i}].amount ${JSON.stringify(t.amount.slice(0, 90))} is not atomic units (an integer)`;
    if (t.index !== null && t.index !== undefined && (!Number.isSafeInteger(t.index) || t.index < 0))
      return `transfers[${i}].index ${t.index} is not a non-negative integer`;
    for (const [name, v] of [
      ['asset', t.asset],
      ['recipient', t.recipient],
    ] as const) {
      if (v.length > MAX_TEXT) return `transfers[${i}].${name} is longer than ${MAX_TEXT} characters`;
      const problem = storableTextProblem(v);
      if (problem) return `transfers[${i}].${name} ${problem}`;
    }
  }
  return undefined;
}

/** The key of a swap's observation row: one per (swap, role, txid). */
export const observationKey = (providerId: string, swapId: string, role: string, txid: string) =>
  `${swapKey(providerId, swapId)}\u0000${role}\u0000${txid}`;

export function foldChainTransactionObserved(
  ws: WorkingSet,
  event: SwapEventOf<'ChainTransactionObserved'>,
): FoldDecision {
  if (!event.swapId) return rejected('ChainTransactionObserved carries no swapId');
  const swap = ws.swaps.get(swapKey(event.providerId, event.swapId));
  if (!swap)
    return rejected(`unknown swap ${event.providerId}/${event.swapId}: no SwapCreated was applied for it`);
  const p = event.payload;
  const problem = observationProblem(p);
  if (problem) return rejected(`not a chain observation the projection can hold: ${problem}`);
  ws.chainObservations.set(observationKey(swap.providerId, swap.swapId, p.role, p.txid), {
    providerId: swap.providerId,
    swapId: swap.swapId,
    role: p.role,
    txid: p.txid,
    eventId: event.eventId,
    currency: p.currency,
    chain: p.chain,
    family: p.family,
    status: p.status,
    confirmations: p.confirmations,
    requiredConfirmations: p.requiredConfirmations,
    block: p.block,
    blockHash: p.blockHash,
    asset: p.asset,
    decimals: p.decimals,
    transfers: p.transfers.map((t) => ({
      asset: t.asset,
      recipient: t.recipient,
      amount: t.amount,
      index: t.index ?? null,
    })),
    source: p.source,
    proven: p.proven,
    deadlinePassed: p.deadlinePassed,
    observedAt: p.observedAt,
    detail: p.detail,
    recordedAt: event.recordedAt,
    blockTime: p.blockTime ?? null,
    fee: p.fee ?? null,
    contractCall: p.contractCall === true || (p.detail?.includes(LEGACY_CONTRACT_CALL_NOTE) ?? false),
  });
  const claimed = claimTransfers(ws, swap, event);
  // The verdict of an ended swap is judged again on the new evidence (an open swap is judged when it ends).
  const ended = swap.statusClass === 'final' || swap.statusClass === 'closed' || swap.final;
  if (ended) queueForReconciliation(ws, event, swap, 'chain');
  const seen = `${p.status}${p.status === 'found' || p.status === 'pending' ? ` ${p.confirmations}/${p.requiredConfirmations}` : ''}`;
  return applied(
    { [`chain.${p.role}`]: [null, `${p.txid}: ${seen}`] },
    `${p.role} ${p.txid} on ${p.chain}: ${seen}${claimed ? `; claims ${claimed} transfer(s)` : ''}${ended ? '; queued for reconciliation' : ''}`,
  );
}

/** The swap's address a transfer of the role must pay (the addresses of its creation). */
const ADDRESS_OF: Record<ChainRole, (s: SwapRow) => string> = {
  payin: (s) => s.payinAddress,
  payout: (s) => s.payoutAddress,
  refund: (s) => s.refundAddress,
};

/**
 * Records the swap's claim on each transfer of a proven, mined-or-pending observation that pays the swap's
 * address for the role in the observed asset; a claim already recorded keeps its first event. How many.
 */
function claimTransfers(
  ws: WorkingSet,
  swap: SwapRow,
  event: SwapEventOf<'ChainTransactionObserved'>,
): number {
  const p = event.payload;
  if (!p.proven || (p.status !== 'found' && p.status !== 'pending')) return 0;
  const address = ADDRESS_OF[p.role as ChainRole](swap);
  let n = 0;
  for (const t of p.transfers) {
    if (t.asset !== p.asset || !sameAddress(p.family, t.recipient, address)) continue;
    const transfer = transferKey(p.family, t);
    const key = [p.chain, p.txid, transfer, swap.providerId, swap.swapId, p.role].join('\u0000');
    n++;
    if (ws.chainClaims.has(key)) continue;
    ws.chainClaims.set(key, {
      chain: p.chain,
      txid: p.txid,
      transfer,
      providerId: swap.providerId,
      swapId: swap.swapId,
      role: p.role,
      eventId: event.eventId,
      asset: t.asset,
      recipient: t.recipient,
      amount: t.amount,
    });
  }
  return n;
}
