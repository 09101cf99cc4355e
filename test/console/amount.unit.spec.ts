import { describe, expect, it } from 'vitest';
import { amount, figure, formatAmount } from '../../src/console/amount.ts';
import { table } from '../../src/console/html.ts';

describe('formatAmount: one way to write an amount', () => {
  it("pads to the currency's precision from Postgres' text, whatever scale the sum came with", () => {
    expect(formatAmount('-2.0', 'BTC')).toBe('-2.00000000');
    expect(formatAmount('0.0060', 'BTC')).toBe('0.00600000');
    expect(formatAmount('0.24', 'ETH')).toBe('0.240000000000000000');
    expect(formatAmount('0', 'BTC')).toBe('0.00000000');
    expect(formatAmount('-0.00', 'BTC')).toBe('0.00000000');
  });

  it('never rounds away digits beyond the precision: they are a fault to see, not noise to hide', () => {
    expect(formatAmount('0.00500000000000040', 'BTC')).toBe('0.0050000000000004');
    expect(formatAmount('1.123456789', 'BTC')).toBe('1.123456789');
  });

  it('writes huge and tiny values digit for digit, never with an exponent or through a float', () => {
    expect(formatAmount('340282366920938463463374607431768211455.5', 'BTC')).toBe(
      '340282366920938463463374607431768211455.50000000',
    );
    expect(formatAmount('0.000000000000000001', 'ETH')).toBe('0.000000000000000001');
    expect(formatAmount('9007199254740993', 'BTC')).toBe('9007199254740993.00000000');
  });

  it('unknown or no currency: the exact figure, trailing zeros dropped', () => {
    expect(formatAmount('0.00500000000000040', 'NOPE')).toBe('0.0050000000000004');
    expect(formatAmount('-2.0', null)).toBe('-2');
    expect(formatAmount('-0.0')).toBe('0');
  });

  it('null or empty is a dash; text that is not a decimal is left as it is', () => {
    expect(formatAmount(null, 'BTC')).toBe('—');
    expect(formatAmount(undefined)).toBe('—');
    expect(formatAmount('', 'BTC')).toBe('—');
    expect(formatAmount('1e3', 'BTC')).toBe('1e3');
    expect(formatAmount('FINISHED')).toBe('FINISHED');
  });
});

describe('amount and figure in a page', () => {
  it('right-aligns an amount cell in a table, escaping its data attributes', () => {
    const t = table(['x', 'balance'], [['a', amount('1.5', 'BTC', { balance: 'p:"BTC"' })]]).text;
    expect(t).toContain(
      '<td class="num"><span class="num" data-balance="p:&quot;BTC&quot;">1.50000000</span></td>',
    );
    expect(t).toContain('<td>a</td>');
  });

  it("shows a check's decimal figure as an amount and its text as text", () => {
    expect(figure('0.0010').text).toBe('<span class="num">0.001</span>');
    expect(figure('<b>').text).toBe('&lt;b&gt;');
    expect(figure(null).text).toBe('—');
    expect(figure('').text).toBe('—');
  });
});
