import { Decimal, formatDecimal, isDecimalText } from '../money/decimal.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';

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

/**
 * How far a swap's creation may stand from its quote, in the platform's (or the user's) disfavour, as a
 * ratio of the quoted figure: a fixed quote is a promise (exact by default), a float one an estimate.
 */
export interface QuoteBands {
  readonly fixed: Decimal;
  readonly float: Decimal;
}

/** What the chain checks allow (chain-checks.ts). */
export interface ChainPolicy {
  /**
   * How far a block's time may stand before the swap's creation and its transfer still be the swap's: block
   * timestamps are set by miners (Bitcoin accepts one up to two hours ahead of the network's time) and the
   * partner's createdAt by its clock. Whole seconds, 0 or more.
   */
  readonly clockAllowanceSeconds: number;
  /**
   * By platform currency id (upper case): how much less than the payin a refund may pay, the refund's own
   * network fee, in the currency's units. A currency without one: the refund must pay back the whole payin.
   */
  readonly refundFeeAllowance: Readonly<Record<string, Decimal>>;
}

export interface ReconciliationPolicy {
  readonly fees: Readonly<Record<FeeCheckKind, DirectionalTolerance>>;
  /** Absent: DEFAULT_QUOTE_BANDS. */
  readonly quote?: QuoteBands | undefined;
  /** Absent: DEFAULT_CHAIN_POLICY. */
  readonly chain?: ChainPolicy | undefined;
}

export const DEFAULT_CHAIN_POLICY: ChainPolicy = Object.freeze({
  clockAllowanceSeconds: 7200,
  refundFeeAllowance: Object.freeze({}),
});
const CHAIN_CLOCK_KEY = 'RECONCILE_CHAIN_CLOCK_ALLOWANCE_SECONDS';
/** Followed by the platform currency id: RECONCILE_REFUND_FEE_ALLOWANCE_BTC=0.0002. */
export const REFUND_FEE_ALLOWANCE_PREFIX = 'RECONCILE_REFUND_FEE_ALLOWANCE_';

export const DEFAULT_QUOTE_BANDS: QuoteBands = Object.freeze({
  fixed: new Decimal(0),
  float: new Decimal('0.02'),
});
const QUOTE_BAND_KEYS = {
  fixed: 'RECONCILE_QUOTE_FIXED_BAND',
  float: 'RECONCILE_QUOTE_FLOAT_BAND',
} as const;

export const EXACT_FEE: FeeTolerance = Object.freeze({ absolute: new Decimal(0), relative: new Decimal(0) });
export const EXACT_BOTH_WAYS: DirectionalTolerance = Object.freeze({
  favour: EXACT_FEE,
  disfavour: EXACT_FEE,
});

/** Fees must match exactly, both ways, unless configured otherwise. */
export const DEFAULT_RECONCILIATION_POLICY: ReconciliationPolicy = Object.freeze({
  fees: Object.freeze({
    provider: EXACT_BOTH_WAYS,
    referral: EXACT_BOTH_WAYS,
    payoutNetwork: EXACT_BOTH_WAYS,
    sum: EXACT_BOTH_WAYS,
  }),
});

