import { describe, expect, it } from 'vitest';
import type { StatusReported } from '../../src/events/types.ts';
import {
  knownValue,
  reportChangesSomething,
  reportClass,
  reportDifferences,
  type ReportedSwap,
} from '../../src/swap/report.ts';

/** reportDifferences: the one rule of what a report changes, shared by the fold and the poller. */

const open = (over: Partial<ReportedSwap> = {}): ReportedSwap => ({
  status: 'PENDING',
  statusClass: 'open',
  final: false,
  amountTo: null,
  providerFees: null,
  referralFees: null,
  payoutNetworkFees: null,
  payinTransactionId: null,
  payoutTransactionId: null,
  refundTransactionId: null,
  ...over,
});
const final = (over: Partial<ReportedSwap> = {}): ReportedSwap =>
  open({
    status: 'FINISHED',
    statusClass: 'final',
    final: true,
    amountTo: '0.248',
    payinTransactionId: 'in',
    payoutTransactionId: 'out',
    ...over,
  });

const CLASS: Record<string, string> = { FINISHED: 'final', REFUNDED: 'final', EXPIRED: 'closed' };
const report = (status: string, over: Partial<StatusReported> = {}): StatusReported => {
  const statusClass = over.statusClass === undefined ? (CLASS[status] ?? 'open') : over.statusClass;
  return {
    providerStatus: status,
    status,
    statusClass,
    final: statusClass === 'final',
    amount: null,
    providerFees: null,
    referralFees: null,
    payoutNetworkFees: null,
    payinTransactionId: null,
    payoutTransactionId: null,
    refundTransactionId: null,
    quoteId: null,
    extraFees: null,
    ...over,
  };
};

describe('reportDifferences: a swap not final', () => {
  const cases: [string, ReportedSwap, StatusReported, Record<string, [unknown, unknown]>, string][] = [
    ['same status, nothing known', open(), report('PENDING'), {}, 'open'],
    [
      'empty, blank and null are unknown, never erasing',
      open({ amountTo: '1', payinTransactionId: 'in' }),
      report('PENDING', { amount: '', payinTransactionId: '  ', providerFees: null }),
      {},
      'open',
    ],
    ['a new status', open(), report('ON_HOLD'), { status: ['PENDING', 'ON_HOLD'] }, 'open'],
    [
      'a newly known value fills',
      open(),
      report('PENDING', { payinTransactionId: 'in' }),
      { payinTransactionId: [null, 'in'] },
      'open',
    ],
    [
      'money as decimals: 1.50 is 1.5',
      open({ amountTo: '1.5', providerFees: '0' }),
      report('PENDING', { amount: '1.50', providerFees: '0.000' }),
      {},
      'open',
    ],
    [
      'money beyond a double: the 25th decimal counts',
      open({ amountTo: '1' }),
      report('PENDING', { amount: '1.000000000000000000000001' }),
      { amountTo: ['1', '1.000000000000000000000001'] },
      'open',
    ],
    [
      'money above 2^64 atomic units: one unit counts',
      open({ amountTo: '18446744073709551616' }),
      report('PENDING', { amount: '18446744073709551617' }),
      { amountTo: ['18446744073709551616', '18446744073709551617'] },
      'open',
    ],
    [
      'a hash is text, not a number: 0x01 is not 0x1, 1.0 is not 1',
      open({ payinTransactionId: '1', payoutTransactionId: '0x01' }),
      report('PENDING', { payinTransactionId: '1.0', payoutTransactionId: '0x1' }),
      { payinTransactionId: ['1', '1.0'], payoutTransactionId: ['0x01', '0x1'] },
      'open',
    ],
    [
      'EXPIRED closes',
      open(),
      report('EXPIRED'),
      { status: ['PENDING', 'EXPIRED'], statusClass: ['open', 'closed'] },
      'closed',
    ],
    [
      'a report reopens a closed swap',
      open({ status: 'EXPIRED', statusClass: 'closed' }),
      report('PENDING'),
      { status: ['EXPIRED', 'PENDING'], statusClass: ['closed', 'open'] },
      'open',
    ],
    [
      'a closed swap can become final',
      open({ status: 'EXPIRED', statusClass: 'closed' }),
      report('REFUNDED', { refundTransactionId: 'back' }),
      {
        status: ['EXPIRED', 'REFUNDED'],
        statusClass: ['closed', 'final'],
        refundTransactionId: [null, 'back'],
        final: [false, true],
      },
      'final',
    ],
    [
      'final without an amount clears the estimate',
      open({ amountTo: '0.25' }),
      report('FINISHED'),
      {
        status: ['PENDING', 'FINISHED'],
        statusClass: ['open', 'final'],
        final: [false, true],
        amountTo: ['0.25', null],
      },
      'final',
    ],
    [
      'final confirming the estimate keeps it',
      open({ amountTo: '0.25' }),
      report('FINISHED', { amount: '0.250' }),
      { status: ['PENDING', 'FINISHED'], statusClass: ['open', 'final'], final: [false, true] },
      'final',
    ],
    [
      'final with another amount replaces the estimate',
      open({ amountTo: '0.25' }),
      report('FINISHED', { amount: '0.2' }),
      {
        status: ['PENDING', 'FINISHED'],
        statusClass: ['open', 'final'],
        amountTo: ['0.25', '0.2'],
        final: [false, true],
      },
      'final',
    ],
    [
      'an old event (no class, final flag) is final',
      open(),
      report('EXPIRED', { statusClass: null, final: true }),
      { status: ['PENDING', 'EXPIRED'], statusClass: ['open', 'final'], final: [false, true] },
      'final',
    ],
    [
      'the class comes from the event, not the status name',
      open(),
      report('FINISHED', { statusClass: 'open' }),
      { status: ['PENDING', 'FINISHED'] },
      'open',
    ],
  ];

  it.each(cases)('%s', (_name, swap, r, changes, becomes) => {
    const d = reportDifferences(swap, r);
    expect(d).toEqual({ kind: 'open', changes, becomes });
    expect(reportChangesSomething(d)).toBe(Object.keys(changes).length > 0);
  });
});

