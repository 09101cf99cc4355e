import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/money/decimal.ts';
import {
  DEFAULT_STATEMENT_LAYOUT,
  parseStatementLayout,
  readStatement,
  StatementFileError,
  type StatementLayout,
} from '../../src/monthend/layout.ts';
import { matchStatement, isReconciled, type LedgerSwap } from '../../src/monthend/match.ts';
import { judgeFee, type DirectionalTolerance, type FeeKind } from '../../src/money/tolerance.ts';

const HEADER =
  'swap_id,status,finished_at,currency_from,amount_from,currency_to,amount_to,provider_fee,referral_fee,payout_network_fee';
const EXACT = { absolute: new Decimal(0), relative: new Decimal(0) };
const exactFees: Record<FeeKind, DirectionalTolerance> = {
  provider: { favour: EXACT, disfavour: EXACT },
  referral: { favour: EXACT, disfavour: EXACT },
  payoutNetwork: { favour: EXACT, disfavour: EXACT },
};

function refusal(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(StatementFileError);
    return (e as StatementFileError).problems;
  }
  throw new Error('expected a refusal');
}

function ledger(over: Partial<LedgerSwap> = {}): LedgerSwap {
  return {
    swapId: 's1',
    status: 'FINISHED',
    final: true,
    finalAt: '2026-10-10T10:00:00.000Z',
    currencyFrom: 'BTC',
    amountFrom: '0.1',
    currencyTo: 'ETH',
    amountTo: '2.5',
    providerFees: '0.01',
    referralFees: '0.005',
    payoutNetworkFees: '0.001',
    bookedInPeriod: true,
    priorPeriod: null,
    ...over,
  };
}
const line = (cells: string) => `${HEADER}\n${cells}\n`;
const S1 = 's1,FINISHED,2026-10-10T10:00:00Z,BTC,0.1,ETH,2.5,0.01,0.005,0.001';
const currencies = { currencies: { BTC: 'BTC', ETH: 'ETH', USDT: 'USDT' } };

