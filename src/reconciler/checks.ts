import type { SwapReconciled } from '../events/types.ts';
import { atomicToDecimal } from '../money/atomic.ts';
import { currencyDecimals } from '../money/currencies.ts';
import { Decimal, DecimalFormatError, formatDecimal, parseNonNegativeDecimal } from '../money/decimal.ts';
import type { Finding, PayloadInspection } from '../payload/index.ts';
import { exactDifference, exactProduct, exactSum, InexactArithmeticError } from './exact.ts';
import {
  assertReconciliationPolicy,
  FEE_KINDS,
  type DirectionalTolerance,
  type FeeCheckKind,
  type FeeDirection,
  type FeeKind,
  type ReconciliationPolicy,
} from './policy.ts';
import {
  ReconciliationInputError,
  worstVerdict,
  type FeeFigures,
  type ReconciledCheck,
  type ReconciliationInput,
  type ReconciliationResult,
  type StatusConflict,
  type Verdict,
} from './types.ts';

/**
 * The reconciler's pure core: what the partner signed at creation against what it reported at the
 * final status. No I/O, no clock: the same input gives the same checks, so a verdict can be
 * recomputed and audited. Signature verification (async) is done before, by inspectSwapPayload.
 */

/** The final statuses the partner interface and the issue give rules for. */
export const FINISHED = 'FINISHED';
export const REFUNDED = 'REFUNDED';
export const EXPIRED = 'EXPIRED';
const RULED_STATUSES: readonly string[] = [FINISHED, REFUNDED, EXPIRED];

type StatusClass = 'FINISHED' | 'REFUNDED' | 'EXPIRED' | 'not_final' | 'unruled_final';

function classify(status: string, final: boolean): StatusClass {
  if (!final) return 'not_final';
  return RULED_STATUSES.includes(status) ? (status as StatusClass) : 'unruled_final';
}

interface CheckFields {
  expected?: string | null | undefined;
  actual?: string | null | undefined;
  delta?: string | null | undefined;
  tolerance?: string | null | undefined;
  detail?: string | null | undefined;
}

function check(name: string, verdict: Verdict, f: CheckFields = {}): ReconciledCheck {
  return {
    name,
    verdict,
    expected: f.expected ?? null,
    actual: f.actual ?? null,
    delta: f.delta ?? null,
    tolerance: f.tolerance ?? null,
    detail: f.detail ?? null,
  };
}

/** Runs an exact operation; a result that would need rounding becomes a reason, not a number. */
function exactly(op: () => Decimal, reasons: string[]): Decimal | undefined {
  try {
    return op();
  } catch (e) {
    if (!(e instanceof InexactArithmeticError)) throw e;
    reasons.push(e.message);
    return undefined;
  }
}

const text = (d: Decimal | undefined): string | undefined => (d === undefined ? undefined : formatDecimal(d));

// ---- reading inputs ----

type Read =
  | { value: Decimal }
  | { missing: true; reason: string }
  | { refused: true; reason: string }
  | { imprecise: true; value: Decimal; reason: string };

/** Money as decimal text. A JS number or any non-text is a caller bug and throws; bad text is refused. */
function readAmount(value: unknown, what: string): Read {
  if (value === null || value === undefined) return { missing: true, reason: `no ${what} reported` };
  if (typeof value !== 'string')
    throw new ReconciliationInputError(
      `${what} must be decimal text or null, got ${typeof value}: money never passes through a JS number`,
    );
  if (value.trim() === '') return { missing: true, reason: `no ${what} reported` };
  try {
    return { value: parseNonNegativeDecimal(value) };
  } catch (e) {
    if (e instanceof DecimalFormatError) return { refused: true, reason: `${what} refused: ${e.message}` };
    throw e;
  }
}

/** The decimals of the destination currency, which the final amount and the fees are in. */
interface Unit {
  readonly currency: string;
  /** Undefined: not known, so a figure's precision cannot be checked. */
  readonly decimals: number | undefined;
}

function destinationUnit(input: ReconciliationInput): Unit {
  const currency = input.creation.request.payloadCurrencyTo;
  return { currency, decimals: (input.magnitudes ?? currencyDecimals)(currency) };
}

/**
 * A figure with more decimal places than its currency has is not a whole number of atomic units:
 * comparing it would need rounding, so its comparison is UNVERIFIABLE (never rounded).
 */
