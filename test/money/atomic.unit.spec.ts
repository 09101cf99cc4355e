import { describe, expect, it } from 'vitest';
import {
  AtomicAmountError,
  Decimal,
  ExcessPrecisionError,
  InvalidDecimalsError,
  MalformedAmountError,
  NegativeAmountError,
  atomicToDecimal,
  fromAtomicUnits,
  toAtomicUnits,
} from '../../src/money/index.ts';

describe('toAtomicUnits', () => {
  it.each([
    ['0.0000115', 8, 1150n],
    ['1', 8, 100000000n],
    ['0', 18, 0n],
    ['1.5', 18, 1500000000000000000n],
    ['123.456789', 6, 123456789n],
    ['007.10', 2, 710n],
    ['1.50', 1, 15n], // trailing zeros past the precision change no value
    ['42', 0, 42n],
  ])('%s at %i decimals is %s', (text, decimals, atomic) => {
    expect(toAtomicUnits(text, decimals)).toBe(atomic);
  });

  it('is exact far beyond 2^53 and 2^64, where a JS number would round', () => {
    expect(toAtomicUnits('18.446744073709551617', 18)).toBe(2n ** 64n + 1n);
    expect(toAtomicUnits('9007199254740993', 0)).toBe(9007199254740993n);
    expect(toAtomicUnits('340282366920938463463.374607431768211455', 18)).toBe(2n ** 128n - 1n);
  });

  it('accepts the project Decimal, exactly', () => {
    expect(toAtomicUnits(new Decimal('0.000000000000000001'), 18)).toBe(1n);
    expect(toAtomicUnits(new Decimal('-0'), 8)).toBe(0n);
    expect(toAtomicUnits(new Decimal('123456789012345678901234.5'), 1)).toBe(1234567890123456789012345n);
  });

  it('refuses excess precision instead of rounding', () => {
    expect(() => toAtomicUnits('0.000000001', 8)).toThrow(ExcessPrecisionError);
    expect(() => toAtomicUnits('1.0000000000000000001', 18)).toThrow(
      /more than 18 significant decimal places/,
    );
    expect(() => toAtomicUnits('0.5', 0)).toThrow(ExcessPrecisionError);
  });

  it('refuses negative amounts, also as Decimal', () => {
    expect(() => toAtomicUnits('-1', 8)).toThrow(NegativeAmountError);
    expect(() => toAtomicUnits('-0.5', 8)).toThrow(/is negative/);
    expect(() => toAtomicUnits(new Decimal('-2'), 8)).toThrow(NegativeAmountError);
  });

  it.each([
    '',
    ' 1',
    '1 ',
    '1e8',
    '1E-8',
    '.5',
    '5.',
    '+1',
    '1,5',
    '0x10',
    'NaN',
    'Infinity',
    '--1',
    '-',
    '1.2.3',
    '١',
  ])('refuses malformed %j', (text) => {
    expect(() => toAtomicUnits(text, 8)).toThrow(MalformedAmountError);
  });

  it('refuses non-strings and non-finite Decimals', () => {
    expect(() => toAtomicUnits(1.5 as unknown as string, 8)).toThrow(/expected a string, got number/);
    expect(() => toAtomicUnits(new Decimal(NaN), 8)).toThrow(MalformedAmountError);
    expect(() => toAtomicUnits(new Decimal(Infinity), 8)).toThrow(MalformedAmountError);
  });

  it('refuses over-long text', () => {
    expect(() => toAtomicUnits('1'.repeat(101), 0)).toThrow(/longer than 100/);
  });

  it('refuses impossible decimals', () => {
    for (const d of [-1, 1.5, 37, Number.NaN])
      expect(() => toAtomicUnits('1', d)).toThrow(InvalidDecimalsError);
  });

  it('gives every refusal a reason on the common base class', () => {
    const reasons = ['x', '-1', '0.001'].map((t) => {
      try {
        toAtomicUnits(t, 2);
        return 'none';
      } catch (e) {
        expect(e).toBeInstanceOf(AtomicAmountError);
        return (e as AtomicAmountError).reason;
      }
    });
    expect(reasons).toEqual(['malformed', 'negative', 'excess_precision']);
  });
});

describe('fromAtomicUnits', () => {
  it.each([
    [1150n, 8, '0.0000115'],
    [0n, 8, '0'],
    [100000000n, 8, '1'],
    [1n, 18, '0.000000000000000001'],
    [2n ** 64n + 1n, 18, '18.446744073709551617'],
    [42n, 0, '42'],
    [6000000000000n, 18, '0.000006'],
  ])('%s at %i decimals is %s', (atomic, decimals, text) => {
    expect(fromAtomicUnits(atomic, decimals)).toBe(text);
  });

  it('round-trips with toAtomicUnits', () => {
    for (const [text, d] of [
      ['0.0000115', 8],
      ['123456.000001', 6],
      ['0', 0],
      ['99999999999.999999999', 9],
    ] as const)
      expect(fromAtomicUnits(toAtomicUnits(text, d), d)).toBe(text);
  });

  it('refuses negative atomic units and numbers', () => {
    expect(() => fromAtomicUnits(-1n, 8)).toThrow(NegativeAmountError);
    expect(() => fromAtomicUnits(5 as unknown as bigint, 8)).toThrow(MalformedAmountError);
  });

  it('gives an exact Decimal', () => {
    expect(atomicToDecimal(2n ** 64n + 1n, 18).toFixed()).toBe('18.446744073709551617');
  });
});