describe('statement layout and reading', () => {
  it('reads the default layout: amounts as decimal text, dates as ISO UTC', () => {
    const [l] = readStatement(line(S1), DEFAULT_STATEMENT_LAYOUT, currencies);
    expect(l).toMatchObject({
      lineNo: 2,
      swapId: 's1',
      status: 'FINISHED',
      amountTo: '2.5',
      referralFee: '0.005',
      finishedAt: '2026-10-10T10:00:00.000Z',
    });
  });

  it("reads a provider's mapping: other headers, ';' and ',' decimals, a dotted date, its status words and currency codes", () => {
    const problems: string[] = [];
    const layout = parseStatementLayout(
      {
        delimiter: ';',
        decimalSeparator: ',',
        dateFormat: 'DD.MM.YYYY HH:mm:ss',
        columns: {
          swapId: 'Txn',
          status: 'State',
          finishedAt: 'Done',
          currencyTo: 'Cur',
          amountTo: 'Payout',
          referralFee: 'Ref',
          amountFrom: null,
          currencyFrom: null,
          providerFee: null,
          payoutNetworkFee: null,
        },
        statuses: { done: 'FINISHED' },
        currencies: { usdterc20: 'USDT' },
      },
      'providers[0]',
      problems,
    ) as StatementLayout;
    expect(problems).toEqual([]);
    const [l] = readStatement(
      'Txn;State;Done;Cur;Payout;Ref\nabc;done;31.10.2026 23:59:59;usdterc20;1234,50;"0,25"\n',
      layout,
    );
    expect(l).toMatchObject({
      swapId: 'abc',
      status: 'FINISHED',
      statusWord: 'done',
      currencyTo: 'USDT',
      amountTo: '1234.50',
      referralFee: '0.25',
      finishedAt: '2026-10-31T23:59:59.000Z',
      amountFrom: null,
    });
  });

  it('refuses a bad layout section naming each key', () => {
    const problems: string[] = [];
    parseStatementLayout(
      {
        delimiter: '|',
        decimalSeparator: ';',
        dateFormat: 'dd/mm',
        columns: { swapId: null, nope: 'x' },
        statuses: { x: 'DONE' },
        extra: 1,
      },
      'p',
      problems,
    );
    expect(problems.join('\n')).toMatch(/p\.statementLayout\.extra: unknown key/);
    expect(problems.join('\n')).toMatch(/delimiter/);
    expect(problems.join('\n')).toMatch(/decimalSeparator/);
    expect(problems.join('\n')).toMatch(/dateFormat/);
    expect(problems.join('\n')).toMatch(/columns\.swapId: must be a column header$/m);
    expect(problems.join('\n')).toMatch(/columns\.nope: unknown field/);
    expect(problems.join('\n')).toMatch(/statuses\.x: must be an internal status/);
  });

  it('never guesses a separator: a comma in an amount of a "." layout is refused naming the line and field', () => {
    const problems = refusal(() =>
      readStatement(
        line('s1,FINISHED,,BTC,0.1,ETH,"2,5",0.01,0.005,0.001'),
        DEFAULT_STATEMENT_LAYOUT,
        currencies,
      ),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^line 2, amountTo \(column "amount_to"\): "2,5" holds ","/),
    ]);
  });

  it('refuses unknown status words and currency codes, bad dates, negative amounts, duplicates, all at once', () => {
    const text = `${HEADER}\ns1,DONE,,BTC,0.1,ETH,2.5,,,\ns2,FINISHED,2026-02-31T00:00:00Z,XYZ,0.1,ETH,-1,,,\ns3,FINISHED,,BTC,1e3,ETH,1,,,\ns3,FINISHED,,BTC,1,ETH,1,,,\n`;
    const problems = refusal(() => readStatement(text, DEFAULT_STATEMENT_LAYOUT, currencies));
    expect(problems).toEqual([
      expect.stringMatching(/^line 2, status \(column "status"\): "DONE" is in neither/),
      expect.stringMatching(/^line 3, amountTo .*not a non-negative decimal/),
      expect.stringMatching(/^line 3, currencyFrom .*"XYZ" is in neither/),
      expect.stringMatching(/^line 3, finishedAt .*not a date/),
      expect.stringMatching(/^line 4, amountFrom .*"1e3" is not a non-negative decimal/),
      expect.stringMatching(/^line 5, swapId .*s3 is also on line 4/),
    ]);
  });

  it('refuses a DD.MM date that does not exist rather than rolling it over', () => {
    const layout = { ...DEFAULT_STATEMENT_LAYOUT, dateFormat: 'DD.MM.YYYY' } as StatementLayout;
    const problems = refusal(() => readStatement(line('s1,FINISHED,31.11.2026,,,,,,,'), layout));
    expect(problems[0]).toMatch(/line 2, finishedAt .*not a date of the layout's format DD\.MM\.YYYY/);
  });

  it('refuses a file without the required columns, a ragged line, an empty file, an open quote', () => {
    expect(refusal(() => readStatement('id,state\n1,FINISHED\n', DEFAULT_STATEMENT_LAYOUT))[0]).toMatch(
      /line 1: no column "swap_id" for swapId/,
    );
    expect(refusal(() => readStatement(`${HEADER}\ns1,FINISHED\n`, DEFAULT_STATEMENT_LAYOUT))[0]).toMatch(
      /line 2: 2 fields, the header has 10/,
    );
    expect(refusal(() => readStatement('', DEFAULT_STATEMENT_LAYOUT))[0]).toMatch(/empty/);
    expect(refusal(() => readStatement(`${HEADER}\n"s1,FINISHED`, DEFAULT_STATEMENT_LAYOUT))[0]).toMatch(
      /line 2: a quoted field is not closed/,
    );
    expect(refusal(() => readStatement(`${HEADER}\n`, DEFAULT_STATEMENT_LAYOUT))[0]).toMatch(/no line/);
  });
});

