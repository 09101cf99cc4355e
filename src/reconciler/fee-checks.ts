import { Decimal, formatDecimal } from '../money/decimal.ts';
import { exactDifference, exactProduct, exactSum } from './exact.ts';
import {
  FEE_KINDS,
  type DirectionalTolerance,
  type FeeCheckKind,
  type FeeDirection,
  type FeeKind,
} from './policy.ts';
import { type FeeFigures, type ReconciledCheck, type ReconciliationInput, type Verdict } from './types.ts';
import {
  check,
  destinationUnit,
  exactly,
  readMoney,
  reasonOf,
  shown,
  text,
  type Read,
  type StatusClass,
  type Unit,
} from './inputs.ts';

/** The fee checks: each final fee against its creation figure within the policy's tolerance, and their sum. */

// ---- fees ----

const FEE_NAMES: Record<FeeKind, { check: string; field: keyof FeeFigures }> = {
  provider: { check: 'fee.provider', field: 'providerFees' },
  referral: { check: 'fee.referral', field: 'referralFees' },
  payoutNetwork: { check: 'fee.payout_network', field: 'payoutNetworkFees' },
};
const FEE_SUM = 'fee.sum';

// A table per fee check kind, like policy.ts's KIND_KEY: the same keys, other facts.
/** Which way up goes for the platform: only the referral fee is its revenue. */
const UP_IS: Record<FeeCheckKind, FeeDirection> = {
  provider: 'disfavour',
  referral: 'favour',
  payoutNetwork: 'disfavour',
  sum: 'disfavour',
};

/** The exact sum of figures, or the first reason one is missing, refused or imprecise. */
function sumOf(reads: Read[], what: string): Read {
  const bad = reads.find((r) => !('value' in r) || 'imprecise' in r);
  if (bad) return 'refused' in bad ? bad : { missing: true, reason: `${what} unknown: ${reasonOf(bad)}` };
  const why: string[] = [];
  let total: Decimal | undefined = new Decimal(0);
  for (const r of reads) {
    const sofar: Decimal = total;
    total = exactly(() => exactSum(sofar, (r as { value: Decimal }).value), why);
    if (!total) return { missing: true, reason: `${what} unknown: ${why.join('; ')}` };
  }
  return { value: total };
}

/**
 * One fee comparison, final against creation. Directional: the allowance of the direction the fee
 * moved (UP_IS) is the larger of its absolute and relative × creation figure.
 * REFUNDED and EXPIRED swaps executed no swap, and a partner reporting zero (or no) fees then is
 * normal: the comparison is informational there, MATCHED when equal to creation, WITHIN_TOLERANCE
 * with the reason otherwise (a refused figure stays UNVERIFIABLE: that is bad data, not a fee).
 */
function feeComparison(
  name: string,
  kind: FeeCheckKind,
  created: Read,
  reported: Read,
  input: ReconciliationInput,
  status: StatusClass,
  policy: DirectionalTolerance,
  notes: string[],
): ReconciledCheck {
  const reasons: string[] = [];
  const expected = shown(created);
  const actual = shown(reported);
  for (const read of [created, reported]) {
    const reason = reasonOf(read);
    if (reason) reasons.push(reason);
  }
  const delta = expected && actual ? exactly(() => exactDifference(actual, expected), reasons) : undefined;

  if (status === 'REFUNDED' || status === 'EXPIRED') {
    const figures = { expected: text(expected), actual: text(actual), delta: text(delta) };
    if ('refused' in created || 'refused' in reported)
      return check(name, 'UNVERIFIABLE', { ...figures, detail: reasons.join('; ') });
    if (reasons.length === 0 && delta?.isZero()) return check(name, 'MATCHED', figures);
    return check(name, 'WITHIN_TOLERANCE', {
      ...figures,
      detail: [`no swap executed (${status}): fees are not charged as quoted`, ...reasons].join('; '),
    });
  }
  if (status === 'not_final')
    reasons.unshift(`the swap is not final (${input.final.status}); its fees may still change`);

  const direction: FeeDirection | undefined =
    delta === undefined || delta.isZero()
      ? undefined
      : delta.gt(0) === (UP_IS[kind] === 'disfavour')
        ? 'disfavour'
        : 'favour';
  const tolerance = direction ? policy[direction] : undefined;
  const relative =
    tolerance && expected ? exactly(() => exactProduct(expected, tolerance.relative), reasons) : undefined;
  const allowance = tolerance && relative ? Decimal.max(tolerance.absolute, relative) : undefined;
  const figures = {
    expected: text(expected),
    actual: text(actual),
    delta: text(delta),
    tolerance: text(allowance),
  };
  if (reasons.length > 0 || !delta)
    return check(name, 'UNVERIFIABLE', { ...figures, detail: [...reasons, ...notes].join('; ') || null });
  if (!direction) return check(name, 'MATCHED', { ...figures, detail: notes.join('; ') || null });
  if (!tolerance || !allowance)
    return check(name, 'UNVERIFIABLE', { ...figures, detail: 'the allowance was not computed exactly' });
  const moved = `${delta.gt(0) ? 'up' : 'down'} ${formatDecimal(delta.abs())}, in the platform's ${direction}`;
  const rule = `${direction} tolerance: the larger of ${formatDecimal(tolerance.absolute)} and ${formatDecimal(tolerance.relative)} × the creation figure`;
  const verdict: Verdict = delta.abs().lte(allowance) ? 'WITHIN_TOLERANCE' : 'MISMATCH';
  return check(name, verdict, {
    ...figures,
    detail: [`${moved}; ${verdict === 'MISMATCH' ? 'beyond the' : 'within the'} ${rule}`, ...notes].join(
      '; ',
    ),
  });
}

export function precisionNote(unit: Unit): string[] {
  return unit.decimals === undefined
    ? [`no decimals known for ${unit.currency}: the fees' precision is not checked`]
    : [];
}

export function feeCheck(
  kind: FeeKind,
  input: ReconciliationInput,
  status: StatusClass,
  policy: DirectionalTolerance,
): ReconciledCheck {
  const { check: name, field } = FEE_NAMES[kind];
  const unit = destinationUnit(input);
  const created = readMoney(input.creation.fees[field], `${field} at creation`, unit);
  const reported = readMoney(input.final[field], `final ${field}`, unit);
  return feeComparison(name, kind, created, reported, input, status, policy, precisionNote(unit));
}

/** The three final fees together against the three creation fees: catches value moved between fees. */
export function feeSumCheck(
  input: ReconciliationInput,
  status: StatusClass,
  policy: DirectionalTolerance,
): ReconciledCheck {
  const unit = destinationUnit(input);
  const fields = FEE_KINDS.map((kind) => FEE_NAMES[kind].field);
  const created = sumOf(
    fields.map((f) => readMoney(input.creation.fees[f], `${f} at creation`, unit)),
    'the sum of the creation fees',
  );
  const reported = sumOf(
    fields.map((f) => readMoney(input.final[f], `final ${f}`, unit)),
    'the sum of the final fees',
  );
  return feeComparison(FEE_SUM, 'sum', created, reported, input, status, policy, precisionNote(unit));
}
