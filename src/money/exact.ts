import { Decimal } from '../money/decimal.ts';

/**
 * The project's Decimal rounds any result beyond its precision (80 significant digits), silently.
 * Each operation here checks first that its exact result fits, and throws instead of rounding.
 * Real amounts never come close; a 100-character amount from a partner can.
 */
export class InexactArithmeticError extends Error {
  override name = 'InexactArithmeticError';
}

function checkSum(a: Decimal, b: Decimal, op: string): void {
  // Digit positions from the higher leading digit, plus one for a carry, down to the last decimal
  // place of either: conservative by at most that one carry digit.
  const digits = Math.max(a.e, b.e) + Math.max(a.decimalPlaces(), b.decimalPlaces()) + 2;
  if (digits > Decimal.precision)
    throw new InexactArithmeticError(
      `${op} of ${a.toFixed()} and ${b.toFixed()} needs more than ${Decimal.precision} digits; not rounded`,
    );
}

export function exactSum(a: Decimal, b: Decimal): Decimal {
  checkSum(a, b, 'the sum');
  return a.plus(b);
}

export function exactDifference(a: Decimal, b: Decimal): Decimal {
  checkSum(a, b, 'the difference');
  return a.minus(b);
}

export function exactProduct(a: Decimal, b: Decimal): Decimal {
  // The product's significant digits are at most the sum of the factors'.
  if (a.sd() + b.sd() > Decimal.precision)
    throw new InexactArithmeticError(
      `the product of ${a.toFixed()} and ${b.toFixed()} needs more than ${Decimal.precision} digits; not rounded`,
    );
  return a.times(b);
}