describe('statement matcher', () => {
  const read = (cells: string) => readStatement(line(cells), DEFAULT_STATEMENT_LAYOUT, currencies);

  it('matched: every stated figure equal (1.50 equals 1.5)', () => {
    const m = matchStatement(read('s1,FINISHED,,BTC,0.10,ETH,2.50,0.01,0.005,0.001'), [ledger()], exactFees);
    expect(m).toEqual([expect.objectContaining({ swapId: 's1', outcome: 'matched', differences: [] })]);
    expect(isReconciled(m)).toBe(true);
  });

  it('statement_only and ledger_only (a FINISHED swap booked in the period, not listed)', () => {
    const m = matchStatement(
      read('zz,FINISHED,,,,,,,,'),
      [
        ledger(),
        ledger({ swapId: 'r1', status: 'REFUNDED' }),
        ledger({ swapId: 'old', bookedInPeriod: false }),
      ],
      exactFees,
    );
    expect(m.map((l) => [l.swapId, l.outcome, l.lineNo])).toEqual([
      ['zz', 'statement_only', 2],
      ['s1', 'ledger_only', null],
    ]);
    expect(isReconciled(m)).toBe(false);
  });

  it('status_differs wins over an amount difference, and both are listed', () => {
    const [m] = matchStatement(read('s1,REFUNDED,,BTC,0.1,ETH,2.4,0.01,0.005,0.001'), [ledger()], exactFees);
    expect(m!.outcome).toBe('status_differs');
    expect(m!.differences.map((d) => [d.field, d.ledger, d.statement, d.delta])).toEqual([
      ['status', 'FINISHED', 'REFUNDED', null],
      ['amountTo', '2.5', '2.4', '-0.1'],
    ]);
  });

  it('amount_differs: an amount, a currency, or a fee the ledger does not know', () => {
    const [a] = matchStatement(read('s1,FINISHED,,BTC,0.1,USDT,2.5,0.01,0.005,0.001'), [ledger()], exactFees);
    expect(a!.outcome).toBe('amount_differs');
    expect(a!.differences[0]).toMatchObject({
      field: 'currencyTo',
      ledger: 'ETH',
      statement: 'USDT',
      verdict: 'differs',
    });
    const [b] = matchStatement(read('s1,FINISHED,,,,,,,0.005,'), [ledger({ referralFees: null })], exactFees);
    expect(b!.differences).toEqual([
      expect.objectContaining({ field: 'referralFee', ledger: null, statement: '0.005', verdict: 'differs' }),
    ]);
  });

  it('fees are directional with the reconciliation tolerances: referral down is disfavour, up is favour', () => {
    const tol = { absolute: new Decimal(0), relative: new Decimal('0.1') };
    const fees = { ...exactFees, referral: { favour: tol, disfavour: EXACT } };
    const up = matchStatement(read('s1,FINISHED,,,,,,,0.0055,'), [ledger()], fees)[0]!;
    expect(up.outcome).toBe('matched');
    expect(up.differences).toEqual([
      expect.objectContaining({
        field: 'referralFee',
        direction: 'favour',
        delta: '0.0005',
        tolerance: '0.0005',
        verdict: 'within_tolerance',
      }),
    ]);
    const down = matchStatement(read('s1,FINISHED,,,,,,,0.0049,'), [ledger()], fees)[0]!;
    expect(down.outcome).toBe('amount_differs');
    expect(down.differences[0]).toMatchObject({
      direction: 'disfavour',
      delta: '-0.0001',
      tolerance: '0',
      verdict: 'differs',
    });
  });

  it('provider fee up is disfavour: beyond its absolute tolerance it differs, within it matches', () => {
    const fees = {
      ...exactFees,
      provider: { favour: EXACT, disfavour: { absolute: new Decimal('0.001'), relative: new Decimal(0) } },
    };
    expect(matchStatement(read('s1,FINISHED,,,,,,0.011,,'), [ledger()], fees)[0]!.outcome).toBe('matched');
    expect(matchStatement(read('s1,FINISHED,,,,,,0.0111,,'), [ledger()], fees)[0]!.outcome).toBe(
      'amount_differs',
    );
    expect(
      matchStatement(read('s1,FINISHED,,,,,,0.009,,'), [ledger()], fees)[0]!.differences[0],
    ).toMatchObject({ direction: 'favour', verdict: 'differs' });
  });

  it('carries the prior period of a swap whose postings this month adjust an earlier one', () => {
    const [m] = matchStatement(read(S1), [ledger({ priorPeriod: '2026-09' })], exactFees);
    expect(m).toMatchObject({ outcome: 'matched', priorPeriod: '2026-09' });
  });

  it('judgeFee is the one directional rule (the reconciler reads the same)', () => {
    const t = { favour: EXACT, disfavour: { absolute: new Decimal(0), relative: new Decimal('0.5') } };
    expect(judgeFee('payoutNetwork', new Decimal('2'), new Decimal('3'), t)).toMatchObject({
      direction: 'disfavour',
      within: true,
    });
    expect(judgeFee('payoutNetwork', new Decimal('2'), new Decimal('1.9'), t)).toMatchObject({
      direction: 'favour',
      within: false,
    });
  });
});