function readMoney(value: unknown, what: string, unit: Unit): Read {
  const read = readAmount(value, what);
  if (!('value' in read) || unit.decimals === undefined) return read;
  const places = read.value.decimalPlaces();
  if (places <= unit.decimals) return read;
  return {
    imprecise: true,
    value: read.value,
    reason: `${what} ${formatDecimal(read.value)} has ${places} decimal places, more than ${unit.currency}'s ${unit.decimals}: comparing it would need rounding, so it is not judged`,
  };
}

const usable = (read: Read): Decimal | undefined =>
  'value' in read && !('imprecise' in read) ? read.value : undefined;
const shown = (read: Read): Decimal | undefined => ('value' in read ? read.value : undefined);
const reasonOf = (read: Read): string | undefined => ('reason' in read ? read.reason : undefined);

function readText(value: unknown, what: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'string')
    throw new ReconciliationInputError(`${what} must be text or null, got ${typeof value}`);
  return value.trim() === '' ? undefined : value;
}

type SlippageSource = 'request slippage' | 'quote defaultSlippage' | 'provider default slippage';
type Slippage = { ratio: Decimal; source: SlippageSource } | { none: true } | { refused: string };

/**
 * The request's slippage, else the quote's defaultSlippage, else (float only: a fixed swap's output
 * was agreed, not estimated) the provider's configured default, else none. An invalid one is not skipped.
 */
function agreedSlippage(input: ReconciliationInput, method: string): Slippage {
  const candidates: [SlippageSource, unknown][] = [
    ['request slippage', input.creation.request.slippage],
    ['quote defaultSlippage', input.creation.quote?.defaultSlippage],
  ];
  if (method === 'float') candidates.push(['provider default slippage', input.providerDefaultSlippage]);
  for (const [source, raw] of candidates) {
    const read = readAmount(raw, source);
    if ('missing' in read) continue;
    if ('refused' in read) return { refused: read.reason };
    if (read.value.gt(1)) return { refused: `${source} ${String(raw)} is not a ratio from 0 to 1` };
    return { ratio: read.value, source };
  }
  return { none: true };
}

// ---- signature and payload ----

const FINDING_VERDICT: Record<string, Verdict> = {
  ok: 'MATCHED',
  mismatch: 'MISMATCH',
  violation: 'MISMATCH',
  unverifiable: 'UNVERIFIABLE',
};

function findingCheck(f: Finding): ReconciledCheck {
  const verdict = FINDING_VERDICT[f.outcome];
  if (!verdict)
    return check(f.check, 'UNVERIFIABLE', {
      expected: f.expected,
      actual: f.actual,
      detail: `unknown finding outcome ${JSON.stringify(f.outcome)}${f.detail ? `: ${f.detail}` : ''}`,
    });
  return check(f.check, verdict, { expected: f.expected, actual: f.actual, detail: f.detail });
}

// Findings that prove the partner's signature wrong whatever key we hold.
const PARTNER_SIDE = new Set([
  'signature.field',
  'signature.encoding',
  'signature.verify',
  'signature.key_rotation',
]);

/**
 * MATCHED when a key valid at createdAt verifies it; MISMATCH when the signature is missing,
 * malformed or does not verify; UNVERIFIABLE when no usable key was there to try.
 */
function signatureCheck(inspection: PayloadInspection, createdAt: string): ReconciledCheck {
  const expected = `a valid signature by a partner key valid at ${createdAt}`;
  if (inspection.signatureValid)
    return check('signature.valid', 'MATCHED', {
      expected,
      actual: `verified by key ${inspection.keyId ?? '(unnamed)'}`,
    });
  const wrong = inspection.findings.filter(
    (f) => PARTNER_SIDE.has(f.check) && (f.outcome === 'violation' || f.outcome === 'mismatch'),
  );
  if (wrong.length > 0)
    return check('signature.valid', 'MISMATCH', {
      expected,
      actual: 'does not verify',
      detail: wrong.map((f) => (f.detail ? `${f.check}: ${f.detail}` : f.check)).join('; '),
    });
  const keyProblems = inspection.findings.filter(
    (f) => (f.check === 'signature.key_window' || f.check === 'signature.key') && f.outcome !== 'ok',
  );
  return check('signature.valid', 'UNVERIFIABLE', {
    expected,
    actual: 'not verified',
    detail:
      keyProblems.length > 0
        ? `no usable key: ${keyProblems.map((f) => f.detail ?? f.check).join('; ')}`
        : 'no usable key',
  });
}

