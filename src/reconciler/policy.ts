import { Decimal, formatDecimal, isDecimalText } from '../money/decimal.ts';

/** The three fees a swap carries at creation and at its final status, in the destination currency. */
export type FeeKind = 'provider' | 'referral' | 'payoutNetwork';
export const FEE_KINDS: readonly FeeKind[] = Object.freeze(['provider', 'referral', 'payoutNetwork']);

/**
 * How far a final fee may stand from its creation figure, in either direction. The allowance is the
 * larger of `absolute` and `relative` × the creation figure: either one suffices.
 */
export interface FeeTolerance {
  /** In the fee's own currency; 0 or more. */
  readonly absolute: Decimal;
  /** A ratio of the creation figure, 0 to 1. */
  readonly relative: Decimal;
}

export interface ReconciliationPolicy {
  readonly fees: Readonly<Record<FeeKind, FeeTolerance>>;
}

export const EXACT_FEE: FeeTolerance = Object.freeze({ absolute: new Decimal(0), relative: new Decimal(0) });

/** Fees must match exactly unless configured otherwise. */
export const DEFAULT_RECONCILIATION_POLICY: ReconciliationPolicy = Object.freeze({
  fees: Object.freeze({ provider: EXACT_FEE, referral: EXACT_FEE, payoutNetwork: EXACT_FEE }),
});

export class ReconciliationPolicyError extends Error {
  override name = 'ReconciliationPolicyError';
  constructor(readonly problems: string[]) {
    super(`invalid reconciliation policy:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

const PREFIX = 'RECONCILE_';
const KIND_KEY: Record<FeeKind, string> = {
  provider: 'PROVIDER',
  referral: 'REFERRAL',
  payoutNetwork: 'PAYOUT_NETWORK',
};

/**
 * The configuration keys, with what each means. A per-fee key wins over the shared one.
 * Values are plain decimal text (no exponent): absolute >= 0, relative from 0 to 1.
 */
export const RECONCILIATION_POLICY_KEYS: Readonly<Record<string, string>> = Object.freeze({
  RECONCILE_FEE_TOLERANCE_ABSOLUTE: 'absolute fee tolerance for every fee, destination currency (default 0)',
  RECONCILE_FEE_TOLERANCE_RELATIVE:
    'relative fee tolerance for every fee, ratio of the creation fee (default 0)',
  ...Object.fromEntries(
    FEE_KINDS.flatMap((kind) => [
      [`RECONCILE_${KIND_KEY[kind]}_FEE_TOLERANCE_ABSOLUTE`, `absolute tolerance of the ${kind} fee`],
      [`RECONCILE_${KIND_KEY[kind]}_FEE_TOLERANCE_RELATIVE`, `relative tolerance of the ${kind} fee`],
    ]),
  ),
});

type Bound = 'absolute' | 'relative';

function problemOf(value: unknown, bound: Bound): string | undefined {
  if (!Decimal.isDecimal(value)) return `must be a Decimal, got ${typeof value}`;
  const d = value as Decimal;
  if (!d.isFinite()) return 'must be finite';
  if (d.isNegative() && !d.isZero()) return `${formatDecimal(d)} is negative`;
  if (bound === 'relative' && d.gt(1)) return `${formatDecimal(d)} is above 1 (a ratio from 0 to 1)`;
  return undefined;
}

function parseBound(raw: string, bound: Bound): Decimal | string {
  const text = raw.trim();
  if (!isDecimalText(text)) return `"${raw}" is not plain decimal text`;
  const d = new Decimal(text);
  return problemOf(d, bound) ?? d;
}

/**
 * Reads the policy from configuration strings (environment or file, RECONCILIATION_POLICY_KEYS).
 * Keys without the RECONCILE_ prefix are ignored; an unknown RECONCILE_ key is refused as a typo.
 * Every problem is reported at once.
 */
export function parseReconciliationPolicy(
  values: Readonly<Record<string, string | undefined>>,
): ReconciliationPolicy {
  const problems: string[] = [];
  const read = (key: string, bound: Bound): Decimal | undefined => {
    const raw = values[key];
    if (raw === undefined || raw.trim() === '') return undefined;
    const parsed = parseBound(raw, bound);
    if (typeof parsed === 'string') {
      problems.push(`${key}: ${parsed}`);
      return undefined;
    }
    return parsed;
  };
  for (const key of Object.keys(values))
    if (key.startsWith(PREFIX) && !(key in RECONCILIATION_POLICY_KEYS))
      problems.push(`${key}: unknown reconciliation key`);

  const sharedAbsolute = read('RECONCILE_FEE_TOLERANCE_ABSOLUTE', 'absolute');
  const sharedRelative = read('RECONCILE_FEE_TOLERANCE_RELATIVE', 'relative');
  const fees = {} as Record<FeeKind, FeeTolerance>;
  for (const kind of FEE_KINDS) {
    const absolute = read(`RECONCILE_${KIND_KEY[kind]}_FEE_TOLERANCE_ABSOLUTE`, 'absolute');
    const relative = read(`RECONCILE_${KIND_KEY[kind]}_FEE_TOLERANCE_RELATIVE`, 'relative');
    fees[kind] = Object.freeze({
      absolute: absolute ?? sharedAbsolute ?? EXACT_FEE.absolute,
      relative: relative ?? sharedRelative ?? EXACT_FEE.relative,
    });
  }
  if (problems.length > 0) throw new ReconciliationPolicyError(problems);
  return Object.freeze({ fees: Object.freeze(fees) });
}

/** Refuses a policy built in code with a negative, non-Decimal or out-of-range tolerance. */
export function assertReconciliationPolicy(policy: ReconciliationPolicy): void {
  const problems: string[] = [];
  for (const kind of FEE_KINDS) {
    const tolerance = policy?.fees?.[kind];
    if (!tolerance) {
      problems.push(`fees.${kind}: missing`);
      continue;
    }
    for (const bound of ['absolute', 'relative'] as const) {
      const problem = problemOf(tolerance[bound], bound);
      if (problem) problems.push(`fees.${kind}.${bound}: ${problem}`);
    }
  }
  if (problems.length > 0) throw new ReconciliationPolicyError(problems);
}
