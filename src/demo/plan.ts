import type { SwapFault } from '../simulator/index.ts';

/** What the demo makes one swap do: how it is created, where the partner takes it, what goes wrong. */
export interface DemoSwap {
  readonly method: 'fixed' | 'float';
  readonly from: string;
  readonly to: string;
  /** Decimal text in the source currency, inside the simulator's min/max. */
  readonly amount: string;
  readonly outcome: 'FINISHED' | 'REFUNDED' | 'EXPIRED';
  /** A simulator fault the reconciler should catch. */
  readonly fault?: SwapFault;
  /** A float swap the wallet sends without a quote: the gateway asks the partner for one. */
  readonly withoutQuote?: true;
  /**
   * 'payout-predates-swap': at the demo's start the partner pays the user's payout address this much of the
   * target currency outside any swap (payAhead); the swap, made past the clock allowance, reports it.
   */
  readonly payAhead?: string;
}

/** The reconciler's clock allowance `up` sets for the demo chains, mined on this machine's clock. */
export const DEMO_CLOCK_ALLOWANCE_SECONDS = 5;

/**
 * The first minute: every final status and a few mismatches, in several currencies, fixed and float. The
 * money moves in currencies the demo chains carry (chain.ts: ETH, USDT, BAT, BTC, LTC), so every clean
 * outcome is MATCHED on its chain evidence too; the one SOL payin shows "no chain source for SOL".
 */
export const FIRST_WAVE: readonly DemoSwap[] = [
  { method: 'fixed', from: 'btc', to: 'eth', amount: '0.01', outcome: 'FINISHED' },
  { method: 'float', from: 'eth', to: 'usdt', amount: '0.5', outcome: 'FINISHED' },
  { method: 'fixed', from: 'ltc', to: 'btc', amount: '2', outcome: 'REFUNDED' },
  { method: 'float', from: 'usdt', to: 'bat', amount: '250', outcome: 'EXPIRED' },
  {
    method: 'fixed',
    from: 'sol',
    to: 'eth',
    amount: '3',
    outcome: 'FINISHED',
    fault: 'final-amount-below-signed',
  },
  { method: 'float', from: 'btc', to: 'bat', amount: '0.01', outcome: 'FINISHED' },
  {
    method: 'fixed',
    from: 'eth',
    to: 'btc',
    amount: '0.5',
    outcome: 'FINISHED',
    fault: 'fees-differ-from-creation',
  },
  { method: 'fixed', from: 'btc', to: 'ltc', amount: '0.01', outcome: 'REFUNDED' },
  { method: 'float', from: 'ltc', to: 'eth', amount: '2', outcome: 'FINISHED', fault: 'missing-payout-hash' },
  { method: 'fixed', from: 'usdt', to: 'btc', amount: '250', outcome: 'EXPIRED' },
  // One per rule of the verdict's outcomes and the quote: each a mismatch (or an unproven refund) to find.
  {
    method: 'fixed',
    from: 'btc',
    to: 'eth',
    amount: '0.01',
    outcome: 'EXPIRED',
    fault: 'deposit-after-expiry',
  },
  {
    method: 'fixed',
    from: 'eth',
    to: 'ltc',
    amount: '0.5',
    outcome: 'REFUNDED',
    fault: 'refund-without-refund-hash',
  },
  {
    method: 'fixed',
    from: 'ltc',
    to: 'eth',
    amount: '2',
    outcome: 'FINISHED',
    fault: 'network-fee-above-quote',
  },
  // A float swap sent without a quote, its network fee inflated at creation: the gateway's own quote catches
  // it (quote.fee.payout_network MISMATCH); before every swap had a quote it was MATCHED.
  {
    method: 'float',
    from: 'ltc',
    to: 'eth',
    amount: '2',
    outcome: 'FINISHED',
    fault: 'network-fee-above-quote',
    withoutQuote: true,
  },
  // The chain as the last witness: a payout the partner reports that pays someone else (chain.payout MISMATCH).
  {
    method: 'fixed',
    from: 'btc',
    to: 'eth',
    amount: '0.01',
    outcome: 'FINISHED',
    fault: 'payout-wrong-address',
  },
  // One transfer, one claim: the payout the partner reports is the first swap's (the same pair and amount, to
  // the same user address): chain.payout MISMATCH "already evidences" the first swap.
  {
    method: 'fixed',
    from: 'btc',
    to: 'eth',
    amount: '0.01',
    outcome: 'FINISHED',
    fault: 'payout-claimed-twice',
  },
  // A payout to the right address, in BTC, of more than the amount, made at the demo's start: chain.payout
  // MISMATCH "predates the swap".
  {
    method: 'fixed',
    from: 'eth',
    to: 'btc',
    amount: '0.5',
    outcome: 'FINISHED',
    fault: 'payout-predates-swap',
    payAhead: '1',
  },
  // A refund of a thousandth of the payin (chain.refund MISMATCH, a short refund), and a refund whose hash is
  // the payin's (hash.refund and chain.refund MISMATCH).
  { method: 'fixed', from: 'ltc', to: 'eth', amount: '2', outcome: 'REFUNDED', fault: 'refund-dust' },
  { method: 'fixed', from: 'eth', to: 'btc', amount: '0.5', outcome: 'REFUNDED', fault: 'refund-is-payin' },
];

const AMOUNTS: Readonly<Record<string, string>> = {
  btc: '0.01',
  eth: '0.5',
  ltc: '2',
  usdt: '250',
  bat: '900',
};
// Only currencies the demo chains carry (chain.ts): without a source a payment is UNVERIFIABLE on its chain.
const SOURCES = Object.keys(AMOUNTS);
const TARGETS = ['btc', 'eth', 'ltc', 'usdt', 'bat'];
const FAULTS: readonly SwapFault[] = [
  'final-amount-below-signed',
  'fees-differ-from-creation',
  'missing-payin-hash',
  'wrong-destination-amount',
  'network-fee-above-quote',
  'referral-below-quote',
];

/** After the first wave: mostly clean finished swaps, some refunds and expiries, one in eight faulty. */
export function nextDemoSwap(random: () => number): DemoSwap {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const from = pick(SOURCES);
  const to = pick(TARGETS.filter((t) => t !== from));
  const r = random();
  const outcome = r < 0.7 ? 'FINISHED' : r < 0.85 ? 'REFUNDED' : 'EXPIRED';
  const fault = outcome === 'FINISHED' && random() < 0.125 ? pick(FAULTS) : undefined;
  return {
    method: random() < 0.4 ? 'float' : 'fixed',
    from,
    to,
    amount: AMOUNTS[from]!,
    outcome,
    ...(fault ? { fault } : {}),
  };
}

/** The partner's steps after creation (PENDING) up to the final one; partner-specific names on purpose. */
export function stepsOf(swap: DemoSwap): readonly string[] {
  if (swap.outcome === 'FINISHED') return ['EXCHANGING', 'SENDING', 'FINISHED'];
  if (swap.outcome === 'REFUNDED') return ['ON_HOLD', 'REFUNDED'];
  return ['EXPIRED'];
}
