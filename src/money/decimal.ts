import { Decimal as DecimalJs } from 'decimal.js';

/**
 * The one Decimal constructor of the project. decimal.js defaults to 20 significant digits, which
 * silently rounds 18-decimal amounts above 100; 80 digits holds any 16-byte atomic amount (39 digits)
 * at 18 decimals with room to spare. Rounding is never implicit: callers round explicitly.
 */
export const Decimal = DecimalJs.clone({
  precision: 80,
  rounding: DecimalJs.ROUND_HALF_EVEN,
  toExpPos: 1000,
  toExpNeg: -1000,
});
export type Decimal = InstanceType<typeof Decimal>;

/**
 * Input bounds of every amount and fee the platform accepts (webhook, partner client, gateway, operator
 * commands, and the fold for events that bypass them): at most 40 integer digits (16 bytes of atomic units
 * is 39) and at most 36 fraction digits (the finest atomic unit the platform supports, MAX_DECIMALS). So any
 * accepted amount, and the sum of a swap's legs, stays well inside the 80 significant digits above: exact.
 * More decimals than a swap's own currency has are accepted here and judged UNVERIFIABLE by the reconciler.
 */
export const MAX_INTEGER_DIGITS = 40;
export const MAX_FRACTION_DIGITS = 36;

/** Plain decimal notation as the partner interface carries it: no exponent, no sign other than '-', no spaces. */
const DECIMAL_TEXT = /^-?(?:0|[1-9]\d{0,39}|\d{1,40})(?:\.\d{1,36})?$/;

export class DecimalFormatError extends Error {
  constructor(
    readonly input: string,
    reason: string,
  ) {
    super(`"${input.length > 64 ? input.slice(0, 64) + '…' : input}" is not a decimal amount: ${reason}`);
    this.name = 'DecimalFormatError';
  }
}

export function isDecimalText(text: unknown): text is string {
  return typeof text === 'string' && text.length <= 80 && DECIMAL_TEXT.test(text);
}

/** Parses the interface's decimal strings; refuses numbers, exponents, NaN, Infinity and whitespace. */
export function parseDecimal(text: unknown): Decimal {
  if (typeof text !== 'string')
    throw new DecimalFormatError(String(text), `expected a string, got ${typeof text}`);
  if (!isDecimalText(text))
    throw new DecimalFormatError(
      text,
      `expected digits with an optional fraction, at most ${MAX_INTEGER_DIGITS} integer and ${MAX_FRACTION_DIGITS} fraction digits`,
    );
  return new Decimal(text);
}

/** Parses and refuses negative amounts. */
export function parseNonNegativeDecimal(text: unknown): Decimal {
  const d = parseDecimal(text);
  if (d.isNegative() && !d.isZero()) throw new DecimalFormatError(String(text), 'must not be negative');
  return d;
}

/** Canonical text of a decimal: plain notation, no trailing zeros, "-0" folded to "0". */
export function formatDecimal(d: Decimal): string {
  return d.isZero() ? '0' : d.toFixed();
}
