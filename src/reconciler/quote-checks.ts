import { Decimal, formatDecimal } from '../money/decimal.ts';
import { signedAmount } from './amount-checks.ts';
import { exactDifference, exactProduct, exactSum } from './exact.ts';
import { check, destinationUnit, exactly, readMoney, reasonOf, shown, text, type Outcome } from './inputs.ts';
import { DEFAULT_QUOTE_BANDS, type ReconciliationPolicy } from './policy.ts';
import type { FeeFigures, ReconciledCheck, ReconciliationInput, Verdict } from './types.ts';

/**
 * The quote is part of the contract (DESIGN "Reconciliation rules"): a swap made from a quote is judged
 * against it too. The signed amount_to_wallet against the quoted amountTo + quoted payout network fee, and
 * each creation fee against the quoted one, directionally (provider and network fee up, referral down: the
 * disfavour). A fixed quote is a promise (band 0 by default), a float one an estimate (a configured band).
 */

export const QUOTE_AMOUNT_TO = 'quote.amount_to';
const QUOTE_FEES: readonly { name: string; field: keyof FeeFigures; upIs: 'favour' | 'disfavour' }[] = [
  { name: 'quote.fee.provider', field: 'providerFees', upIs: 'disfavour' },
  { name: 'quote.fee.referral', field: 'referralFees', upIs: 'favour' },
  { name: 'quote.fee.payout_network', field: 'payoutNetworkFees', upIs: 'disfavour' },
];
export const QUOTE_CHECK_NAMES: readonly string[] = [QUOTE_AMOUNT_TO, ...QUOTE_FEES.map((f) => f.name)];

/** Why no quote check is made for this swap, or undefined when they are. */
function notJudged(input: ReconciliationInput, outcome: Outcome): string | undefined {
  const quote = input.creation.quote;
  if (!quote || quote.amountTo === undefined || quote.amountTo === null)
    return 'the swap was not made from a recorded quote';
  if (outcome === 'REFUNDED' || outcome === 'EXPIRED')
    return `no swap was executed (${outcome}): the quoted terms were never delivered`;
  return undefined;
}

interface Compared {
  expected: Decimal;
  actual: Decimal;
  /** actual − expected. */
  delta: Decimal;
}

/**
 * One directional comparison: equal is MATCHED; a move in the favour side is WITHIN_TOLERANCE; in the
 * disfavour side, within band × expected is WITHIN_TOLERANCE, beyond it MISMATCH.
 */
function judge(
  name: string,
  c: Compared,
  upIs: 'favour' | 'disfavour',
  band: Decimal,
  method: string,
  whose: string,
  notes: string[],
): ReconciledCheck {
  const figures = { expected: text(c.expected), actual: text(c.actual), delta: text(c.delta) };
  if (c.delta.isZero()) return check(name, 'MATCHED', { ...figures, detail: notes.join('; ') || undefined });
  const direction = c.delta.gt(0) === (upIs === 'disfavour') ? 'disfavour' : 'favour';
  const moved = `${c.delta.gt(0) ? 'above' : 'below'} the quote by ${formatDecimal(c.delta.abs())}, in ${whose} ${direction}`;
  if (direction === 'favour')
    return check(name, 'WITHIN_TOLERANCE', { ...figures, detail: [moved, ...notes].join('; ') });
  const reasons: string[] = [];
  const allowance = exactly(() => exactProduct(c.expected, band), reasons);
  if (!allowance)
    return check(name, 'UNVERIFIABLE', { ...figures, detail: [...reasons, ...notes].join('; ') });
  const verdict: Verdict = c.delta.abs().lte(allowance) ? 'WITHIN_TOLERANCE' : 'MISMATCH';
  return check(name, verdict, {
    ...figures,
    tolerance: text(allowance),
    detail: [
      `${moved}; ${verdict === 'MISMATCH' ? 'beyond' : 'within'} the ${method} quote band of ${formatDecimal(band)} × the quoted figure`,
      ...notes,
    ].join('; '),
  });
}

function bandOf(policy: ReconciliationPolicy, method: string): Decimal {
  const bands = policy.quote ?? DEFAULT_QUOTE_BANDS;
  return method === 'float' ? bands.float : bands.fixed;
}