describe('reportDifferences: a final swap', () => {
  const cases: [
    string,
    ReportedSwap,
    StatusReported,
    Record<string, string>,
    [string, string | null, string | null][],
  ][] = [
    [
      'the same report again',
      final(),
      report('FINISHED', { amount: '0.2480', payinTransactionId: 'in' }),
      {},
      [],
    ],
    [
      'empty values never conflict',
      final(),
      report('FINISHED', { amount: '', payoutTransactionId: ' ' }),
      {},
      [],
    ],
    [
      'the confirming poll fills the fees',
      final(),
      report('FINISHED', { amount: '0.248', providerFees: '0.0005', payoutNetworkFees: '0.002' }),
      { providerFees: '0.0005', payoutNetworkFees: '0.002' },
      [],
    ],
    [
      'another final status is a conflict',
      final(),
      report('REFUNDED'),
      {},
      [['status', 'FINISHED', 'REFUNDED']],
    ],
    [
      'a report of another outcome fills nothing, even a value still unknown',
      final({ refundTransactionId: null, providerFees: null }),
      report('REFUNDED', { refundTransactionId: 'r-1', providerFees: '0.1' }),
      {},
      [['status', 'FINISHED', 'REFUNDED']],
    ],
    [
      'FINISHED then REFUNDED',
      final(),
      report('REFUNDED', { amount: '0' }),
      {},
      [
        ['status', 'FINISHED', 'REFUNDED'],
        ['amountTo', '0.248', '0'],
      ],
    ],
    [
      'another amount is a conflict, compared as decimals',
      final(),
      report('FINISHED', { amount: '0.2481' }),
      {},
      [['amountTo', '0.248', '0.2481']],
    ],
    [
      'another hash is a conflict',
      final(),
      report('FINISHED', { payoutTransactionId: 'other' }),
      {},
      [['payoutTransactionId', 'out', 'other']],
    ],
    [
      'fills and conflicts together',
      final(),
      report('FINISHED', { amount: '0.2', payoutNetworkFees: '0.002' }),
      { payoutNetworkFees: '0.002' },
      [['amountTo', '0.248', '0.2']],
    ],
    [
      'a final amount still unknown is filled, not a conflict',
      final({ amountTo: null }),
      report('FINISHED', { amount: '0.249' }),
      { amountTo: '0.249' },
      [],
    ],
  ];

  it.each(cases)('%s', (_name, swap, r, fills, conflicts) => {
    const d = reportDifferences(swap, r);
    expect(d).toEqual({
      kind: 'final',
      fills,
      conflicts: conflicts.map(([field, finalValue, reportedValue]) => ({
        field,
        finalValue,
        reportedValue,
      })),
      stale: false,
    });
    expect(reportChangesSomething(d)).toBe(Object.keys(fills).length + conflicts.length > 0);
  });

  it('an open status after the final one is out of date: it fills and contradicts nothing', () => {
    const d = reportDifferences(
      final({ providerFees: null }),
      report('PENDING', { amount: '9', providerFees: '1' }),
    );
    expect(d).toEqual({ kind: 'final', fills: {}, conflicts: [], stale: true });
    expect(reportChangesSomething(d)).toBe(false);
  });

  it('a closed status after the final one (EXPIRED after FINISHED) is out of date too, never a conflict', () => {
    const d = reportDifferences(
      final({ providerFees: null }),
      report('EXPIRED', { statusClass: 'closed', payinTransactionId: 'other', providerFees: '1' }),
    );
    expect(d).toEqual({ kind: 'final', fills: {}, conflicts: [], stale: true });
    expect(reportChangesSomething(d)).toBe(false);
  });
});

