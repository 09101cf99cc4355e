import { describe, expect, it } from 'vitest';
import type { StatusReported } from '../../src/events/types.ts';
import { buildStatusMapping, mapStatus } from '../../src/swap/status.ts';
import { changesOf, reportFingerprint, type PolledSwap } from '../../src/poller/change.ts';
import { pollReport } from '../../src/swap/report.ts';
import { swapKey } from '../../src/events/keys.ts';
import { foldEvent } from '../../src/projector/fold.ts';
import { WorkingSet } from '../../src/projector/state.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';

const swap = (over: Partial<PolledSwap> = {}): PolledSwap => ({
  swapId: 's1',
  providerId: 'p',
  status: 'PENDING',
  statusClass: 'open',
  final: false,
  version: 2,
  amountTo: null,
  providerFees: null,
  referralFees: null,
  payoutNetworkFees: null,
  payinTransactionId: null,
  payoutTransactionId: null,
  refundTransactionId: null,
  ...over,
});

const report = (over: Partial<StatusReported> = {}): StatusReported => ({
  providerStatus: 'PENDING',
  status: 'PENDING',
  final: false,
  statusClass: 'open',
  amount: '',
  providerFees: '',
  referralFees: '',
  payoutNetworkFees: '',
  payinTransactionId: '',
  payoutTransactionId: '',
  quoteId: null,
  refundTransactionId: '',
  extraFees: null,
  ...over,
});

describe('changesOf: what a poll result would change (the fold rules)', () => {
  it('nothing when the status is the same and every value is unknown (empty) or equal', () => {
    expect(changesOf(swap(), report())).toEqual([]);
    const known = swap({ providerFees: '0.5', payinTransactionId: '0xaa' });
    expect(changesOf(known, report({ providerFees: '0.50', payinTransactionId: '0xaa' }))).toEqual([]);
  });

  it('an empty or absent value never counts as a change (unknown, not zero)', () => {
    expect(changesOf(swap({ amountTo: '1' }), report({ amount: null }))).toEqual([]);
    expect(changesOf(swap({ amountTo: '1' }), report({ amount: '  ' }))).toEqual([]);
  });

  it('a new status is a change; PENDING -> ON_HOLD -> PENDING is one change each step', () => {
    expect(changesOf(swap({ status: 'PENDING' }), report({ status: 'ON_HOLD' }))).toEqual(['status']);
    expect(changesOf(swap({ status: 'ON_HOLD' }), report({ status: 'PENDING' }))).toEqual(['status']);
  });

  it('a newly known or different value is a change; money compares as decimals', () => {
    expect(changesOf(swap(), report({ payinTransactionId: '0xbb' }))).toEqual(['payinTransactionId']);
    expect(changesOf(swap({ providerFees: '0.1' }), report({ providerFees: '0.2' }))).toEqual([
      'providerFees',
    ]);
    expect(changesOf(swap({ amountTo: '1.000000000000000001' }), report({ amount: '1' }))).toEqual([
      'amountTo',
    ]);
  });

  it('a final report is a change of status, class and finality', () => {
    const final = report({ status: 'FINISHED', final: true, statusClass: 'final', amount: '2' });
    expect(changesOf(swap(), final)).toEqual(['status', 'statusClass', 'amountTo', 'final']);
  });

  it('EXPIRED closes an open swap; a later report reopens or finalizes it', () => {
    const expired = report({ status: 'EXPIRED', statusClass: 'closed' });
    expect(changesOf(swap(), expired)).toEqual(['status', 'statusClass']);
    const closed = swap({ status: 'EXPIRED', statusClass: 'closed' });
    expect(changesOf(closed, expired)).toEqual([]);
    expect(changesOf(closed, report())).toEqual(['status', 'statusClass']);
  });

  it('a contradiction of a final swap is worth appending (the fold records it)', () => {
    const final = swap({ status: 'FINISHED', statusClass: 'final', final: true, amountTo: '2' });
    expect(
      changesOf(final, report({ status: 'REFUNDED', statusClass: 'final', final: true, amount: '2.0' })),
    ).toEqual(['conflict:status']);
    expect(
      changesOf(final, report({ status: 'FINISHED', statusClass: 'final', final: true, amount: '3' })),
    ).toEqual(['conflict:amountTo']);
  });

  it('a swap not projected yet (CREATED) changes with any report', () => {
    expect(changesOf(swap({ status: 'CREATED', version: null }), report())).toEqual(['status']);
  });

  it('a final swap changes only by values still unknown (the confirming poll fills them)', () => {
    const final = swap({
      status: 'FINISHED',
      statusClass: 'final',
      final: true,
      amountTo: '2',
      providerFees: '0.1',
      referralFees: '0.05',
    });
    const same = report({
      status: 'FINISHED',
      statusClass: 'final',
      final: true,
      amount: '2',
      providerFees: '0.1',
      referralFees: '0.05',
    });
    expect(changesOf(final, same)).toEqual([]);
    expect(changesOf(final, { ...same, payoutNetworkFees: '0.0005', payoutTransactionId: '0xcc' })).toEqual([
      'payoutNetworkFees',
      'payoutTransactionId',
    ]);
  });
});

