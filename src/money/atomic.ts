import { Decimal } from './decimal.ts';

/**
 * Conversion between the interface's decimal text ("0.0000115") and atomic units (1150n satoshi),
 * by string arithmetic on digits only: no JS number, no rounding. Decimals above this bound are
 * refused as a configuration mistake (ERC-20 stores decimals in a uint8; real assets use at most 24).
 */
export const MAX_DECIMALS = 36;

/** Longest decimal text accepted; a 16-byte amount at 36 decimals needs 39 digits plus the dot. */
const MAX_TEXT_LENGTH = 100;

const AMOUNT_TEXT = /^(\d+)(?:\.(\d+))?$/;

export type AtomicAmountRefusal = 'malformed' | 'negative' | 'excess_precision' | 'decimals';

/** Base of every refusal of the conversion; `reason` tells which rule refused it. */
export class AtomicAmountError extends Error {
  override name = 'AtomicAmountError';
  constructor(
    readonly reason: AtomicAmountRefusal,
    readonly input: string,
    message: string,
  ) {
    super(message);
  }
}

export class MalformedAmountError extends AtomicAmountError {
  override name = 'MalformedAmountError';
  constructor(input: string, why: string) {
    super('malformed', input, `"${shorten(input)}" is not a decimal amount: ${why}`);
  }
}

export class NegativeAmountError extends AtomicAmountError {
  override name = 'NegativeAmountError';
  constructor(input: string) {
    super('negative', input, `"${shorten(input)}" is negative; amounts are never negative`);
  }
}

export class ExcessPrecisionError extends AtomicAmountError {
  override name = 'ExcessPrecisionError';
  constructor(
    input: string,
    readonly decimals: number,
  ) {
    super(
      'excess_precision',
      input,
      `"${shorten(input)}" has more than ${decimals} significant decimal places; it is not a whole number of atomic units`,
    );
  }
}

export class InvalidDecimalsError extends AtomicAmountError {
  override name = 'InvalidDecimalsError';
  constructor(decimals: unknown) {
    super(
      'decimals',
      String(decimals),
      `decimals must be an integer from 0 to ${MAX_DECIMALS}, got ${String(decimals)}`,
    );
  }
}

function shorten(text: string): string {
  return text.length > 64 ? text.slice(0, 64) + '…' : text;
}

function checkDecimals(decimals: number): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_DECIMALS)
    throw new InvalidDecimalsError(decimals);
}

/**
 * Decimal text (or a Decimal) to atomic units: `toAtomicUnits("0.0000115", 8) === 1150n`.
 * Trailing zeros beyond `decimals` are accepted ("1.50" at 1 decimal is 15n) because they change no
 * value; any other digit there is refused, never rounded.
 */
export function toAtomicUnits(amount: string | Decimal, decimals: number): bigint {
  checkDecimals(decimals);
  let text: string;
  if (Decimal.isDecimal(amount)) {
    if (!amount.isFinite()) throw new MalformedAmountError(amount.toString(), 'not a finite number');
    // toFixed() never uses an exponent for this Decimal (toExpPos/toExpNeg are 1000); -0 is zero.
    text = amount.isZero() ? '0' : amount.toFixed();
  } else if (typeof amount === 'string') {
    text = amount;
  } else {
    throw new MalformedAmountError(String(amount), `expected a string, got ${typeof amount}`);
  }
  if (text.length > MAX_TEXT_LENGTH)
    throw new MalformedAmountError(text, `longer than ${MAX_TEXT_LENGTH} characters`);
  if (text.startsWith('-')) {
    if (AMOUNT_TEXT.test(text.slice(1))) throw new NegativeAmountError(text);
    throw new MalformedAmountError(text, 'expected digits with an optional fraction');
  }
  const match = AMOUNT_TEXT.exec(text);
  if (!match)
    throw new MalformedAmountError(text, 'expected digits with an optional fraction, like "12.345"');
  const whole = match[1]!;
  const fraction = match[2] ?? '';
  if (fraction.length > decimals && /[^0]/.test(fraction.slice(decimals))) {
    throw new ExcessPrecisionError(text, decimals);
  }
  const digits = whole + fraction.slice(0, decimals).padEnd(decimals, '0');
  return BigInt(digits);
}

/** Atomic units to canonical decimal text: `fromAtomicUnits(1150n, 8) === "0.0000115"` (no trailing zeros). */
export function fromAtomicUnits(atomic: bigint, decimals: number): string {
  checkDecimals(decimals);
  if (typeof atomic !== 'bigint')
    throw new MalformedAmountError(String(atomic), `expected a bigint, got ${typeof atomic}`);
  if (atomic < 0n) throw new NegativeAmountError(atomic.toString());
  const digits = atomic.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/** Atomic units to the project's Decimal, exactly. */
export function atomicToDecimal(atomic: bigint, decimals: number): Decimal {
  return new Decimal(fromAtomicUnits(atomic, decimals));
}
