import { randomBytes } from 'node:crypto';
import { Decimal, formatDecimal } from '../money/decimal.ts';
import type { DecimalText, TradeMethod } from '../partner/types.ts';
import type { SimCurrency } from './catalog.ts';
import { isFinalStatusFault, type FinalStatusFault, type SwapFault } from './faults.ts';
import { roundDown, type Priced } from './pricing.ts';
import type { SwapPayloadFields } from './signer.ts';
import type {
  PartnerSimulatorOptions,
  SimSwapView,
  StatusLike,
  StatusOverrides,
  StatusStep,
} from './types.ts';

/** A simulated swap's state and how its status moves: scripts, steps, final faults, the status report. */

export const FINAL_LIKE: ReadonlySet<StatusLike> = new Set(['FINISHED', 'REFUNDED', 'EXPIRED']);
const KNOWN_LIKE: ReadonlySet<string> = new Set([
  'PENDING',
  'ON_HOLD',
  'PROCESSING',
  'FINISHED',
  'REFUNDED',
  'EXPIRED',
  'UNKNOWN',
]);

/** Paths the random progression picks from; one uses partner-specific strings. */
export const DEFAULT_RANDOM_PATHS: readonly (readonly StatusStep[])[] = [
  ['PENDING', 'FINISHED'],
  ['PENDING', 'EXCHANGING', 'SENDING', 'FINISHED'],
  ['PENDING', 'ON_HOLD', 'FINISHED'],
  ['PENDING', 'ON_HOLD', 'REFUNDED'],
  ['PENDING', 'REFUNDED'],
  ['PENDING', 'EXPIRED'],
];

interface StatusFields {
  amount: DecimalText | undefined;
  payinTransactionId: string | undefined;
  payoutTransactionId: string | undefined;
  providerFees: DecimalText;
  referralFees: DecimalText;
  payoutNetworkFees: DecimalText;
}

export interface SwapState {
  readonly swapId: string;
  readonly tradeMethod: TradeMethod;
  readonly quoteId: string | undefined;
  readonly request: Record<string, unknown>;
  response: Record<string, unknown>;
  readonly createdAt: string;
  readonly from: SimCurrency;
  readonly to: SimCurrency;
  readonly amountFrom: Decimal;
  readonly priced: Priced;
  signed: { payload: string; signature: string; fields: SwapPayloadFields };
  readonly faults: Set<SwapFault>;
  script: readonly StatusStep[];
  step: number;
  status: string;
  like: StatusLike;
  fields: StatusFields;
  readonly history: { status: string; at: string }[];
}

/** What moving a status needs besides the swap. */
export interface StatusRules {
  readonly options: PartnerSimulatorOptions;
  readonly now: () => Date;
  /** Final amount of a float swap relative to its estimate. */
  readonly floatDrift: Decimal;
  readonly random: () => number;
}

export function scriptFor(rules: StatusRules, swap: SwapState): readonly StatusStep[] {
  const p = rules.options.progression;
  if (p?.random) {
    const paths = p.random === true ? DEFAULT_RANDOM_PATHS : p.random;
    return paths[Math.floor(rules.random() * paths.length)] ?? ['PENDING'];
  }
  if (typeof p?.script === 'function') return p.script(view(swap, rules.options));
  return p?.script ?? ['PENDING', 'FINISHED'];
}

export function stepForward(rules: StatusRules, swap: SwapState): boolean {
  if (FINAL_LIKE.has(swap.like) || swap.step + 1 >= swap.script.length) return false;
  swap.step++;
  setStatus(rules, swap, swap.script[swap.step]!);
  return true;
}

export function setStatus(
  rules: StatusRules,
  swap: SwapState,
  step: StatusStep,
  overrides?: StatusOverrides,
): void {
  const status = typeof step === 'string' ? step : step.status;
  const like: StatusLike =
    typeof step === 'string' ? (KNOWN_LIKE.has(step) ? (step as StatusLike) : 'PROCESSING') : step.like;
  swap.status = status;
  swap.like = like;
  swap.history.push({ status, at: rules.now().toISOString() });
  const f = swap.fields;
  const evm = isEvm(swap.to);
  if (like !== 'PENDING' && like !== 'UNKNOWN' && like !== 'EXPIRED')
    f.payinTransactionId ??= txHash(isEvm(swap.from));
  if (like === 'FINISHED') {
    f.payoutTransactionId ??= txHash(evm);
    f.amount = finalAmount(rules, swap);
  } else if (like === 'REFUNDED') {
    // The refund goes back in the source coin; the interface carries its hash where a payout's would be
    // (GET /status payoutTransactionId, the webhook's transactionHash): the platform keeps it as the refund's.
    f.payoutTransactionId ??= txHash(isEvm(swap.from));
    f.amount = '0';
  } else if (like === 'EXPIRED') {
    f.amount = '0';
  }
  if (FINAL_LIKE.has(like)) applyFinalFaults(swap);
  if (overrides) {
    for (const [k, v] of Object.entries(overrides) as [keyof StatusFields, string | null | undefined][]) {
      if (v === undefined) continue;
      (f as unknown as Record<string, string | undefined>)[k] = v === null ? undefined : v;
    }
  }
}