// ---- amounts ----

const USER_SIDE = 'amount.to_wallet';
const PARTNER_SIDE_SUM = 'amount.partner_side';

type Side = 'user' | 'partner';

/** Why an amount check is not made at this status, or undefined when it is (FINISHED). */
function amountNotApplicable(input: ReconciliationInput, status: StatusClass): string | undefined {
  if (status === 'REFUNDED' || status === 'EXPIRED')
    return `the interface defines no amount to the wallet for a ${status === 'REFUNDED' ? 'refund' : 'expiry'}; nothing is guessed`;
  if (status === 'not_final')
    return `the swap is not final (${input.final.status}); its final amount is not known`;
  if (status === 'unruled_final')
    return `the interface defines no amount rule for final status ${input.final.status}`;
  return undefined;
}

/** The signed amount_to_wallet as a decimal of the destination currency, or why there is none. */
function signedAmount(input: ReconciliationInput, unit: Unit, reasons: string[], notes: string[]) {
  const { inspection } = input;
  const decoded = inspection.decoded;
  if (!decoded) {
    const why = inspection.findings.find((f) => f.check === 'payload.decode' && f.outcome !== 'ok')?.detail;
    reasons.push(`the signed payload does not decode${why ? ` (${why})` : ''}: no signed amount_to_wallet`);
    return undefined;
  }
  if (decoded.currency_to !== unit.currency) {
    reasons.push(
      `the payload signs currency_to ${JSON.stringify(decoded.currency_to)}, the request asked for ${JSON.stringify(unit.currency)}: the signed amount is in another currency's units`,
    );
    return undefined;
  }
  if (unit.decimals === undefined) {
    reasons.push(`no decimals known for platform currency ${JSON.stringify(unit.currency)}`);
    return undefined;
  }
  notes.push(
    `signed amount_to_wallet ${decoded.amount_to_wallet} atomic units of ${unit.currency} (${unit.decimals} decimals)`,
  );
  // A payload whose signature does not verify carries a claim, not a signed amount.
  if (!inspection.signatureValid)
    reasons.push(
      'the signature does not verify: amount_to_wallet is not proven signed; figures shown unproven',
    );
  return atomicToDecimal(decoded.amount_to_wallet, unit.decimals);
}

interface Judgement {
  verdict: Verdict;
  outcome: string;
}

/**
 * The slippage rule, `delta` = actual − expected. fixed: at least expected × (1 − slippage), above is
 * never a MISMATCH. float: within ± expected × slippage; above beyond it is a gain to the user, never
 * a MISMATCH; below beyond it is. A float swap with no slippage agreed cannot be judged below expected.
 * `above` words what an excess means for this check.
 */
function judgeSlippage(
  method: 'fixed' | 'float',
  delta: Decimal,
  tolerance: Decimal | undefined,
  above: string,
): Judgement {
  const by = formatDecimal(delta.abs());
  if (delta.isZero()) return { verdict: 'MATCHED', outcome: 'equal to the expected amount' };
  if (delta.gt(0)) {
    if (method === 'fixed')
      return { verdict: 'WITHIN_TOLERANCE', outcome: `fixed: ${by} above the expected amount, ${above}` };
    if (tolerance !== undefined && delta.lte(tolerance))
      return {
        verdict: 'WITHIN_TOLERANCE',
        outcome: `float: ${by} above the expected amount, within the slippage`,
      };
    return {
      verdict: 'WITHIN_TOLERANCE',
      outcome: `float: ${by} above the expected amount${tolerance === undefined ? '' : ', beyond the slippage'}, ${above}: never a mismatch`,
    };
  }
  if (tolerance === undefined)
    return {
      verdict: 'UNVERIFIABLE',
      outcome: `float: ${by} below the expected amount and no slippage agreed for a float swap: a shortfall cannot be told from a rate change`,
    };
  if (delta.abs().lte(tolerance))
    return {
      verdict: 'WITHIN_TOLERANCE',
      outcome: `${method}: ${by} short of the expected amount, within the slippage`,
    };
  return {
    verdict: 'MISMATCH',
    outcome: `${method}: ${by} short of the expected amount, more than the slippage allows`,
  };
}