export class ReconciliationPolicyError extends InputRefusedError {
  override name = 'ReconciliationPolicyError';
  constructor(readonly problems: string[]) {
    super(`invalid reconciliation policy:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

const PREFIX = 'RECONCILE_';
const KIND_KEY: Record<FeeCheckKind, string> = {
  provider: 'PROVIDER',
  referral: 'REFERRAL',
  payoutNetwork: 'PAYOUT_NETWORK',
  sum: 'SUM',
};
const KIND_WORDS: Record<FeeCheckKind, string> = {
  provider: 'the provider fee',
  referral: 'the referral fee',
  payoutNetwork: 'the payout network fee',
  sum: 'the sum of the three fees',
};
const DIRECTIONS: readonly FeeDirection[] = ['favour', 'disfavour'];
const DIRECTION_WORDS: Record<FeeDirection, string> = {
  favour: "in the platform's favour",
  disfavour: "in the platform's disfavour (referral down; provider, network fee or sum up)",
};
type Bound = 'absolute' | 'relative';
const BOUNDS: readonly Bound[] = ['absolute', 'relative'];

const sharedKey = (direction: FeeDirection, bound: Bound) =>
  `RECONCILE_FEE_${direction.toUpperCase()}_TOLERANCE_${bound.toUpperCase()}`;
const kindKey = (kind: FeeCheckKind, direction: FeeDirection, bound: Bound) =>
  `RECONCILE_${KIND_KEY[kind]}_FEE_${direction.toUpperCase()}_TOLERANCE_${bound.toUpperCase()}`;

/**
 * The configuration keys, with what each means. A per-kind key wins over the shared one.
 * Values are plain decimal text (no exponent): absolute >= 0, relative from 0 to 1. Default exact.
 */
export const RECONCILIATION_POLICY_KEYS: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries([
    ...DIRECTIONS.flatMap((direction) =>
      BOUNDS.map((bound) => [
        sharedKey(direction, bound),
        `${bound} tolerance of every fee and of their sum ${DIRECTION_WORDS[direction]} (default 0)`,
      ]),
    ),
    ...FEE_CHECK_KINDS.flatMap((kind) =>
      DIRECTIONS.flatMap((direction) =>
        BOUNDS.map((bound) => [
          kindKey(kind, direction, bound),
          `${bound} tolerance of ${KIND_WORDS[kind]} ${DIRECTION_WORDS[direction]}; wins over the shared key`,
        ]),
      ),
    ),
    [
      QUOTE_BAND_KEYS.fixed,
      `how far a fixed swap's signed output and creation fees may stand from its quote in the platform's or the user's disfavour, a ratio of the quoted figure (default ${DEFAULT_QUOTE_BANDS.fixed.toFixed()}: exact)`,
    ],
    [
      QUOTE_BAND_KEYS.float,
      `the same for a float swap, whose quote is an estimate (default ${DEFAULT_QUOTE_BANDS.float.toFixed()})`,
    ],
    [
      CHAIN_CLOCK_KEY,
      `whole seconds a transfer's block time may precede the swap's creation before it is "predates the swap" (default ${DEFAULT_CHAIN_POLICY.clockAllowanceSeconds}: miners' clocks may run two hours ahead)`,
    ],
    [
      `${REFUND_FEE_ALLOWANCE_PREFIX}<CURRENCY>`,
      'how much less than the payin a refund of that platform currency may pay (its network fee), in its units (default 0: the whole payin)',
    ],
  ]),
);

/**
 * The symmetric keys of before, each with the keys that replace it. Refused, never read: a symmetric
 * tolerance silently let the platform's disfavour pass.
 */
export const RETIRED_RECONCILIATION_POLICY_KEYS: Readonly<Record<string, readonly string[]>> = Object.freeze(
  Object.fromEntries([
    ...BOUNDS.map((bound) => [
      `RECONCILE_FEE_TOLERANCE_${bound.toUpperCase()}`,
      DIRECTIONS.map((direction) => sharedKey(direction, bound)),
    ]),
    ...FEE_KINDS.flatMap((kind) =>
      BOUNDS.map((bound) => [
        `RECONCILE_${KIND_KEY[kind]}_FEE_TOLERANCE_${bound.toUpperCase()}`,
        DIRECTIONS.map((direction) => kindKey(kind, direction, bound)),
      ]),
    ),
  ]),
);

/** One problem per retired key set (non-blank) in `values`, naming its replacements. */
export function retiredPolicyKeyProblems(values: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(RETIRED_RECONCILIATION_POLICY_KEYS)
    .filter(([key]) => (values[key] ?? '').trim() !== '')
    .map(
      ([key, replacements]) =>
        `${key}: a symmetric fee tolerance is no longer accepted (it let the platform's disfavour pass); set ${replacements.join(' and/or ')} instead`,
    );
}

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
 * Keys without the RECONCILE_ prefix are ignored; a retired symmetric key is refused naming its
 * replacements; another unknown RECONCILE_ key is refused as a typo. Every problem is reported at once.
 */
