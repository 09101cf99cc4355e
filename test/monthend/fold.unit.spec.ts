import { describe, expect, it } from 'vitest';
import { newEvent } from '../../src/events/keys.ts';
import type { StatementLineMatch } from '../../src/events/types.ts';
import { foldEvent } from '../../src/projector/fold.ts';
import { WorkingSet } from '../../src/projector/state.ts';

const position = (offset: number) => ({ topic: 't', partition: 0, offset: BigInt(offset) });
const line = (over: Partial<StatementLineMatch> = {}): StatementLineMatch => ({
  lineNo: 2,
  swapId: 's1',
  outcome: 'matched',
  statusWord: 'FINISHED',
  status: 'FINISHED',
  finishedAt: null,
  currencyFrom: null,
  amountFrom: null,
  currencyTo: null,
  amountTo: '1.5',
  providerFee: null,
  referralFee: null,
  payoutNetworkFee: null,
  ledgerStatus: 'FINISHED',
  priorPeriod: null,
  differences: [],
  ...over,
});
const statement = (period: string, lines: StatementLineMatch[]) =>
  newEvent(
    'StatementImported',
    new Date('2026-11-02T00:00:00Z'),
    {
      period,
      fileName: 'f.csv',
      fileDigest: 'ab',
      layout: 'default',
      operator: 'alice',
      reason: null,
      supersedes: null,
      lines,
    },
    { providerId: 'p', source: 'ops', aggregateKey: 'statement:p:2026-10' },
  );

describe('the fold of month-end events', () => {
  it('appends a statement and its lines, in order, keyed by the event id', () => {
    const ws = new WorkingSet();
    const e = statement('2026-10', [line(), line({ lineNo: null, swapId: 's2', outcome: 'ledger_only' })]);
    expect(foldEvent(ws, e, position(0))!.outcome).toBe('applied');
    expect(ws.newStatements).toEqual([
      expect.objectContaining({ statementId: e.eventId, providerId: 'p', period: '2026-10', lineCount: 2 }),
    ]);
    expect(ws.newStatementLines.map((l) => [l.seq, l.swapId, l.outcome])).toEqual([
      [1, 's1', 'matched'],
      [2, 's2', 'ledger_only'],
    ]);
  });

  it('rejects (journaled, stored nothing) a statement with a bad period, outcome or amount', () => {
    for (const e of [
      statement('2026-13', [line()]),
      statement('2026-10', [line({ outcome: 'fine' })]),
      statement('2026-10', [line({ amountTo: '-1' })]),
    ]) {
      const ws = new WorkingSet();
      const row = foldEvent(ws, e, position(0))!;
      expect(row.outcome).toBe('rejected');
      expect(row.reason).toMatch(/^refused by the fold's input bounds/);
      expect(ws.newStatements).toEqual([]);
      expect(ws.newStatementLines).toEqual([]);
    }
  });

  it('appends closes and reopenings of periods', () => {
    const ws = new WorkingSet();
    const close = newEvent(
      'PeriodClosed',
      new Date('2026-11-03T00:00:00Z'),
      {
        period: '2026-10',
        operator: 'a',
        reason: 'r',
        digest: 'd',
        previousDigest: null,
        postingCount: 3,
        statementIds: [],
        acceptedDifferences: true,
      },
      { providerId: '-', source: 'ops', aggregateKey: 'periods' },
    );
    const reopen = newEvent(
      'PeriodReopened',
      new Date('2026-11-04T00:00:00Z'),
      { period: '2026-10', operator: 'b', reason: 'audit', digest: 'd' },
      { providerId: '-', source: 'ops', aggregateKey: 'periods' },
    );
    foldEvent(ws, close, position(0));
    foldEvent(ws, reopen, position(1));
    expect(ws.newPeriodEvents.map((p) => [p.kind, p.period, p.postingCount, p.acceptedDifferences])).toEqual([
      ['closed', '2026-10', 3, true],
      ['reopened', '2026-10', null, false],
    ]);
  });
});
