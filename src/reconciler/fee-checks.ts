import { Decimal, formatDecimal } from '../money/decimal.ts';
import { exactDifference, exactProduct, exactSum } from './exact.ts';
import { FEE_UP_IS } from '../money/tolerance.ts';
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
  readFinalMoney,
  readMoney,
  reasonOf,
  shown,
  text,
  type Outcome,
  type Read,
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
 * REFUNDED and EXPIRED swaps executed no swap: the creation fees were never owed, so the comparison is
 * NOT_APPLICABLE there, its figures shown as reported.
 */
function feeComparison(
  name: string,
  kind: FeeCheckKind,
  created: Read,
  reported: Read,
  input: ReconciliationInput,
  status: Outcome,
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

  if (status === 'REFUNDED' || status === 'EXPIRED')
    return check(name, 'NOT_APPLICABLE', {
      expected: text(expected),
      actual: text(actual),
      detail: `no swap was executed (${status}): fees shown as reported, not judged`,
    });
  if (status === 'open')
    reasons.unshift(`the swap has not ended (${input.final.status}); its fees may still change`);

  const direction: FeeDirection | undefined =
    delta === undefined || delta.isZero()
      ? undefined
      : delta.gt(0) === (FEE_UP_IS[kind] === 'disfavour')
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
  status: Outcome,
  policy: DirectionalTolerance,
): ReconciledCheck {
  const { check: name, field } = FEE_NAMES[kind];
  const unit = destinationUnit(input);
  const created = readMoney(input.creation.fees[field], `${field} at creation`, unit);
  const notes = precisionNote(unit);
  let reported = readFinalMoney(input, field, `final ${field}`, unit);
  if (kind === 'referral') {
    const reading = webhookNetworkFeesReading(input, unit);
    reported = reading.referral;
    if (reading.note) notes.unshift(reading.note);
  }
  return feeComparison(name, kind, created, reported, input, status, policy, notes);
}

/** The three final fees together against the three creation fees: catches value moved between fees. */
export function feeSumCheck(
  input: ReconciliationInput,
  status: Outcome,
  policy: DirectionalTolerance,
): ReconciledCheck {
  const unit = destinationUnit(input);
  const fields = FEE_KINDS.map((kind) => FEE_NAMES[kind].field);
  const created = sumOf(
    fields.map((f) => readMoney(input.creation.fees[f], `${f} at creation`, unit)),
    'the sum of the creation fees',
  );
  const referral = webhookNetworkFeesReading(input, unit).referral;
  const reported = sumOf(
    fields.map((f) => (f === 'referralFees' ? referral : readFinalMoney(input, f, `final ${f}`, unit))),
    'the sum of the final fees',
  );
  return feeComparison(FEE_SUM, 'sum', created, reported, input, status, policy, precisionNote(unit));
}

// ---- the webhook's networkFees ----

/** What the webhook's networkFees says once read (webhookNetworkFeesReading). */
export interface NetworkFeesReading {
  /** The final referral fee to judge: the confirmed referralFees, or what networkFees evidences. */
  readonly referral: Read;
  /** The extra fee beyond the referral fee; missing: none reported. */
  readonly extra: Read;
  /** How networkFees was read, for the checks' detail. */
  readonly note?: string;
}

/**
 * The webhook's networkFees ("referral or extra fee") read by evidence, against the referral fee the partner
 * committed to: the confirmed referralFees, else the creation's, else the quote's. Equal: it is the referral
 * fee. Above: the referral fee plus an extra fee (the excess). Below: the referral fee, cut (fee.referral
 * judges it). A confirmed referralFees is never replaced by a larger reading: the lower one is judged.
 * Without a networkFees read by evidence (a poll, an override, an event from before), the swap's own
 * referralFees and extraFees are the figures.
 */
export function webhookNetworkFeesReading(input: ReconciliationInput, unit: Unit): NetworkFeesReading {
  const confirmed = readFinalMoney(input, 'referralFees', 'final referralFees', unit);
  const sent = readMoney(input.final.webhookNetworkFees, "the webhook's networkFees", unit);
  if ('missing' in sent)
    return { referral: confirmed, extra: readMoney(input.final.extraFees, 'extra fee reported', unit) };
  if (!('value' in sent) || 'imprecise' in sent) return { referral: confirmed, extra: sent };
  const clean = (r: Read): Decimal | undefined => ('value' in r && !('imprecise' in r) ? r.value : undefined);
  const candidates: [string, Read][] = [
    ['the confirmed referralFees', confirmed],
    ["the creation's referralFees", readMoney(input.creation.fees.referralFees, 'referralFees', unit)],
    ["the quote's referralFees", readMoney(input.creation.quote?.referralFees, 'referralFees', unit)],
  ];
  const committed = candidates.find(([, r]) => clean(r) !== undefined);
  const said = `the webhook's networkFees ${formatDecimal(sent.value)}`;
  if (!committed)
    return {
      referral: confirmed,
      extra: { refused: true, reason: `${said}: no referral fee is known to read it against` },
    };
  const [source, read] = committed;
  const referral = clean(read)!;
  const against = `${source} ${formatDecimal(referral)}`;
  // An unreadable confirmed figure stays unreadable: fee.referral is then UNVERIFIABLE, never a guess.
  const referralRead = (value: Decimal): Read =>
    'missing' in confirmed || clean(confirmed) ? { value } : confirmed;
  if (sent.value.eq(referral))
    return {
      referral: referralRead(sent.value),
      extra: { value: new Decimal(0) },
      note: `${said} equals ${against}: it is the referral fee`,
    };
  if (sent.value.gt(referral))
    return {
      referral: referralRead(referral),
      extra: { value: sent.value.minus(referral) },
      note: `${said} is above ${against}: the referral fee plus an extra fee of ${formatDecimal(sent.value.minus(referral))}`,
    };
  return {
    referral: referralRead(sent.value),
    extra: { value: new Decimal(0) },
    note: `${said} is below ${against}: the referral fee, cut`,
  };
}

/**
 * The extra fee: the part of the webhook's networkFees above the referral fee (read by evidence), or its
 * networkFees whole under a provider's `extra` override. A fee no creation figure has, so any above zero is
 * the platform's disfavour beyond an exact creation figure of none (like fee.sum, up). None reported:
 * NOT_APPLICABLE. Refunds and expiries: shown as reported.
 */
export function extraFeeCheck(input: ReconciliationInput, status: Outcome): ReconciledCheck {
  const name = 'fee.extra';
  const reading = webhookNetworkFeesReading(input, destinationUnit(input));
  const reported = reading.extra;
  const detail = reading.note;
  if ('missing' in reported)
    return check(name, 'NOT_APPLICABLE', { expected: 'none', actual: 'none reported' });
  const actual = text(shown(reported));
  if (!('value' in reported) || 'imprecise' in reported)
    return check(name, 'UNVERIFIABLE', { expected: '0', actual, detail: reasonOf(reported) });
  if (reported.value.isZero()) return check(name, 'MATCHED', { expected: '0', actual, detail });
  if (status !== 'FINISHED')
    return check(name, 'NOT_APPLICABLE', {
      expected: '0',
      actual,
      detail: [
        `an extra fee reported on a ${input.final.status} swap: shown as reported, not judged`,
        ...(detail ? [detail] : []),
      ].join('; '),
    });
  return check(name, 'MISMATCH', {
    expected: '0',
    actual,
    delta: actual,
    detail: detail ?? `the partner reported an extra fee of ${actual} that no creation or signed figure has`,
  });
}