export function parseReconciliationPolicy(
  values: Readonly<Record<string, string | undefined>>,
): ReconciliationPolicy {
  const problems: string[] = retiredPolicyKeyProblems(values);
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
    if (
      key.startsWith(PREFIX) &&
      !(key in RECONCILIATION_POLICY_KEYS) &&
      !(key in RETIRED_RECONCILIATION_POLICY_KEYS) &&
      !(key.startsWith(REFUND_FEE_ALLOWANCE_PREFIX) && key.length > REFUND_FEE_ALLOWANCE_PREFIX.length)
    )
      problems.push(`${key}: unknown reconciliation key`);

  const shared = Object.fromEntries(
    DIRECTIONS.map((direction) => [
      direction,
      Object.fromEntries(BOUNDS.map((bound) => [bound, read(sharedKey(direction, bound), bound)])),
    ]),
  ) as Record<FeeDirection, Record<Bound, Decimal | undefined>>;
  const fees = {} as Record<FeeCheckKind, DirectionalTolerance>;
  for (const kind of FEE_CHECK_KINDS) {
    const tolerance = {} as Record<FeeDirection, FeeTolerance>;
    for (const direction of DIRECTIONS) {
      const absolute = read(kindKey(kind, direction, 'absolute'), 'absolute');
      const relative = read(kindKey(kind, direction, 'relative'), 'relative');
      tolerance[direction] = Object.freeze({
        absolute: absolute ?? shared[direction].absolute ?? EXACT_FEE.absolute,
        relative: relative ?? shared[direction].relative ?? EXACT_FEE.relative,
      });
    }
    fees[kind] = Object.freeze(tolerance);
  }
  const quote = Object.freeze({
    fixed: read(QUOTE_BAND_KEYS.fixed, 'relative') ?? DEFAULT_QUOTE_BANDS.fixed,
    float: read(QUOTE_BAND_KEYS.float, 'relative') ?? DEFAULT_QUOTE_BANDS.float,
  });
  const chain = Object.freeze({
    clockAllowanceSeconds: readSeconds(values[CHAIN_CLOCK_KEY], CHAIN_CLOCK_KEY, problems),
    refundFeeAllowance: Object.freeze(
      Object.fromEntries(
        Object.keys(values)
          .filter(
            (k) => k.startsWith(REFUND_FEE_ALLOWANCE_PREFIX) && k.length > REFUND_FEE_ALLOWANCE_PREFIX.length,
          )
          .map(
            (k) => [k.slice(REFUND_FEE_ALLOWANCE_PREFIX.length).toUpperCase(), read(k, 'absolute')] as const,
          )
          .filter((e): e is readonly [string, Decimal] => e[1] !== undefined),
      ),
    ),
  });
  if (problems.length > 0) throw new ReconciliationPolicyError(problems);
  return Object.freeze({ fees: Object.freeze(fees), quote, chain });
}

function readSeconds(raw: string | undefined, key: string, problems: string[]): number {
  if (raw === undefined || raw.trim() === '') return DEFAULT_CHAIN_POLICY.clockAllowanceSeconds;
  const text = raw.trim();
  if (!/^\d{1,9}$/.test(text)) {
    problems.push(`${key}: "${raw}" is not a whole number of seconds`);
    return DEFAULT_CHAIN_POLICY.clockAllowanceSeconds;
  }
  return Number(text);
}

/** Refuses a policy built in code with a missing, negative, non-Decimal or out-of-range tolerance. */
export function assertReconciliationPolicy(policy: ReconciliationPolicy): void {
  const problems: string[] = [];
  for (const kind of FEE_CHECK_KINDS) {
    const directional = policy?.fees?.[kind];
    if (!directional) {
      problems.push(`fees.${kind}: missing`);
      continue;
    }
    for (const direction of DIRECTIONS) {
      const tolerance = directional[direction];
      if (!tolerance) {
        problems.push(`fees.${kind}.${direction}: missing`);
        continue;
      }
      for (const bound of BOUNDS) {
        const problem = problemOf(tolerance[bound], bound);
        if (problem) problems.push(`fees.${kind}.${direction}.${bound}: ${problem}`);
      }
    }
  }
  if (policy?.quote !== undefined)
    for (const method of ['fixed', 'float'] as const) {
      const problem = problemOf(policy.quote[method], 'relative');
      if (problem) problems.push(`quote.${method}: ${problem}`);
    }
  if (policy?.chain !== undefined) {
    const s = policy.chain.clockAllowanceSeconds;
    if (!Number.isSafeInteger(s) || s < 0)
      problems.push(`chain.clockAllowanceSeconds: ${s} is not whole seconds`);
    for (const [currency, allowance] of Object.entries(policy.chain.refundFeeAllowance ?? {})) {
      const problem = problemOf(allowance, 'absolute');
      if (problem) problems.push(`chain.refundFeeAllowance.${currency}: ${problem}`);
    }
  }
  if (problems.length > 0) throw new ReconciliationPolicyError(problems);
}
