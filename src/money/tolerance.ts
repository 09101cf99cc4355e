import { Decimal } from './decimal.ts';
import { exactDifference, exactProduct } from './exact.ts';

/**
 * The directional fee tolerance, one rule for the reconciler's fee checks and the month end's statement
 * matcher (src/monthend): moved down from src/reconciler/policy.ts so both floors judge a fee the same way.
 */

/** The three fees a swap carries at creation and at its final status, in the destination currency. */
export type FeeKind = 'provider' | 'referral' | 'payoutNetwork';
export const FEE_KINDS: readonly FeeKind[] = Object.freeze(['provider', 'referral', 'payoutNetwork']);

/** What a fee tolerance applies to: each fee, and the sum of the three. */
export type FeeCheckKind = FeeKind | 'sum';
export const FEE_CHECK_KINDS: readonly FeeCheckKind[] = Object.freeze([...FEE_KINDS, 'sum']);

/**
 * Which way a fee moved, seen from the platform. Disfavour: the referral fee (the platform's revenue)
 * down, the provider fee, the payout network fee or the sum of fees up. Favour: the other way.
 */
export type FeeDirection = 'favour' | 'disfavour';

/**
 * How far a final fee may stand from its creation figure in one direction. The allowance is the
 * larger of `absolute` and `relative` × the creation figure: either one suffices.
 */
export interface FeeTolerance {
  /** In the fee's own currency; 0 or more. */
  readonly absolute: Decimal;
  /** A ratio of the creation figure, 0 to 1. */
  readonly relative: Decimal;
}

/**
 * One tolerance per direction: a symmetric one let the platform's disfavour pass whenever its favour
 * was tolerated (referral halved, provider fee raised by as much).
 */
export interface DirectionalTolerance {
  readonly favour: FeeTolerance;
  readonly disfavour: FeeTolerance;
}

/** Which way up goes for the platform: only the referral fee is its revenue. */
export const FEE_UP_IS: Readonly<Record<FeeCheckKind, FeeDirection>> = Object.freeze({
  provider: 'disfavour',
  referral: 'favour',
  payoutNetwork: 'disfavour',
  sum: 'disfavour',
});

export interface DirectionalJudgement {
  /** actual − expected. */
  delta: Decimal;
  /** Undefined when the figures are equal. */
  direction: FeeDirection | undefined;
  /** The allowance of the direction moved: the larger of absolute and relative × expected. */
  allowance: Decimal | undefined;
  /** Equal, or within the allowance of the direction it moved. */
  within: boolean;
}

/**
 * Judges `actual` against `expected` for a fee of `kind`, directionally. Throws InexactArithmeticError
 * (src/money/exact.ts) where a figure would need rounding: the caller says UNVERIFIABLE, never rounds.
 */
export function judgeFee(
  kind: FeeCheckKind,
  expected: Decimal,
  actual: Decimal,
  tolerance: DirectionalTolerance,
): DirectionalJudgement {
  const delta = exactDifference(actual, expected);
  if (delta.isZero()) return { delta, direction: undefined, allowance: undefined, within: true };
  const direction: FeeDirection = delta.gt(0) === (FEE_UP_IS[kind] === 'disfavour') ? 'disfavour' : 'favour';
  const t = tolerance[direction];
  const allowance = Decimal.max(t.absolute, exactProduct(expected, t.relative));
  return { delta, direction, allowance, within: delta.abs().lte(allowance) };
}
