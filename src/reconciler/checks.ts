import type { SwapReconciled } from '../events/types.ts';
import { atomicToDecimal } from '../money/atomic.ts';
import { currencyDecimals } from '../money/currencies.ts';
import { Decimal, DecimalFormatError, formatDecimal, parseNonNegativeDecimal } from '../money/decimal.ts';
import type { Finding, PayloadInspection } from '../payload/index.ts';
import { exactDifference, exactProduct, exactSum, InexactArithmeticError } from './exact.ts';
import {
  assertReconciliationPolicy,
  FEE_KINDS,
  type FeeKind,
  type FeeTolerance,
  type ReconciliationPolicy,
} from './policy.ts';
import {
  ReconciliationInputError,
  worstVerdict,
  type FeeFigures,
  type ReconciledCheck,
  type ReconciliationInput,
  type ReconciliationResult,
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

type Read = { value: Decimal } | { missing: true; reason: string } | { refused: true; reason: string };

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

function readText(value: unknown, what: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'string')
    throw new ReconciliationInputError(`${what} must be text or null, got ${typeof value}`);
  return value.trim() === '' ? undefined : value;
}

type Slippage =
  | { ratio: Decimal; source: 'request slippage' | 'quote defaultSlippage' }
  | { ratio: Decimal; source: 'none' }
  | { refused: string };