describe('pollReport and reportFingerprint', () => {
  const mapping = buildStatusMapping({ success: 'FINISHED' });

  it('carries the mapped status and the final flag decided at ingest', () => {
    const mapped = mapStatus(mapping, 'success')!;
    const r = pollReport(mapped, {
      status: 'success',
      amount: '1.5',
      payinTransactionId: undefined,
      payoutTransactionId: '0xdd',
      providerFees: '0.01',
      referralFees: '0.005',
      payoutNetworkFees: '0.0005',
      quoteId: 'q-1',
    });
    expect(r).toEqual({
      providerStatus: 'success',
      status: 'FINISHED',
      final: true,
      statusClass: 'final',
      amount: '1.5',
      providerFees: '0.01',
      referralFees: '0.005',
      payoutNetworkFees: '0.0005',
      payinTransactionId: null,
      payoutTransactionId: '0xdd',
      quoteId: 'q-1',
      refundTransactionId: null,
      extraFees: null,
      networkFees: null,
      networkFeesReading: null,
    });
  });

  it("keeps a REFUNDED swap's hash apart as the refund, never a payout", () => {
    const r = pollReport(mapStatus(mapping, 'REFUNDED')!, {
      status: 'REFUNDED',
      amount: undefined,
      payinTransactionId: '0xin',
      payoutTransactionId: '0xrf',
      providerFees: '0',
      referralFees: '0',
      payoutNetworkFees: '0',
    });
    expect(r).toMatchObject({ statusClass: 'final', payoutTransactionId: null, refundTransactionId: '0xrf' });
  });

  it('is equal for reports that change the same things, different otherwise', () => {
    expect(reportFingerprint(report({ amount: '' }))).toBe(reportFingerprint(report({ amount: null })));
    expect(reportFingerprint(report({ status: 'ON_HOLD' }))).not.toBe(reportFingerprint(report()));
    expect(reportFingerprint(report({ payinTransactionId: 'x' }))).not.toBe(reportFingerprint(report()));
  });
});

describe('the poller and the fold agree (one rule)', () => {
  type Fields = Parameters<typeof statusReported>[2];
  const figures = { amount: '0.248', payinTransactionId: 'in', payoutTransactionId: 'out' };
  const fees = { providerFees: '0.0005', referralFees: '0.0001', payoutNetworkFees: '0.002' };
  /** Swap states, as the events that made them. */
  const states: Record<string, [string, Fields][]> = {
    created: [],
    pending: [['PENDING', {}]],
    'pending, payin and estimate known': [['PENDING', { payinTransactionId: 'in', amount: '0.25' }]],
    'on hold': [['ON_HOLD', {}]],
    expired: [['EXPIRED', {}]],
    'finished by webhook (no fees)': [['FINISHED', figures]],
    'finished, all known': [['FINISHED', { ...figures, ...fees }]],
    refunded: [['REFUNDED', { payinTransactionId: 'in', refundTransactionId: 'back' }]],
    'old final EXPIRED': [['EXPIRED', { statusClass: null, final: true }]],
  };
  const reports: Record<string, [string, Fields]> = {
    'PENDING, nothing known': ['PENDING', { amount: '', payinTransactionId: '' }],
    'PENDING with payin': ['PENDING', { payinTransactionId: 'in' }],
    'PENDING, estimate as 0.250': ['PENDING', { amount: '0.250', payinTransactionId: 'in' }],
    ON_HOLD: ['ON_HOLD', {}],
    EXPIRED: ['EXPIRED', {}],
    'FINISHED, webhook figures': ['FINISHED', figures],
    'FINISHED, all known': ['FINISHED', { ...figures, ...fees }],
    'FINISHED, fees only': ['FINISHED', fees],
    'FINISHED, other amount': ['FINISHED', { ...figures, amount: '0.2' }],
    'REFUNDED with refund hash': ['REFUNDED', { payinTransactionId: 'in', refundTransactionId: 'back' }],
    'EXPIRED, old final': ['EXPIRED', { statusClass: null, final: true }],
  };

  it('changesOf(swap, report) is non-empty exactly when folding the report onto the swap is not a no-op', () => {
    const seen = new Set<string>();
    for (const [stateName, history] of Object.entries(states)) {
      for (const [reportName, [status, fields]] of Object.entries(reports)) {
        const ws = new WorkingSet();
        const events = [swapCreated('s1'), ...history.map(([st, f]) => statusReported('s1', st, f))];
        events.forEach((e, i) => foldEvent(ws, e, { topic: 't', partition: 0, offset: BigInt(i) }));
        const polled = ws.swaps.get(swapKey('partner-a', 's1'))!;
        const event = statusReported('s1', status, fields);
        const changes = changesOf(polled, event.payload);
        const outcome = foldEvent(ws, event, { topic: 't', partition: 0, offset: 99n })!.outcome;
        expect(outcome, `${stateName} + ${reportName}`).not.toBe('rejected');
        expect(changes.length > 0, `${stateName} + ${reportName}: ${outcome} [${changes}]`).toBe(
          outcome !== 'noop',
        );
        seen.add(outcome);
      }
    }
    // The table reaches every outcome a report can have on a known swap.
    expect(seen).toEqual(new Set(['noop', 'applied', 'contradicted']));
  });
});
