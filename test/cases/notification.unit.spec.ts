import { describe, expect, it } from 'vitest';
import { notificationRetryMs, owedNotifications, type NotifiedCase } from '../../src/cases/notification.ts';

const DAY = 86_400_000;
const base: NotifiedCase = {
  providerId: 'p1',
  swapId: 's1',
  state: 'open',
  trigger: 'mismatch',
  openedAt: '2026-11-01T00:00:00.000Z',
  openings: 1,
  amountAtStake: '0.000002',
  stakeCurrency: 'BTC',
  failing: 'amount.to_wallet MISMATCH 0.000003',
};
const at = (iso: string) => Date.parse(iso);

describe('case notifications owed', () => {
  it('a new case owes its opening, keyed by its opening', () => {
    const owed = owedNotifications(base, at('2026-11-02T00:00:00Z'), 7 * DAY);
    expect(owed.map((n) => [n.swapId, n.opening, n.kind])).toEqual([['s1', 1, 'opened']]);
    expect(owed[0]!.message.text).toBe(
      'swap-ledger: case p1/s1 opened (mismatch, 0.000002 BTC at stake; state open, opened 2026-11-01T00:00:00.000Z): amount.to_wallet MISMATCH 0.000003',
    );
    expect(owed[0]!.message.case).toMatchObject({ provider: 'p1', kind: 'opened', currency: 'BTC' });
  });

  it('a reopened case owes a reopening under its new opening number', () => {
    const owed = owedNotifications({ ...base, openings: 3 }, at('2026-11-02T00:00:00Z'), 7 * DAY);
    expect(owed.map((n) => [n.opening, n.kind])).toEqual([[3, 'reopened']]);
  });

  it('an unresolved case past the age limit owes an aged message too; exactly at the limit counts', () => {
    expect(owedNotifications(base, at('2026-11-08T00:00:00Z') - 1, 7 * DAY).map((n) => n.kind)).toEqual([
      'opened',
    ]);
    expect(owedNotifications(base, at('2026-11-08T00:00:00Z'), 7 * DAY).map((n) => n.kind)).toEqual([
      'opened',
      'aged',
    ]);
    const acknowledged = owedNotifications({ ...base, state: 'disputed' }, at('2026-12-01T00:00:00Z'), DAY);
    expect(acknowledged.map((n) => n.kind)).toEqual(['opened', 'aged']);
    expect(acknowledged[1]!.message.text).toContain('still open past its age limit');
  });

  it('a resolved case still owes its opening, never an aged message', () => {
    const owed = owedNotifications({ ...base, state: 'resolved' }, at('2027-01-01T00:00:00Z'), DAY);
    expect(owed.map((n) => n.kind)).toEqual(['opened']);
  });

  it('a case without an amount at stake says none', () => {
    const owed = owedNotifications(
      { ...base, trigger: 'exception', amountAtStake: null, stakeCurrency: null },
      at('2026-11-02T00:00:00Z'),
      7 * DAY,
    );
    expect(owed[0]!.message.text).toMatch(/^swap-ledger: case p1\/s1 opened \(exception; state open,/);
  });

  it('retries back off from 5 s, doubling, to at most an hour', () => {
    expect([1, 2, 3, 4].map(notificationRetryMs)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(notificationRetryMs(11)).toBe(3_600_000);
    expect(notificationRetryMs(10_000)).toBe(3_600_000);
  });
});