/**
 * FINISHED only. The signed amount_to_wallet (atomic units of payloadCurrencyTo, payout network fee
 * included) sets what each side must show:
 * - user side (`amount.to_wallet`): the final `amount` ALONE against signed − the payout network fee
 *   ESTIMATE given at creation. A network fee charged above its estimate is therefore a shortfall to
 *   the user, never "in the user's favour".
 * - partner side (`amount.partner_side`): final amount + final payoutNetworkFees against the signed
 *   amount: what the partner accounts for. Value moved from amount to network fee passes here and
 *   fails the user side; that is why both exist.
 */
function amountCheck(side: Side, input: ReconciliationInput, status: StatusClass): ReconciledCheck {
  const name = side === 'user' ? USER_SIDE : PARTNER_SIDE_SUM;
  const notApplicable = amountNotApplicable(input, status);
  if (notApplicable) return check(name, 'UNVERIFIABLE', { detail: notApplicable });

  const { creation, final } = input;
  const reasons: string[] = [];
  const notes: string[] = [];
  const unit = destinationUnit(input);
  const signed = signedAmount(input, unit, reasons, notes);

  const amount = readMoney(final.amount, 'final amount', unit);
  const other =
    side === 'user'
      ? readMoney(creation.fees.payoutNetworkFees, 'payout network fee estimate at creation', unit)
      : readMoney(final.payoutNetworkFees, 'final payoutNetworkFees', unit);
  for (const read of [amount, other]) {
    const reason = reasonOf(read);
    if (reason) reasons.push(reason);
  }

  let expected: Decimal | undefined;
  let actual: Decimal | undefined;
  if (side === 'user') {
    actual = shown(amount);
    const estimate = shown(other);
    if (signed && estimate) {
      expected = exactly(() => exactDifference(signed, estimate), reasons);
      notes.push(
        `expected = signed ${formatDecimal(signed)} − payout network fee estimate at creation ${formatDecimal(estimate)}; actual = final amount alone`,
      );
      if (expected?.isNegative())
        reasons.push(
          `the payout network fee estimate ${formatDecimal(estimate)} exceeds the signed amount_to_wallet ${formatDecimal(signed)}: no amount to the wallet follows`,
        );
    }
  } else {
    expected = signed;
    const amountValue = shown(amount);
    const feeValue = shown(other);
    if (amountValue && feeValue) {
      actual = exactly(() => exactSum(amountValue, feeValue), reasons);
      notes.push(
        `actual = final amount ${formatDecimal(amountValue)} + final payoutNetworkFees ${formatDecimal(feeValue)}`,
      );
    }
  }

  const method = creation.tradeMethod;
  if (method !== 'fixed' && method !== 'float')
    reasons.push(`trade method ${JSON.stringify(method)} is neither fixed nor float`);
  const slippage = agreedSlippage(input, method);
  let ratio: Decimal | undefined;
  if ('refused' in slippage) reasons.push(slippage.refused);
  else if ('none' in slippage) {
    // Fixed: the output was agreed, so no slippage means exact. Float: it was only estimated.
    if (method === 'fixed') ratio = new Decimal(0);
    notes.push(
      method === 'fixed'
        ? 'no slippage agreed (neither request slippage nor quote defaultSlippage): at least the expected amount required'
        : 'no slippage agreed (request, quote or provider default): above the expected amount is a gain, below cannot be judged',
    );
  } else {
    ratio = slippage.ratio;
    notes.push(`slippage ${formatDecimal(slippage.ratio)} from the ${slippage.source}`);
  }

  const delta = expected && actual ? exactly(() => exactDifference(actual, expected), reasons) : undefined;
  const tolerance = expected && ratio ? exactly(() => exactProduct(expected, ratio), reasons) : undefined;
  const figures = {
    expected: text(expected),
    actual: text(actual),
    delta: text(delta),
    tolerance: text(tolerance),
  };
  const slippageKnown = 'none' in slippage || tolerance !== undefined;
  if (
    reasons.length > 0 ||
    !expected ||
    !actual ||
    !delta ||
    !slippageKnown ||
    (method !== 'fixed' && method !== 'float')
  )
    return check(name, 'UNVERIFIABLE', { ...figures, detail: [...reasons, ...notes].join('; ') });

  const above = side === 'user' ? "in the user's favour" : 'more than signed';
  const { verdict, outcome } = judgeSlippage(method, delta, tolerance, above);
  return check(name, verdict, { ...figures, detail: [outcome, ...notes].join('; ') });
}