/** The request's slippage, else the quote's defaultSlippage, else none (exact). An invalid one is not skipped. */
function agreedSlippage(input: ReconciliationInput): Slippage {
  const candidates = [
    ['request slippage', input.creation.request.slippage],
    ['quote defaultSlippage', input.creation.quote?.defaultSlippage],
  ] as const;
  for (const [source, raw] of candidates) {
    const read = readAmount(raw, source);
    if ('missing' in read) continue;
    if ('refused' in read) return { refused: read.reason };
    if (read.value.gt(1)) return { refused: `${source} ${raw} is not a ratio from 0 to 1` };
    return { ratio: read.value, source };
  }
  return { ratio: new Decimal(0), source: 'none' };
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

// ---- amount to wallet ----

const AMOUNT = 'amount.to_wallet';

/**
 * FINISHED: the signed amount_to_wallet (atomic units of payloadCurrencyTo, payout network fee
 * included) against the final amount + final payoutNetworkFees, both exact decimals. The partner's
 * decimals are compared as they are: digits beyond the currency's atomic unit are kept, never rounded.
 * fixed: at least expected × (1 − slippage); above the signed amount is in the user's favour, so
 * WITHIN_TOLERANCE, not MATCHED. float: |delta| ≤ expected × slippage.
 */
function amountCheck(input: ReconciliationInput, status: StatusClass): ReconciledCheck {
  if (status === 'REFUNDED' || status === 'EXPIRED')
    return check(AMOUNT, 'UNVERIFIABLE', {
      detail: `the interface defines no amount to the wallet for a ${status === 'REFUNDED' ? 'refund' : 'expiry'}; nothing is guessed`,
    });
  if (status === 'not_final')
    return check(AMOUNT, 'UNVERIFIABLE', {
      detail: `the swap is not final (${input.final.status}); its final amount is not known`,
    });
  if (status === 'unruled_final')
    return check(AMOUNT, 'UNVERIFIABLE', {
      detail: `the interface defines no amount rule for final status ${input.final.status}`,
    });

  const { creation, final, inspection } = input;
  const reasons: string[] = [];
  const notes: string[] = [];
  const currency = creation.request.payloadCurrencyTo;
  const decoded = inspection.decoded;

  let expected: Decimal | undefined;
  let decimals: number | undefined;
  if (!decoded) {
    const why = inspection.findings.find((f) => f.check === 'payload.decode' && f.outcome !== 'ok')?.detail;
    reasons.push(`the signed payload does not decode${why ? ` (${why})` : ''}: no signed amount_to_wallet`);
  } else if (decoded.currency_to !== currency) {
    reasons.push(
      `the payload signs currency_to ${JSON.stringify(decoded.currency_to)}, the request asked for ${JSON.stringify(currency)}: the signed amount is in another currency's units`,
    );
  } else {
    decimals = (input.magnitudes ?? currencyDecimals)(currency);
    if (decimals === undefined)
      reasons.push(`no decimals known for platform currency ${JSON.stringify(currency)}`);
    else {
      expected = atomicToDecimal(decoded.amount_to_wallet, decimals);
      notes.push(
        `signed amount_to_wallet ${decoded.amount_to_wallet} atomic units of ${currency} (${decimals} decimals)`,
      );
    }
  }

  const amount = readAmount(final.amount, 'final amount');
  const fee = readAmount(final.payoutNetworkFees, 'final payoutNetworkFees');
  let actual: Decimal | undefined;
  for (const read of [amount, fee]) if (!('value' in read)) reasons.push(read.reason);
  if ('value' in amount && 'value' in fee) {
    notes.push(
      `actual = final amount ${formatDecimal(amount.value)} + final payoutNetworkFees ${formatDecimal(fee.value)}`,
    );
    for (const [what, d] of [
      ['final amount', amount.value],
      ['final payoutNetworkFees', fee.value],
    ] as const)
      if (decimals !== undefined && d.decimalPlaces() > decimals)
        notes.push(
          `${what} has ${d.decimalPlaces()} decimal places, more than ${currency}'s ${decimals}: compared exactly, not rounded`,
        );
    actual = exactly(() => exactSum(amount.value, fee.value), reasons);
  }

  const slippage = agreedSlippage(input);
  let ratio: Decimal | undefined;
  if ('refused' in slippage) reasons.push(slippage.refused);
  else {
    ratio = slippage.ratio;
    notes.push(
      slippage.source === 'none'
        ? 'no slippage agreed (neither request slippage nor quote defaultSlippage): exact match required'
        : `slippage ${formatDecimal(slippage.ratio)} from the ${slippage.source}`,
    );
  }

  const delta = expected && actual ? exactly(() => exactDifference(actual, expected), reasons) : undefined;
  const tolerance = expected && ratio ? exactly(() => exactProduct(expected, ratio), reasons) : undefined;

  const method = creation.tradeMethod;
  if (method !== 'fixed' && method !== 'float')
    reasons.push(`trade method ${JSON.stringify(method)} is neither fixed nor float`);
  // A payload whose signature does not verify carries a claim, not a signed amount.
  if (!inspection.signatureValid && decoded)
    reasons.push(
      'the signature does not verify: amount_to_wallet is not proven signed; figures shown unproven',
    );

  const figures = {
    expected: text(expected),
    actual: text(actual),
    delta: text(delta),
    tolerance: text(tolerance),
  };
  if (reasons.length > 0 || !expected || !actual || !delta || !tolerance)
    return check(AMOUNT, 'UNVERIFIABLE', { ...figures, detail: [...reasons, ...notes].join('; ') });

  let verdict: Verdict;
  let outcome: string;
  if (delta.isZero()) {
    verdict = 'MATCHED';
    outcome = 'equal to the signed amount';
  } else if (method === 'fixed') {
    if (delta.gt(0)) {
      verdict = 'WITHIN_TOLERANCE';
      outcome = `fixed: ${formatDecimal(delta)} above the signed amount, in the user's favour`;
    } else if (delta.abs().lte(tolerance)) {
      verdict = 'WITHIN_TOLERANCE';
      outcome = `fixed: ${formatDecimal(delta.abs())} short of the signed amount, within the slippage`;
    } else {
      verdict = 'MISMATCH';
      outcome = `fixed: ${formatDecimal(delta.abs())} short of the signed amount, more than the slippage allows`;
    }
  } else if (delta.abs().lte(tolerance)) {
    verdict = 'WITHIN_TOLERANCE';
    outcome = 'float: within the slippage of the signed amount';
  } else {
    verdict = 'MISMATCH';
    outcome = 'float: beyond the slippage of the signed amount';
  }
  return check(AMOUNT, verdict, { ...figures, detail: [outcome, ...notes].join('; ') });
}

// ---- fees ----

const FEE_NAMES: Record<FeeKind, { check: string; field: keyof FeeFigures }> = {
  provider: { check: 'fee.provider', field: 'providerFees' },
  referral: { check: 'fee.referral', field: 'referralFees' },
  payoutNetwork: { check: 'fee.payout_network', field: 'payoutNetworkFees' },
};

/**
 * The fee at the final status against the SwapResponse's, in either direction, allowed to differ
 * by the larger of the policy's absolute and relative (× creation fee) tolerances.
 */
function feeCheck(
  kind: FeeKind,
  input: ReconciliationInput,
  status: StatusClass,
  policy: FeeTolerance,
): ReconciledCheck {
  const { check: name, field } = FEE_NAMES[kind];
  const created = readAmount(input.creation.fees[field], `${field} at creation`);
  const reported = readAmount(input.final[field], `final ${field}`);
  const expected = 'value' in created ? created.value : undefined;
  const actual = 'value' in reported ? reported.value : undefined;
  const reasons: string[] = [];
  if (status === 'not_final')
    reasons.push(`the swap is not final (${input.final.status}); its fees may still change`);
  for (const read of [created, reported]) if (!('value' in read)) reasons.push(read.reason);

  const delta = expected && actual ? exactly(() => exactDifference(actual, expected), reasons) : undefined;
  const relative = expected ? exactly(() => exactProduct(expected, policy.relative), reasons) : undefined;
  const allowance = relative ? Decimal.max(policy.absolute, relative) : undefined;
  const figures = {
    expected: text(expected),
    actual: text(actual),
    delta: text(delta),
    tolerance: text(allowance),
  };
  const rule = `tolerance: the larger of ${formatDecimal(policy.absolute)} and ${formatDecimal(policy.relative)} × the creation fee`;
  if (reasons.length > 0 || !delta || !allowance)
    return check(name, 'UNVERIFIABLE', { ...figures, detail: reasons.join('; ') });
  if (delta.isZero()) return check(name, 'MATCHED', figures);
  if (delta.abs().lte(allowance)) return check(name, 'WITHIN_TOLERANCE', { ...figures, detail: rule });
  return check(name, 'MISMATCH', { ...figures, detail: `beyond the ${rule}` });
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
}

/**
 * Every check of one swap, in a stable order: status.final, signature.valid, the inspection's
 * findings (signature.*, payload.*, device.*), amount.to_wallet, fee.provider, fee.referral,
 * fee.payout_network, hash.payin, hash.payout. The verdict is the worst check's (VERDICT_ORDER).
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
    amountCheck(input, status),
    ...FEE_KINDS.map((kind) => feeCheck(kind, input, status, policy.fees[kind])),
    hashCheck('payin', input, status),
    hashCheck('payout', input, status),
  ];
  return { verdict: worstVerdict(checks.map((c) => c.verdict)), checks };
}

/** The SwapReconciled payload for a result, based on the event that queued the swap. */
export function toSwapReconciled(result: ReconciliationResult, basedOnEventId: string): SwapReconciled {
  return { verdict: result.verdict, basedOnEventId, checks: result.checks.map((c) => ({ ...c })) };
}