/** What a FINISHED swap reports paying out (before final faults): the estimate, a float's drifted. */
export function finalAmount(rules: StatusRules, swap: SwapState): DecimalText {
  const estimate = swap.priced.amountTo;
  const final = swap.tradeMethod === 'float' ? estimate.times(rules.floatDrift.plus(1)) : estimate;
  return formatDecimal(roundDown(final, swap.to.decimals));
}

export function applyFinalFaults(swap: SwapState): void {
  const f = swap.fields;
  const unit = new Decimal(1).div(new Decimal(10).pow(swap.to.decimals));
  for (const fault of swap.faults) {
    if (!isFinalStatusFault(fault)) continue;
    switch (fault satisfies FinalStatusFault) {
      case 'final-amount-below-signed':
        f.amount = formatDecimal(roundDown(swap.priced.amountTo.div(2), swap.to.decimals));
        break;
      case 'fees-differ-from-creation':
        f.providerFees = formatDecimal(swap.priced.providerFees.times(2).plus(unit));
        break;
      case 'missing-payin-hash':
        f.payinTransactionId = undefined;
        break;
      case 'missing-payout-hash':
        f.payoutTransactionId = undefined;
        break;
      case 'missing-final-amount':
        f.amount = undefined;
        break;
      case 'refund-without-refund-hash':
        if (swap.like === 'REFUNDED') f.payoutTransactionId = undefined;
        break;
      case 'deposit-after-expiry':
        if (swap.like === 'EXPIRED') f.payinTransactionId ??= txHash(isEvm(swap.from));
        break;
      case 'refund-is-payin':
        if (swap.like === 'REFUNDED' && f.payinTransactionId !== undefined)
          f.payoutTransactionId = f.payinTransactionId;
        break;
    }
  }
}

export function report(swap: SwapState, options: PartnerSimulatorOptions): Record<string, unknown> {
  const f = swap.fields;
  const absent = options.unknownFields === 'absent';
  const known = (v: string | undefined) => (v === undefined ? (absent ? undefined : '') : v);
  const out: Record<string, unknown> = {};
  if (swap.quoteId) out.quoteId = swap.quoteId;
  out.status = swap.status;
  for (const [k, v] of [
    ['amount', known(f.amount)],
    ['payinTransactionId', known(f.payinTransactionId)],
    ['payoutTransactionId', known(f.payoutTransactionId)],
  ] as const) {
    if (v !== undefined) out[k] = v;
  }
  out.providerFees = f.providerFees;
  out.referralFees = f.referralFees;
  out.payoutNetworkFees = f.payoutNetworkFees;
  return out;
}

export function view(s: SwapState, options: PartnerSimulatorOptions): SimSwapView {
  return {
    swapId: s.swapId,
    tradeMethod: s.tradeMethod,
    quoteId: s.quoteId,
    request: { ...s.request },
    response: structuredClone(s.response),
    createdAt: s.createdAt,
    currencyFrom: s.from.id,
    currencyTo: s.to.id,
    amountFrom: formatDecimal(s.amountFrom),
    amountTo: formatDecimal(s.priced.amountTo),
    creationFees: {
      providerFees: formatDecimal(s.priced.providerFees),
      referralFees: formatDecimal(s.priced.referralFees),
      payoutNetworkFees: formatDecimal(s.priced.payoutNetworkFees),
    },
    signed: { payload: s.signed.payload, signature: s.signed.signature, fields: { ...s.signed.fields } },
    faults: [...s.faults],
    status: s.status,
    like: s.like,
    final: FINAL_LIKE.has(s.like),
    report: report(s, options),
    history: s.history.map((h) => ({ ...h })),
  };
}

export function isEvm(c: SimCurrency): boolean {
  return c.chainId !== undefined || c.blockchain === 'ethereum';
}

function txHash(evm: boolean): string {
  return (evm ? '0x' : '') + randomBytes(32).toString('hex');
}
