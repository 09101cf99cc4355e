import { describe, expect, it } from 'vitest';
import { demoStatement, periodOf } from '../../src/demo/statement.ts';
import { DEMO_CURRENCIES } from '../../src/demo/provision.ts';
import { DEFAULT_STATEMENT_LAYOUT, readStatement } from '../../src/monthend/layout.ts';
import type { SimSwapView } from '../../src/simulator/index.ts';

const view = (n: number, over: Partial<SimSwapView> = {}): SimSwapView =>
  ({
    swapId: `s-${n}`,
    currencyFrom: 'btc',
    currencyTo: 'eth',
    amountFrom: '0.1',
    createdAt: '2026-11-03T10:00:00.000Z',
    status: 'FINISHED',
    final: true,
    history: [
      { status: 'PENDING', at: '2026-11-03T10:00:01.000Z' },
      { status: 'FINISHED', at: `2026-11-03T10:0${n}:00.000Z` },
    ],
    report: {
      amount: '1.5',
      providerFees: n === 2 ? '0.012345' : '0.02',
      referralFees: '0.002',
      payoutNetworkFees: '0.0004',
    },
    ...over,
  }) as unknown as SimSwapView;

describe("the demo partner's statement", () => {
  it('lists the FINISHED swaps of the month but the first, one fee rounded, and a swap it invented', () => {
    const swaps = [
      view(1),
      view(2),
      view(3),
      view(4, { status: 'REFUNDED' }),
      view(5, { final: false, status: 'PENDING' }),
      view(6, { history: [{ status: 'FINISHED', at: '2026-10-31T23:59:59.000Z' }] }),
    ];
    const st = demoStatement(swaps, '2026-11', DEMO_CURRENCIES, 'invented-1')!;
    expect(st).toMatchObject({ forgot: 's-1', rounded: 's-2', invented: 'invented-1' });
    const lines = readStatement(st.csv, DEFAULT_STATEMENT_LAYOUT, { currencies: DEMO_CURRENCIES });
    expect(lines.map((l) => [l.swapId, l.status, l.currencyFrom, l.currencyTo, l.providerFee])).toEqual([
      ['s-2', 'FINISHED', 'BTC', 'ETH', '0.01'],
      ['s-3', 'FINISHED', 'BTC', 'ETH', '0.02'],
      ['invented-1', 'FINISHED', 'BTC', 'ETH', '0.02'],
    ]);
    expect(lines[0]).toMatchObject({
      finishedAt: '2026-11-03T10:02:00.000Z',
      amountTo: '1.5',
      amountFrom: '0.1',
    });
  });

  it('is not written below its minimum of FINISHED swaps in the month', () => {
    expect(demoStatement([view(1), view(2)], '2026-11', DEMO_CURRENCIES)).toBeUndefined();
    expect(demoStatement([view(1), view(2), view(3)], '2026-11', DEMO_CURRENCIES, 'x', 6)).toBeUndefined();
    expect(demoStatement([view(1), view(2), view(3)], '2026-12', DEMO_CURRENCIES)).toBeUndefined();
  });

  it('rounds no fee when none has more than two decimals', () => {
    const st = demoStatement([view(1), view(3), view(4)], '2026-11', DEMO_CURRENCIES)!;
    expect(st.rounded).toBeUndefined();
    expect(periodOf('2026-11-30T23:59:59.999Z')).toBe('2026-11');
  });
});
