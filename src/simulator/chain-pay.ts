import { toAtomicUnits } from '../money/atomic.ts';
import { parseDecimal } from '../money/decimal.ts';
import type { SimCurrency } from './catalog.ts';
import { finalAmount, setStatus, type StatusRules, type SwapState } from './progression.ts';
import { freshAddress } from './swaps.ts';
import type { ChainMove, SimChain, StatusStep } from './types.ts';

/**
 * Real transactions behind what the simulator reports (its `chain` option): before a status that reports a
 * payin, payout or refund hash, the transaction is made on a chain and its own hash reported, so a chain
 * watcher finds what the partner says. The user's payin is made here too: the simulator plays both sides.
 */

const atomic = (amount: string, c: SimCurrency) => toAtomicUnits(parseDecimal(amount), c.decimals);

/**
 * The transactions `step` brings that are not made yet, read off a dry run of the status change (so faults
 * count as they will: a payout of half the quote for 'final-amount-below-signed', no payout for a hash
 * the partner will not report).
 */
export function movesFor(rules: StatusRules, swap: SwapState, step: StatusStep): ChainMove[] {
  const probe: SwapState = { ...swap, fields: { ...swap.fields }, history: [] };
  setStatus(rules, probe, step);
  const before = swap.fields;
  const after = probe.fields;
  const moves: ChainMove[] = [];
  if (after.payinTransactionId !== undefined && before.payinTransactionId === undefined)
    moves.push({
      swapId: swap.swapId,
      role: 'payin',
      currency: swap.from,
      to: String(swap.response.payinAddress),
      // What the user was asked to send: the signed source amount.
      amount: swap.signed.fields.amount_to_provider,
    });
  if (after.payoutTransactionId !== undefined && before.payoutTransactionId === undefined) {
    if (probe.like === 'FINISHED')
      moves.push({
        swapId: swap.swapId,
        role: 'payout',
        currency: swap.to,
        to: swap.faults.has('payout-wrong-address')
          ? freshAddress(swap.to)
          : String(swap.request.payoutAddress),
        amount: atomic(after.amount ?? finalAmount(rules, swap), swap.to),
      });
    else if (probe.like === 'REFUNDED')
      moves.push({
        swapId: swap.swapId,
        role: 'refund',
        currency: swap.from,
        to: String(swap.request.refundAddress),
        amount: swap.signed.fields.amount_to_provider,
      });
  }
  return moves;
}

/** Makes the moves and keeps their hashes in the swap's fields, where the status change reports them. */
export async function payMoves(chain: SimChain, swap: SwapState, moves: readonly ChainMove[]) {
  const hashes: [ChainMove, string | undefined][] = [];
  for (const move of moves) hashes.push([move, await chain.pay(move)]);
  for (const [move, hash] of hashes) {
    if (hash === undefined) continue;
    if (move.role === 'payin') swap.fields.payinTransactionId ??= hash;
    // The interface carries a refund's hash where a payout's would be (progression.ts).
    else swap.fields.payoutTransactionId ??= hash;
  }
}
