import { describe, expect, it } from 'vitest';
import { isQuoteFinding, quoteAmountToFinding } from '../../src/gateway/quote-check.ts';

/** A fixed swap's signed amount_to_wallet against the quote's amountTo + payoutNetworkFees (hand-computed). */
describe('quote.amount_to finding', () => {
  const decimals = (d: Record<string, number>) => (c: string) => d[c];

  it.each([
    // amountTo, fee, decimals, signed atomic, outcome
    ['8.1', '0.0021', 18, '8102100000000000000', 'ok'],
    ['8.1', '0.0021', 18, '8100000000000000000', 'mismatch'], // the fee left out of the signed figure
    ['100', '1', 0, '101', 'ok'],
    ['12.5', '0.25', 6, '12750000', 'ok'],
    ['12.5', '0.25', 6, '12750001', 'mismatch'],
    ['0.001', '0.00001', 8, '101000', 'ok'],
    // above 2^64 atomic units: 20,000 units at 18 decimals
    ['19999', '1', 18, '20000000000000000000000', 'ok'],
    ['19999', '1', 18, '20000000000000000000001', 'mismatch'],
  ])('%s + %s at %i decimals vs %s: %s', (amountTo, fee, d, signed, outcome) => {
    const f = quoteAmountToFinding(signed, { amountTo, payoutNetworkFees: fee }, 'X', decimals({ X: d }));
    expect(f.outcome).toBe(outcome);
    expect(f.check).toBe('quote.amount_to');
    expect(f.actual).toBe(signed);
  });

  it('gives the expected figure in atomic units', () => {
    const f = quoteAmountToFinding(
      '1',
      { amountTo: '12.5', payoutNetworkFees: '0.25' },
      'X',
      decimals({ X: 6 }),
    );
    expect(f.expected).toBe('12750000');
    expect(f.detail).toContain('12.5');
  });

  it('unverifiable, never rounded: more quote decimals than the currency has, unknown currency, no payload', () => {
    expect(
      quoteAmountToFinding('1', { amountTo: '1.0000001', payoutNetworkFees: '0' }, 'X', decimals({ X: 6 }))
        .outcome,
    ).toBe('unverifiable');
    expect(
      quoteAmountToFinding('1', { amountTo: '1', payoutNetworkFees: '0' }, 'Y', decimals({})).outcome,
    ).toBe('unverifiable');
    expect(
      quoteAmountToFinding(null, { amountTo: '1', payoutNetworkFees: '0' }, 'X', decimals({ X: 6 })).outcome,
    ).toBe('unverifiable');
  });

  it('quote findings never withhold a swap', () => {
    expect(isQuoteFinding({ check: 'quote.amount_to' })).toBe(true);
    expect(isQuoteFinding({ check: 'payload.amount_to_provider' })).toBe(false);
  });
});