describe('report helpers', () => {
  it('knownValue: empty, blank, null and absent are unknown', () => {
    expect([null, undefined, '', '   '].map(knownValue)).toEqual([null, null, null, null]);
    expect(knownValue('0')).toBe('0');
  });

  it('reportClass: the class decided at ingest, or the final flag of an event from before classes', () => {
    expect(reportClass({ statusClass: 'closed', final: false })).toBe('closed');
    expect(reportClass({ statusClass: 'final', final: false })).toBe('final');
    expect(reportClass({ statusClass: null, final: true })).toBe('final');
    expect(reportClass({ statusClass: null, final: false })).toBe('open');
    expect(reportClass({ statusClass: 'weird', final: true })).toBe('final');
  });
});

describe('a partner report as a StatusReported: one rule for the poll and the webhook', () => {
  it('a REFUNDED hash is the refund’s in both, and a FINISHED one the payout’s', async () => {
    const { pollReport, webhookReport } = await import('../../src/swap/report.ts');
    const { buildStatusMapping, mapStatus } = await import('../../src/swap/status.ts');
    const mapping = buildStatusMapping({});
    for (const status of ['REFUNDED', 'FINISHED'] as const) {
      const mapped = mapStatus(mapping, status)!;
      const poll = pollReport(mapped, { amount: '0', payinTransactionId: 'in', payoutTransactionId: 'h' });
      const hook = webhookReport(
        mapped,
        { amount: '0', payinTransactionId: 'in', transactionHash: 'h' },
        'extra',
      );
      const expected =
        status === 'REFUNDED'
          ? { payoutTransactionId: null, refundTransactionId: 'h' }
          : { payoutTransactionId: 'h', refundTransactionId: null };
      expect(poll).toMatchObject(expected);
      expect(hook).toMatchObject(expected);
    }
  });

  it("the webhook's networkFees is the referral fee or an extra fee, as the provider's setup says", async () => {
    const { webhookReport } = await import('../../src/swap/report.ts');
    const { buildStatusMapping, mapStatus } = await import('../../src/swap/status.ts');
    const mapped = mapStatus(buildStatusMapping({}), 'FINISHED')!;
    const body = { amount: '1', networkFees: '0.01' };
    expect(webhookReport(mapped, body, 'referral')).toMatchObject({ referralFees: '0.01', extraFees: null });
    expect(webhookReport(mapped, body, 'extra')).toMatchObject({ referralFees: null, extraFees: '0.01' });
    expect(webhookReport(mapped, body, 'extra').payoutNetworkFees).toBeNull();
  });

  it('by default networkFees is recorded as sent, with its reading, for the reconciler to read by evidence', async () => {
    const { pollReport, webhookReport } = await import('../../src/swap/report.ts');
    const { buildStatusMapping, mapStatus } = await import('../../src/swap/status.ts');
    const mapped = mapStatus(buildStatusMapping({}), 'FINISHED')!;
    const body = { amount: '1', networkFees: '0.01' };
    // Neither revenue nor an extra fee until read: the referral fee comes with the confirming poll.
    expect(webhookReport(mapped, body, 'evidence')).toMatchObject({
      referralFees: null,
      extraFees: null,
      networkFees: '0.01',
      networkFeesReading: 'evidence',
    });
    // An override is recorded too, so the event says how its figures were read.
    expect(webhookReport(mapped, body, 'referral')).toMatchObject({ networkFeesReading: 'referral' });
    expect(webhookReport(mapped, body, 'extra')).toMatchObject({ networkFeesReading: 'extra' });
    expect(webhookReport(mapped, { amount: '1' }, 'evidence')).toMatchObject({ networkFees: null });
    expect(pollReport(mapped, { amount: '1' })).toMatchObject({
      networkFees: null,
      networkFeesReading: null,
    });
  });
});
