import { toAtomicUnits } from '../money/atomic.ts';
import { parseDecimal } from '../money/decimal.ts';
import type { SimCurrency } from './catalog.ts';
import { finalAmount, setStatus, type StatusRules, type SwapState } from './progression.ts';
import { freshAddress } from './swaps.ts';
import type { DecimalText } from '../partner/types.ts';
import type { ChainMove, SimChain, StatusStep } from './types.ts';

/**
 * Real transactions behind what the simulator reports (its `chain` option): before a status that reports a
 * payin, payout or refund hash, the transaction is made on a chain and its own hash reported, so a chain
 * watcher finds what the partner says. The user's payin is made here too: the simulator plays both sides.
 */

const atomic = (amount: string, c: SimCurrency) => toAtomicUnits(parseDecimal(amount), c.decimals);

/** A transaction the simulator made, kept so a later fault can report it again. */
export interface ChainPayment {
  readonly move: ChainMove;
  readonly hash: string;
  /** When the chain answered it made (the simulator's clock). */
  readonly at: string;
  /** The swap that reports it (a payAhead transfer: none until 'payout-predates-swap' cites it). */
  claimedBy: string | undefined;
}

/** A refund of 'refund-dust': a thousandth of the payin, so it is no refund at all. */
const DUST_PART = 1000n;

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
        ...(after.payoutNetworkFees ? { networkFee: atomic(after.payoutNetworkFees, swap.to) } : {}),
      });
    // 'refund-is-payin' reports the payin's hash as the refund's: no refund is made.
    else if (probe.like === 'REFUNDED' && !swap.faults.has('refund-is-payin')) {
      const signed = swap.signed.fields.amount_to_provider;
      const dust = signed / DUST_PART > 0n ? signed / DUST_PART : 1n;
      moves.push({
        swapId: swap.swapId,
        role: 'refund',
        currency: swap.from,
        to: String(swap.request.refundAddress),
        amount: swap.faults.has('refund-dust') ? dust : signed,
      });
    }
  }
  return moves;
}

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The earlier transaction a payout fault reports instead of paying: 'payout-claimed-twice', another swap's
 * payout to the same address in the same currency (one of at least the amount if any, so only the claim
 * rule finds it); 'payout-predates-swap', a payAhead transfer no swap reports yet, made before the swap was
 * created, of at least the amount (so only the time rule finds it). Undefined: the payout is made.
 */
export function citedPayment(
  swap: SwapState,
  move: ChainMove,
  paid: readonly ChainPayment[],
): ChainPayment | undefined {
  if (move.role !== 'payout') return undefined;
  const same = paid.filter(
    (p) =>
      p.move.role === 'payout' && p.move.currency.id === move.currency.id && sameAddress(p.move.to, move.to),
  );
  if (swap.faults.has('payout-claimed-twice')) {
    const others = same.filter((p) => p.claimedBy !== undefined && p.claimedBy !== swap.swapId);
    return others.filter((p) => p.move.amount >= move.amount).at(-1) ?? others.at(-1);
  }
  if (swap.faults.has('payout-predates-swap'))
    return same
      .filter((p) => p.claimedBy === undefined && p.at < swap.createdAt && p.move.amount >= move.amount)
      .at(-1);
  return undefined;
}

/**
 * Makes the moves (or, for a payout fault, cites an earlier transaction: citedPayment) and keeps their hashes
 * in the swap's fields, where the status change reports them; what is made is added to `paid`.
 */
export async function payMoves(
  chain: SimChain,
  swap: SwapState,
  moves: readonly ChainMove[],
  paid: ChainPayment[],
  now: () => Date,
) {
  const hashes: [ChainMove, string | undefined][] = [];
  for (const move of moves) {
    const cited = citedPayment(swap, move, paid);
    if (cited) {
      cited.claimedBy ??= swap.swapId;
      hashes.push([move, cited.hash]);
      continue;
    }
    const hash = await chain.pay(move);
    if (hash !== undefined) paid.push({ move, hash, at: now().toISOString(), claimedBy: move.swapId });
    hashes.push([move, hash]);
  }
  for (const [move, hash] of hashes) {
    if (hash === undefined) continue;
    if (move.role === 'payin') swap.fields.payinTransactionId ??= hash;
    // The interface carries a refund's hash where a payout's would be (progression.ts).
    else swap.fields.payoutTransactionId ??= hash;
  }
}

/**
 * A transfer the partner makes outside any swap (to an address of its users, in a currency): kept in `paid`
 * for 'payout-predates-swap' to report later. Undefined when the chain does not carry the currency.
 */
export async function payAhead(
  chain: SimChain,
  move: { readonly currency: SimCurrency; readonly to: string; readonly amount: DecimalText },
  paid: ChainPayment[],
  now: () => Date,
): Promise<string | undefined> {
  const made: ChainMove = {
    swapId: undefined,
    role: 'payout',
    currency: move.currency,
    to: move.to,
    amount: atomic(move.amount, move.currency),
  };
  const hash = await chain.pay(made);
  if (hash !== undefined) paid.push({ move: made, hash, at: now().toISOString(), claimedBy: undefined });
  return hash;
}
