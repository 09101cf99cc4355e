import type { ChainRole, SwapReconciled } from '../events/types.ts';
import type { Finding, PayloadInspection } from '../payload/index.ts';
import { assertReconciliationPolicy, FEE_KINDS, type ReconciliationPolicy } from './policy.ts';
import {
  ReconciliationInputError,
  worstVerdict,
  type ReconciledCheck,
  type ReconciliationInput,
  type ReconciliationResult,
  type StatusConflict,
  type Verdict,
} from './types.ts';
import { amountCheck } from './amount-checks.ts';
import { extraFeeCheck, feeCheck, feeSumCheck } from './fee-checks.ts';
import {
  check,
  classify,
  MONEY_ON_EXPIRED,
  neverReported,
  readText,
  HASH_FIELD,
  TRANSACTIONS_OF,
  type Outcome,
  type Presence,
  type RuledOutcome,
} from './inputs.ts';
import { quoteChecks } from './quote-checks.ts';
import { chainChecks, refundReusedHash } from './chain-checks.ts';

/**
 * The reconciler's pure core: what the partner signed at creation against what it reported at the
 * final status. No I/O, no clock: the same input gives the same checks, so a verdict can be
 * recomputed and audited. Signature verification (async) is done before, by inspectSwapPayload. The
 * amount and fee checks live in amount-checks.ts and fee-checks.ts, their shared reading in inputs.ts.
 */

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

// ---- transaction hashes ----

/** Why a ruled hash is wrong, in the outcome's words. */
function hashProblem(which: ChainRole, outcome: RuledOutcome, expected: Presence): string {
  if (outcome === 'EXPIRED')
    return `${MONEY_ON_EXPIRED}: a ${which === 'payin' ? 'deposit (payin)' : which} transaction reported`;
  if (outcome === 'REFUNDED' && which === 'refund')
    return 'refund not evidenced: no refund transaction reported';
  if (outcome === 'REFUNDED' && which === 'payout') return 'a payout to the user reported on a refund';
  return `${outcome}: ${expected === 'present' ? 'a' : 'no'} ${which} transaction expected`;
}

function hashCheck(which: ChainRole, input: ReconciliationInput, outcome: Outcome): ReconciledCheck {
  const name = `hash.${which}`;
  const value = readText(input.final[HASH_FIELD[which]], HASH_FIELD[which]);
  const actual = value ?? 'absent';
  if (outcome === 'open')
    return check(name, 'UNVERIFIABLE', {
      actual,
      detail: `the swap has not ended (${input.final.status}); its transactions may still change`,
    });
  if (outcome === 'unruled')
    return check(name, 'UNVERIFIABLE', {
      actual,
      detail: `no transaction rule for final status ${input.final.status}`,
    });
  const expected = TRANSACTIONS_OF[outcome][which];
  if (expected === 'n/a')
    return check(name, 'NOT_APPLICABLE', {
      actual,
      detail:
        value === undefined
          ? `no refund on a ${outcome} swap`
          : `a refund transaction reported on a ${outcome} swap (a partial refund?): shown, not judged`,
    });
  // A swap's own payin or payout is never its refund: judged with or without a chain source.
  const reused =
    which === 'refund' && outcome === 'REFUNDED' && value !== undefined
      ? refundReusedHash(input.final)
      : undefined;
  if (reused)
    return check(name, 'MISMATCH', {
      expected: `a refund transaction other than the swap's ${reused}`,
      actual,
      detail: `the refund hash is the swap's own ${reused} transaction: a ${reused} is not a refund`,
    });
  if ((value !== undefined) === (expected === 'present')) return check(name, 'MATCHED', { expected, actual });
  const never = value === undefined ? neverReported(input, HASH_FIELD[which]) : undefined;
  // A refund with no refund transaction lacks evidence; it proves nothing wrong.
  const missingEvidence = outcome === 'REFUNDED' && which === 'refund';
  return check(name, missingEvidence ? 'UNVERIFIABLE' : 'MISMATCH', {
    expected,
    actual,
    detail: [hashProblem(which, outcome, expected), never].filter(Boolean).join('; '),
  });
}

const STATUS_EXPECTED = 'FINISHED or REFUNDED and final, or EXPIRED';

function statusCheck(input: ReconciliationInput, outcome: Outcome): ReconciledCheck {
  const cls = input.final.statusClass ?? (input.final.final ? 'final' : undefined);
  const actual = `${input.final.status}${cls ? ` (${cls})` : ''}`;
  if (outcome === 'open')
    return check('status.final', 'UNVERIFIABLE', {
      expected: STATUS_EXPECTED,
      actual,
      detail: 'the swap has not ended: there is no outcome to judge yet',
    });
  if (outcome === 'unruled')
    return check('status.final', 'UNVERIFIABLE', {
      expected: STATUS_EXPECTED,
      actual,
      detail: `the design gives no reconciliation rules for final status ${input.final.status}`,
    });
  return check('status.final', 'MATCHED', { expected: STATUS_EXPECTED, actual });
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
 *  3. quote.amount_to, quote.fee.provider, quote.fee.referral, quote.fee.payout_network (the quote)
 *  4. amount.to_wallet (FINISHED: final amount alone vs signed − the lower network fee estimate;
 *     REFUNDED and EXPIRED: nothing paid to the user)
 *  5. amount.partner_side (final amount + final network fee vs signed)
 *  6. fee.provider, fee.referral, fee.payout_network, fee.sum (directional tolerances), fee.extra
 *  7. hash.payin, hash.payout, hash.refund (each outcome's transactions)
 *  7b. chain.payin, chain.payout, chain.refund, chain.network_fee (the chain's witness: only with chain
 *      evidence, chain-checks.ts)
 *  8. status.conflict (reports contradicting the final state)
 * A check that does not apply to the outcome is NOT_APPLICABLE and never counts. The verdict is the worst
 * counted check's (VERDICT_ORDER).
 * Throws ReconciliationInputError or ReconciliationPolicyError for a caller's mistake only.
 */
export function reconcileSwap(
  input: ReconciliationInput,
  policy: ReconciliationPolicy,
): ReconciliationResult {
  assertInput(input);
  assertReconciliationPolicy(policy);
  const outcome = classify(input.final.status, input.final.final, input.final.statusClass);
  const checks: ReconciledCheck[] = [
    statusCheck(input, outcome),
    signatureCheck(input.inspection, input.creation.createdAt),
    ...input.inspection.findings.map(findingCheck),
    ...quoteChecks(input, outcome, policy),
    amountCheck('user', input, outcome),
    amountCheck('partner', input, outcome),
    ...FEE_KINDS.map((kind) => feeCheck(kind, input, outcome, policy.fees[kind])),
    feeSumCheck(input, outcome, policy.fees.sum),
    extraFeeCheck(input, outcome),
    hashCheck('payin', input, outcome),
    hashCheck('payout', input, outcome),
    hashCheck('refund', input, outcome),
    ...chainChecks(input, outcome, policy.chain),
    conflictCheck(input),
  ];
  return { verdict: worstVerdict(checks.map((c) => c.verdict)), checks };
}

/** The SwapReconciled payload for a result, based on the event that queued the swap. */
export function toSwapReconciled(result: ReconciliationResult, basedOnEventId: string): SwapReconciled {
  return { verdict: result.verdict, basedOnEventId, checks: result.checks.map((c) => ({ ...c })) };
}