// ---- fees ----

const FEE_NAMES: Record<FeeKind, { check: string; field: keyof FeeFigures }> = {
  provider: { check: 'fee.provider', field: 'providerFees' },
  referral: { check: 'fee.referral', field: 'referralFees' },
  payoutNetwork: { check: 'fee.payout_network', field: 'payoutNetworkFees' },
};
const FEE_SUM = 'fee.sum';

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

function precisionNote(unit: Unit): string[] {
  return unit.decimals === undefined
    ? [`no decimals known for ${unit.currency}: the fees' precision is not checked`]
    : [];
}

function feeCheck(
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
function feeSumCheck(
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

// ---- transaction hashes ----

type Presence = 'present' | 'absent';
const HASH_RULES: Record<'FINISHED' | 'REFUNDED' | 'EXPIRED', { payin: Presence; payout: Presence }> = {
  FINISHED: { payin: 'present', payout: 'present' },
  REFUNDED: { payin: 'present', payout: 'absent' },
  EXPIRED: { payin: 'absent', payout: 'absent' },
};

function hashCheck(
  which: 'payin' | 'payout',
  input: ReconciliationInput,
  status: StatusClass,
): ReconciledCheck {
  const name = `hash.${which}`;
  const value = readText(
    which === 'payin' ? input.final.payinTransactionId : input.final.payoutTransactionId,
    `${which}TransactionId`,
  );
  const actual = value ?? 'absent';
  if (status === 'not_final')
    return check(name, 'UNVERIFIABLE', {
      actual,
      detail: `the swap is not final (${input.final.status}); its transactions may still change`,
    });
  if (status === 'unruled_final')
    return check(name, 'UNVERIFIABLE', {
      actual,
      detail: `no transaction rule for final status ${input.final.status}`,
    });
  const expected = HASH_RULES[status][which];
  const ok = (value !== undefined) === (expected === 'present');
  return check(name, ok ? 'MATCHED' : 'MISMATCH', {
    expected,
    actual,
    detail: ok
      ? undefined
      : `${status}: ${expected === 'present' ? 'a' : 'no'} ${which} transaction expected`,
  });
}

function statusCheck(input: ReconciliationInput, status: StatusClass): ReconciledCheck {
  const expected = `${RULED_STATUSES.join(', ')} and final`;
  const actual = `${input.final.status}${input.final.final ? ' and final' : ', not final'}`;
  if (status === 'not_final')
    return check('status.final', 'UNVERIFIABLE', {
      expected,
      actual,
      detail: 'only final swaps are reconciled: there is no final report to compare yet',
    });
  if (status === 'unruled_final')
    return check('status.final', 'UNVERIFIABLE', {
      expected,
      actual,
      detail: `the partner interface gives no reconciliation rules for final status ${input.final.status}`,
    });
  return check('status.final', 'MATCHED', { expected, actual });
}

/**
 * A refund may carry its transaction (refundTransactionId, separate from the payout). Informational,
 * never failing: present is MATCHED, absent is MATCHED saying so. hash.payout still expects no payout
 * on a refund.
 */
function refundHashCheck(input: ReconciliationInput, status: StatusClass): ReconciledCheck {
  const value = readText(input.final.refundTransactionId, 'refundTransactionId');
  const actual = value ?? 'absent';
  if (status === 'REFUNDED')
    return check('hash.refund', 'MATCHED', {
      expected: 'present or absent (informational)',
      actual,
      detail: value === undefined ? 'no refund hash reported' : undefined,
    });
  return check('hash.refund', 'MATCHED', {
    expected: 'absent (informational)',
    actual,
    detail:
      value === undefined
        ? undefined
        : `a refund transaction reported on a ${input.final.status} swap (a partial refund?): informational`,
  });
}

/**
 * Reports that contradicted the final state after the swap became final: any one is a MISMATCH
 * (the partner said two things about a settled swap), listed with the event that carried it.
 */
function conflictCheck(input: ReconciliationInput): ReconciledCheck {
  const conflicts = input.conflicts ?? [];
  if (conflicts.length === 0)
    return check('status.conflict', 'MATCHED', {
      expected: 'no report contradicting the final state',
      actual: 'none',
    });
  const value = (v: string | null) => (v === null ? 'absent' : v);
  return check('status.conflict', 'MISMATCH', {
    expected: conflicts.map((c) => `${c.field}=${value(c.finalValue)}`).join('; '),
    actual: conflicts.map((c) => `${c.field}=${value(c.reportedValue)}`).join('; '),
    detail: `${conflicts.length} report(s) contradicted the final state: ${conflicts
      .map(
        (c) =>
          `${c.field} ${value(c.reportedValue)} (final ${value(c.finalValue)}) by ${c.source}, event ${c.eventId}`,
      )
      .join('; ')}`,
  });
}

function assertInput(input: ReconciliationInput): void {
  if (!input || typeof input !== 'object') throw new ReconciliationInputError('input must be an object');
  for (const part of ['creation', 'final', 'inspection'] as const)
    if (!input[part] || typeof input[part] !== 'object')
      throw new ReconciliationInputError(`input.${part} is missing`);
  if (typeof input.final.status !== 'string' || typeof input.final.final !== 'boolean')
    throw new ReconciliationInputError('final.status must be text and final.final a boolean');
  if (!Array.isArray(input.inspection.findings) || typeof input.inspection.signatureValid !== 'boolean')
    throw new ReconciliationInputError('inspection must be a PayloadInspection');
  if (!input.creation.request || !input.creation.fees)
    throw new ReconciliationInputError('creation.request and creation.fees are required');
  assertConflicts(input.conflicts);
}

function assertConflicts(
  conflicts: unknown,
): asserts conflicts is readonly StatusConflict[] | null | undefined {
  if (conflicts === null || conflicts === undefined) return;
  if (!Array.isArray(conflicts)) throw new ReconciliationInputError('conflicts must be a list or null');
  conflicts.forEach((c: Partial<Record<keyof StatusConflict, unknown>>, i) => {
    if (!c || typeof c !== 'object') throw new ReconciliationInputError(`conflicts[${i}] must be an object`);
    for (const key of ['field', 'eventId', 'source'] as const)
      if (typeof c[key] !== 'string' || c[key] === '')
        throw new ReconciliationInputError(`conflicts[${i}].${key} must be non-empty text`);
    for (const key of ['finalValue', 'reportedValue'] as const)
      if (c[key] !== null && typeof c[key] !== 'string')
        throw new ReconciliationInputError(`conflicts[${i}].${key} must be text or null`);
  });
}

/**
 * Every check of one swap, in this stable order (documented in the README; consumers may rely on it):
 *  1. status.final
 *  2. signature.valid, then the inspection's findings (signature.*, payload.*, device.*) as given
 *  3. amount.to_wallet (user side: final amount alone vs signed − creation network fee estimate)
 *  4. amount.partner_side (final amount + final network fee vs signed)
 *  5. fee.provider, fee.referral, fee.payout_network, fee.sum (directional tolerances)
 *  6. hash.payin, hash.payout, hash.refund (informational)
 *  7. status.conflict (reports contradicting the final state)
 * The verdict is the worst check's (VERDICT_ORDER).
 * Throws ReconciliationInputError or ReconciliationPolicyError for a caller's mistake only.
 */
export function reconcileSwap(
  input: ReconciliationInput,
  policy: ReconciliationPolicy,
): ReconciliationResult {
  assertInput(input);
  assertReconciliationPolicy(policy);
  const status = classify(input.final.status, input.final.final);
  const checks: ReconciledCheck[] = [
    statusCheck(input, status),
    signatureCheck(input.inspection, input.creation.createdAt),
    ...input.inspection.findings.map(findingCheck),
    amountCheck('user', input, status),
    amountCheck('partner', input, status),
    ...FEE_KINDS.map((kind) => feeCheck(kind, input, status, policy.fees[kind])),
    feeSumCheck(input, status, policy.fees.sum),
    hashCheck('payin', input, status),
    hashCheck('payout', input, status),
    refundHashCheck(input, status),
    conflictCheck(input),
  ];
  return { verdict: worstVerdict(checks.map((c) => c.verdict)), checks };
}

/** The SwapReconciled payload for a result, based on the event that queued the swap. */
export function toSwapReconciled(result: ReconciliationResult, basedOnEventId: string): SwapReconciled {
  return { verdict: result.verdict, basedOnEventId, checks: result.checks.map((c) => ({ ...c })) };
}
