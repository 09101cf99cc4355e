import { describe, expect, it } from 'vitest';
import {
  formatReportCsv,
  formatReportTable,
  parseReportTime,
  type FinanceReport,
} from '../../src/ledger/report.ts';
import { main } from '../../src/cli/main.ts';

const report: FinanceReport = {
  period: { from: '2026-11-01T00:00:00.000Z', to: '2026-11-08T00:00:00.000Z' },
  verdicts: [
    { verdict: 'MATCHED', swaps: 12 },
    { verdict: 'MISMATCH', swaps: 1 },
  ],
  mismatches: [
    {
      swapId: 'sw-1',
      providerId: 'partner-a',
      status: 'FINISHED',
      reconciledAt: '2026-11-03T15:00:00.000Z',
      checks: [
        {
          name: 'amount.to_wallet',
          verdict: 'MISMATCH',
          expected: '0.25',
          actual: '0.2495',
          delta: '-0.0005',
          tolerance: '0',
          detail: 'fixed: short, "beyond" the slippage, see\nnotes',
        },
      ],
    },
  ],
  referralRevenue: [
    {
      providerId: 'partner-a',
      currency: 'ETH',
      amount: '123456789012345678901.000000000000000001',
      swaps: 3,
    },
  ],
  volumes: [
    {
      providerId: 'partner-a',
      currencyFrom: 'BTC',
      currencyTo: 'ETH',
      volumeFrom: '0.045',
      volumeTo: '0.735',
      swaps: 3,
    },
  ],
};

describe('report: times', () => {
  it('reads a UTC date or an ISO time with its zone', () => {
    expect(parseReportTime('2026-11-01')).toBe('2026-11-01T00:00:00.000Z');
    expect(parseReportTime('2026-11-01T10:30Z')).toBe('2026-11-01T10:30:00.000Z');
    expect(parseReportTime('2026-11-01T10:30:15.5+01:00')).toBe('2026-11-01T09:30:15.500Z');
    expect(parseReportTime('2026-11-01T10:30:00+0100')).toBe('2026-11-01T09:30:00.000Z');
    expect(parseReportTime('2026-11-01T10:30:00-05')).toBe('2026-11-01T15:30:00.000Z');
  });

  it('refuses a time without a zone, an impossible date and anything else', () => {
    for (const bad of ['2026-11-01T10:30:00', '2026-02-30', '2026-13-01', 'yesterday', '1700000000', ''])
      expect(() => parseReportTime(bad), bad).toThrow();
  });
});

describe('report: rendering', () => {
  it('CSV: one block per section, every row named by its section, fields quoted as RFC 4180 wants, the mismatch columns of the console', () => {
    expect(formatReportCsv(report)).toEqual([
      'section,from,to',
      'period,2026-11-01T00:00:00.000Z,2026-11-08T00:00:00.000Z',
      '',
      'section,verdict,swaps',
      'verdicts,MATCHED,12',
      'verdicts,MISMATCH,1',
      '',
      'section,provider_id,swap_id,status,reconciled_at,check_name,check_verdict,expected,actual,delta,tolerance,detail',
      // The negative delta is neutralised like any cell starting with "-" (src/ledger/csv.ts).
      `mismatches,partner-a,sw-1,FINISHED,2026-11-03T15:00:00.000Z,amount.to_wallet,MISMATCH,0.25,0.2495,'-0.0005,0,"fixed: short, ""beyond"" the slippage, see\nnotes"`,
      '',
      'section,provider_id,currency,referral_revenue,swaps',
      'referral_revenue,partner-a,ETH,123456789012345678901.000000000000000001,3',
      '',
      'section,provider_id,currency_from,currency_to,volume_from,volume_to,swaps',
      'volumes,partner-a,BTC,ETH,0.045,0.735,3',
    ]);
  });

  it('table: aligned columns, amounts to the right, an empty section says so', () => {
    const lines = formatReportTable({ ...report, mismatches: [] });
    expect(lines).toEqual([
      'Finance report  2026-11-01T00:00:00.000Z .. 2026-11-08T00:00:00.000Z (from inclusive, to exclusive)',
      '',
      'Reconciliation verdicts (by time of verdict)',
      '  verdict   swaps',
      '  --------  -----',
      '  MATCHED      12',
      '  MISMATCH      1',
      '',
      'Mismatches and their failing checks',
      '  (none)',
      '',
      'Referral revenue per partner and currency (by effective time)',
      '  provider_id  currency                          referral_revenue  swaps',
      '  -----------  --------  ----------------------------------------  -----',
      '  partner-a    ETH       123456789012345678901.000000000000000001      3',
      '',
      'Volume per partner and pair (net payins and payouts, by effective time)',
      '  provider_id  currency_from  currency_to  volume_from  volume_to  swaps',
      '  -----------  -------------  -----------  -----------  ---------  -----',
      '  partner-a    BTC            ETH                0.045      0.735      3',
    ]);
    // A multi-line detail stays on one line of the table.
    expect(formatReportTable(report).some((l) => l.includes('see notes'))).toBe(true);
  });
});

describe('report: command line', () => {
  const capture = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { io: { stdout: (l: string) => out.push(l), stderr: (l: string) => err.push(l) }, out, err };
  };

  it('refuses missing or bad options with exit 2, before touching a database', async () => {
    for (const args of [
      ['report', '--from', '2026-11-01'],
      ['report', '--from', '2026-11-01', '--to', '2026-11-02', '--format', 'xml'],
      ['report', '--from', '2026-11-02', '--to', '2026-11-01'],
      ['report', '--from', '2026-11-01T00:00:00', '--to', '2026-11-02'],
      ['report', '--from', '2026-11-01', '--to', '2026-11-02', '--finance-schema', 'Finance;drop'],
    ]) {
      const c = capture();
      expect(await main(args, c.io), args.join(' ')).toBe(2);
      expect(c.err.join('\n')).not.toBe('');
    }
  });

  it('is listed by help', async () => {
    const c = capture();
    await main(['help'], c.io);
    expect(c.out.join('\n')).toMatch(/report --from <time> --to <time> \[--format table\|csv\]/);
  });
});
