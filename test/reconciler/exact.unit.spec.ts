import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/money/index.ts';
import { InexactArithmeticError } from '../../src/reconciler/index.ts';
import { exactDifference, exactProduct, exactSum } from '../../src/reconciler/exact.ts';

const d = (text: string) => new Decimal(text);

describe('exact arithmetic on the project Decimal (80 significant digits)', () => {
  it('adds 39 integer digits to 39 decimal places exactly (79 positions with the carry)', () => {
    const big = '9'.repeat(39);
    const tiny = '0.' + '0'.repeat(38) + '1';
    expect(exactSum(d(big), d(tiny)).toFixed()).toBe(big + '.' + '0'.repeat(38) + '1');
    expect(exactDifference(d(tiny), d(big)).toFixed()).toBe(
      '-' + '9'.repeat(38) + '8.' + '9'.repeat(38) + '9',
    );
  });

  it('throws instead of rounding when a sum could need more than 80 digits', () => {
    const big = '1' + '0'.repeat(40); // 41 integer digits
    const tiny = '0.' + '0'.repeat(38) + '1'; // 39 decimal places
    expect(() => exactSum(d(big), d(tiny))).toThrow(InexactArithmeticError);
    expect(() => exactDifference(d(big), d(tiny))).toThrow(/needs more than 80 digits; not rounded/);
    // What the guard prevents: the plain Decimal rounds this one silently.
    const plus = d('1' + '0'.repeat(60)).plus(d('0.' + '0'.repeat(29) + '1'));
    expect(plus.toFixed()).toBe('1' + '0'.repeat(60));
  });

  it('multiplies up to 80 significant digits in all, and refuses more', () => {
    const forty = '1'.repeat(40);
    expect(exactProduct(d(forty), d('0.' + '0'.repeat(10) + forty)).sd()).toBe(79);
    expect(() => exactProduct(d(forty), d('1' + forty))).toThrow(InexactArithmeticError);
    expect(exactProduct(d('1.234567890123456789'), d('0.01')).toFixed()).toBe('0.01234567890123456789');
  });

  it('zero is exact with anything', () => {
    expect(exactSum(d('0'), d('0.000000000000000001')).toFixed()).toBe('0.000000000000000001');
    expect(exactProduct(d('0'), d('0.5')).isZero()).toBe(true);
  });
});
