import { describe, expect, it } from 'vitest';
import {
  chainBreaks,
  chainHead,
  closeStatementProblems,
  closeTimingProblem,
  Seal,
  type PeriodEvent,
  type SealedPosting,
} from '../../src/monthend/seal.ts';
import { periodOf, priorPeriodOf } from '../../src/ledger/periods.ts';

const posting = (over: Partial<SealedPosting> = {}): SealedPosting => ({
  entryId: '0190a000-0000-7000-8000-000000000001',
  line: 1,
  entryKind: 'final',
  providerId: 'p',
  swapId: 's1',
  swapVersion: 2,
  account: 'user_payout',
  currency: 'ETH',
  amount: '2.5',
  effectiveAt: '2026-10-10T10:00:00.000Z',
  recordedAt: '2026-10-10T10:00:01.000Z',
  ...over,
});
const digestOf = (postings: SealedPosting[], previous: string | null = null, period = '2026-10') => {
  const s = new Seal(period, previous);
  for (const p of postings) s.posting(p);
  return s.digest();
};

describe('period seal', () => {
  it('is a digest of the postings, the period and the previous digest: any change shows', () => {
    const base = digestOf([posting(), posting({ line: 2, amount: '-2.5', account: 'partner_clearing' })]);
    expect(digestOf([posting(), posting({ line: 2, amount: '-2.5', account: 'partner_clearing' })])).toBe(
      base,
    );
    expect(
      digestOf([
        posting({ amount: '2.50' }),
        posting({ line: 2, amount: '-2.5', account: 'partner_clearing' }),
      ]),
    ).toBe(base);
    expect(
      digestOf([
        posting({ amount: '2.6' }),
        posting({ line: 2, amount: '-2.5', account: 'partner_clearing' }),
      ]),
    ).not.toBe(base);
    expect(digestOf([posting()])).not.toBe(base);
    expect(
      digestOf([posting(), posting({ line: 2, amount: '-2.5', account: 'partner_clearing' })], 'ab'),
    ).not.toBe(base);
    expect(
      digestOf(
        [posting(), posting({ line: 2, amount: '-2.5', account: 'partner_clearing' })],
        null,
        '2026-11',
      ),
    ).not.toBe(base);
  });

  it('a field cannot slide into its neighbour (separators are escaped)', () => {
    expect(digestOf([posting({ swapId: 'a|b', providerId: 'p' })])).not.toBe(
      digestOf([posting({ swapId: 'b', providerId: 'p|a' })]),
    );
  });

  it('takes postings in (entryId, line) order only', () => {
    const s = new Seal('2026-10', null);
    s.posting(posting({ line: 2 }));
    expect(() => s.posting(posting({ line: 1 }))).toThrow(/order/);
  });

  it('chains closes: the head is the latest close, a break is named', () => {
    const events: PeriodEvent[] = [
      { kind: 'closed', period: '2026-09', digest: 'a', previousDigest: null },
      { kind: 'closed', period: '2026-10', digest: 'b', previousDigest: 'a' },
      { kind: 'reopened', period: '2026-10', digest: 'b', previousDigest: null },
    ];
    expect(chainHead(events)).toBe('b');
    expect(chainBreaks(events)).toEqual([]);
    expect(
      chainBreaks([...events, { kind: 'closed', period: '2026-10', digest: 'c', previousDigest: 'a' }]),
    ).toEqual([expect.stringMatching(/close of 2026-10 chains to a, the close before it has b/)]);
  });

  it('closes a month only once it has ended, and not twice', () => {
    const closed: PeriodEvent[] = [{ kind: 'closed', period: '2026-10', digest: 'a', previousDigest: null }];
    expect(closeTimingProblem('2026-11', new Date('2026-11-30T23:59:59Z'), [])).toMatch(/has not ended/);
    expect(closeTimingProblem('2026-11', new Date('2026-12-01T00:00:00Z'), [])).toBeUndefined();
    expect(closeTimingProblem('2026-10', new Date('2026-12-01T00:00:00Z'), closed)).toMatch(/closed already/);
    expect(
      closeTimingProblem('2026-10', new Date('2026-12-01T00:00:00Z'), [
        ...closed,
        { kind: 'reopened', period: '2026-10', digest: 'a', previousDigest: null },
      ]),
    ).toBeUndefined();
    expect(closeTimingProblem('2026-13', new Date(), [])).toMatch(/not a period/);
  });

  it('needs every provider reconciled, or the differences accepted', () => {
    const standing = [
      { providerId: 'a', statementId: null, differences: 0 },
      { providerId: 'b', statementId: 'st', differences: 2 },
      { providerId: 'c', statementId: 'st2', differences: 0 },
    ];
    expect(closeStatementProblems(standing, false)).toEqual([
      'a: no statement imported for the period',
      'b: statement st has 2 line(s) not matched',
    ]);
    expect(closeStatementProblems(standing, true)).toEqual([]);
  });
});

describe("a posting's period", () => {
  it('is the UTC month of its recordedAt; an earlier effectiveAt month is its prior period', () => {
    expect(periodOf('2026-10-31T23:59:59.999Z')).toBe('2026-10');
    expect(periodOf('2026-11-01T00:30:00+01:00')).toBe('2026-10');
    expect(priorPeriodOf({ recordedAt: '2026-11-02T00:00:00Z', effectiveAt: '2026-10-30T00:00:00Z' })).toBe(
      '2026-10',
    );
    expect(
      priorPeriodOf({ recordedAt: '2026-11-02T00:00:00Z', effectiveAt: '2026-11-01T00:00:00Z' }),
    ).toBeNull();
  });
});
