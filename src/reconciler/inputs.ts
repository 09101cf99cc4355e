import { currencyDecimals } from '../money/currencies.ts';
import { Decimal, DecimalFormatError, formatDecimal, parseNonNegativeDecimal } from '../money/decimal.ts';
import { EXPIRED, FINISHED, REFUNDED } from '../swap/status.ts';
import { InexactArithmeticError } from './exact.ts';
import type { ChainRole } from '../events/types.ts';
import {
  ReconciliationInputError,
  type CheckVerdict,
  type FinalReport,
  type ReconciledCheck,
  type ReconciliationInput,
} from './types.ts';

/**
 * What the reconciliation checks share: the swap's outcome, the shape of a check, and their input read as
 * exact decimals (money, slippage) or refused with a reason. Pure, like the checks.
 */

/** The outcomes the design gives rules for: FINISHED and REFUNDED (final), EXPIRED (closed, or final). */
export type RuledOutcome = typeof FINISHED | typeof REFUNDED | typeof EXPIRED;

/**
 * What a swap is judged as. Each ruled outcome has its own evidence (DESIGN "Reconciliation rules"); `open`:
 * nothing has ended, nothing to judge yet; `unruled`: a final status the design gives no rules for.
 */
export type Outcome = RuledOutcome | 'open' | 'unruled';

/** The report's field naming each role's transaction. */
export const HASH_FIELD = {
  payin: 'payinTransactionId',
  payout: 'payoutTransactionId',
  refund: 'refundTransactionId',
} as const satisfies Record<ChainRole, keyof FinalReport>;

export type Presence = 'present' | 'absent';
/**
 * Which transactions each ruled outcome has: FINISHED pays out, REFUNDED pays back, EXPIRED moves nothing
 * (n/a: a FINISHED swap's refund, not judged). The hash checks and the chain checks both read it.
 */
export const TRANSACTIONS_OF: Record<RuledOutcome, Record<ChainRole, Presence | 'n/a'>> = {
  FINISHED: { payin: 'present', payout: 'present', refund: 'n/a' },
  REFUNDED: { payin: 'present', payout: 'absent', refund: 'present' },
  EXPIRED: { payin: 'absent', payout: 'absent', refund: 'absent' },
};

/**
 * FINISHED and REFUNDED count once final; EXPIRED once closed (reopenable) or final (a provider may list it
 * so). A row without a class (older callers) is told by `final`, EXPIRED being closed whatever it says.
 */
export function classify(status: string, final: boolean, statusClass?: string | null): Outcome {
  if (status === EXPIRED && (final || statusClass === 'closed' || !statusClass)) return 'EXPIRED';
  if (!final) return 'open';
  return status === FINISHED || status === REFUNDED ? status : 'unruled';
}

/** Money moved on a swap that moved none: the words every EXPIRED check uses. */
export const MONEY_ON_EXPIRED = 'money moved on an expired swap';

interface CheckFields {
  expected?: string | null | undefined;
  actual?: string | null | undefined;
  delta?: string | null | undefined;
  tolerance?: string | null | undefined;
  detail?: string | null | undefined;
}

export function check(name: string, verdict: CheckVerdict, f: CheckFields = {}): ReconciledCheck {
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
export function exactly(op: () => Decimal, reasons: string[]): Decimal | undefined {
  try {
    return op();
  } catch (e) {
    if (!(e instanceof InexactArithmeticError)) throw e;
    reasons.push(e.message);
    return undefined;
  }
}

export const text = (d: Decimal | undefined): string | undefined =>
  d === undefined ? undefined : formatDecimal(d);

// ---- reading inputs ----

export type Read =
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

/** The report field of a final figure (the swaps row names the amount amountTo). */
const REPORT_FIELD_OF: Readonly<Record<string, string>> = { amount: 'amountTo' };

/**
 * Why a final figure is unknown, when the partner never reported it before the confirmation deadline (the
 * poller gave up asking), else undefined: evidence that will not come, not evidence still awaited.
 */
export function neverReported(input: ReconciliationInput, field: string): string | undefined {
  const name = REPORT_FIELD_OF[field] ?? field;
  return input.neverReported?.includes(name)
    ? `${field} never reported: GET /status did not report it before the confirmation deadline`
    : undefined;
}

/** A final figure of the swap as money, its absence explained when it was never reported. */
export function readFinalMoney(
  input: ReconciliationInput,
  field: 'amount' | 'providerFees' | 'referralFees' | 'payoutNetworkFees',
  what: string,
  unit: Unit,
): Read {
  const read = readMoney(input.final[field], what, unit);
  const never = 'missing' in read ? neverReported(input, field) : undefined;
  return never ? { missing: true, reason: never } : read;
}

/** The decimals of the destination currency, which the final amount and the fees are in. */
export interface Unit {
  readonly currency: string;
  /** Undefined: not known, so a figure's precision cannot be checked. */
  readonly decimals: number | undefined;
}

export function destinationUnit(input: ReconciliationInput): Unit {
  const currency = input.creation.request.payloadCurrencyTo;
  return { currency, decimals: (input.magnitudes ?? currencyDecimals)(currency) };
}

/**
 * A figure with more decimal places than its currency has is not a whole number of atomic units:
 * comparing it would need rounding, so its comparison is UNVERIFIABLE (never rounded).
 */
export function readMoney(value: unknown, what: string, unit: Unit): Read {
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

export const shown = (read: Read): Decimal | undefined => ('value' in read ? read.value : undefined);
export const reasonOf = (read: Read): string | undefined => ('reason' in read ? read.reason : undefined);

export function readText(value: unknown, what: string): string | undefined {
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
export function agreedSlippage(input: ReconciliationInput, method: string): Slippage {
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