/** The signed amount_to_wallet against the quoted amountTo + quoted payout network fee (user's disfavour: below). */
function amountToCheck(input: ReconciliationInput, band: Decimal, method: string): ReconciledCheck {
  const quote = input.creation.quote!;
  const unit = destinationUnit(input);
  const reasons: string[] = [];
  const notes: string[] = [];
  const signed = signedAmount(input, unit, reasons, notes);
  const quotedTo = readMoney(quote.amountTo, "the quote's amountTo", unit);
  const quotedFee = readMoney(quote.payoutNetworkFees, "the quote's payoutNetworkFees", unit);
  for (const read of [quotedTo, quotedFee]) {
    const reason = reasonOf(read);
    if (reason) reasons.push(reason);
  }
  const to = shown(quotedTo);
  const fee = shown(quotedFee);
  const expected = to && fee ? exactly(() => exactSum(to, fee), reasons) : undefined;
  if (to && fee)
    notes.push(
      `expected = quoted amountTo ${formatDecimal(to)} + quoted payout network fee ${formatDecimal(fee)}; actual = signed amount_to_wallet`,
    );
  const requested = input.creation.request.amountFrom;
  if (method === 'float' && requested && quote.amountFrom && requested !== quote.amountFrom) {
    const a = readMoney(requested, 'the requested amount', { currency: '', decimals: undefined });
    const b = readMoney(quote.amountFrom, "the quote's amount", { currency: '', decimals: undefined });
    if (!('value' in a) || !('value' in b) || !a.value.eq(b.value))
      reasons.push(
        `the swap asked to swap ${requested}, the quote was for ${quote.amountFrom}: its output is not the quote's`,
      );
  }
  const delta = expected && signed ? exactly(() => exactDifference(signed, expected), reasons) : undefined;
  if (reasons.length > 0 || !expected || !signed || !delta)
    return check(QUOTE_AMOUNT_TO, 'UNVERIFIABLE', {
      expected: text(expected),
      actual: text(signed),
      delta: text(delta),
      detail: [...reasons, ...notes].join('; '),
    });
  // Below the quote is the user's disfavour: "up is favour".
  return judge(
    QUOTE_AMOUNT_TO,
    { expected, actual: signed, delta },
    'favour',
    band,
    method,
    "the user's",
    notes,
  );
}

/** A creation fee against the quoted one. */
function feeCheck(
  input: ReconciliationInput,
  fee: (typeof QUOTE_FEES)[number],
  band: Decimal,
  method: string,
): ReconciledCheck {
  const unit = destinationUnit(input);
  const quoted = readMoney(input.creation.quote![fee.field], `the quote's ${fee.field}`, unit);
  const created = readMoney(input.creation.fees[fee.field], `${fee.field} at creation`, unit);
  const reasons = [quoted, created].map(reasonOf).filter((r): r is string => r !== undefined);
  const expected = shown(quoted);
  const actual = shown(created);
  const delta = expected && actual ? exactly(() => exactDifference(actual, expected), reasons) : undefined;
  if (reasons.length > 0 || !expected || !actual || !delta)
    return check(fee.name, 'UNVERIFIABLE', {
      expected: text(expected),
      actual: text(actual),
      delta: text(delta),
      detail: reasons.join('; '),
    });
  return judge(fee.name, { expected, actual, delta }, fee.upIs, band, method, "the platform's", [
    `expected = the quote's ${fee.field}; actual = the creation's`,
  ]);
}

/**
 * The quote's checks, in a stable order: quote.amount_to, quote.fee.provider, quote.fee.referral,
 * quote.fee.payout_network. NOT_APPLICABLE (each, with the reason) for a swap with no recorded quote, or an
 * outcome that delivered nothing.
 */
export function quoteChecks(
  input: ReconciliationInput,
  outcome: Outcome,
  policy: ReconciliationPolicy,
): ReconciledCheck[] {
  const why = notJudged(input, outcome);
  if (why) return QUOTE_CHECK_NAMES.map((name) => check(name, 'NOT_APPLICABLE', { detail: why }));
  const method = input.creation.tradeMethod;
  const band = bandOf(policy, method);
  return [amountToCheck(input, band, method), ...QUOTE_FEES.map((fee) => feeCheck(input, fee, band, method))];
}
