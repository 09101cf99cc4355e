import { describe, expect, it } from 'vitest';
import { currencyDecimals, platformCurrencies, platformCurrency } from '../../src/money/index.ts';

describe('platform currency magnitudes', () => {
  it.each([
    ['BTC', 8],
    ['ETH', 18],
    ['USDT', 6],
    ['USDT_TRC20', 6],
    ['USDT_BEP20', 18],
    ['USDC', 6],
    ['BAT', 18],
    ['LTC', 8],
    ['XRP', 6],
    ['SOL', 9],
    ['TRX', 6],
    ['DOGE', 8],
    ['ADA', 6],
    ['DOT', 10],
    ['MATIC', 18],
    ['POL', 18],
    ['BNB', 18],
    ['XLM', 7],
    ['ATOM', 6],
    ['NEAR', 24],
  ])('%s has %i decimals', (id, decimals) => {
    expect(currencyDecimals(id)).toBe(decimals);
  });

  it('returns undefined for unknown ids and never guesses by case or prototype', () => {
    for (const id of ['btc', 'Btc', 'NOPE', '', 'constructor', '__proto__', 'toString', 'about'])
      expect(currencyDecimals(id)).toBeUndefined();
  });

  it('describes each currency and keeps the table well-formed', () => {
    expect(platformCurrency('BAT')).toEqual({ id: 'BAT', decimals: 18, network: 'ethereum' });
    const all = platformCurrencies();
    expect(all.length).toBeGreaterThanOrEqual(40);
    for (const c of all) {
      expect(Number.isInteger(c.decimals) && c.decimals >= 0 && c.decimals <= 36).toBe(true);
      expect(c.id).toMatch(/^[0-9A-Z_]+$/);
      expect(c.network).not.toBe('');
    }
  });
});
