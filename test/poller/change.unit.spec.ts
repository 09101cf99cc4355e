import { describe, expect, it } from 'vitest';
import type { StatusReported } from '../../src/events/types.ts';
import { buildStatusMapping, mapStatus } from '../../src/swap/status.ts';
import { changesOf, pollReport, reportFingerprint, type PolledSwap } from '../../src/poller/change.ts';

const swap = (over: Partial<PolledSwap> = {}): PolledSwap => ({
  swapId: 's1',
  providerId: 'p',
  status: 'PENDING',
  final: false,
  version: 2,
  amountTo: null,
  providerFees: null,
  referralFees: null,
  payoutNetworkFees: null,
  payinTransactionId: null,
  payoutTransactionId: null,
  ...over,
});

const report = (over: Partial<StatusReported> = {}): StatusReported => ({
  providerStatus: 'PENDING',
  status: 'PENDING',
  final: false,
  amount: '',
  providerFees: '',
  referralFees: '',
  payoutNetworkFees: '',
  payinTransactionId: '',
  payoutTransactionId: '',
  quoteId: null,
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

  it('a final report is a change of status and finality', () => {
    expect(changesOf(swap(), report({ status: 'FINISHED', final: true, amount: '2' }))).toEqual([
      'status',
      'amountTo',
      'final',
    ]);
  });

  it('a swap not projected yet (CREATED) changes with any report', () => {
    expect(changesOf(swap({ status: 'CREATED', version: null }), report())).toEqual(['status']);
  });

  it('a final swap changes only by values still unknown (the confirming poll fills them)', () => {
    const final = swap({
      status: 'FINISHED',
      final: true,
      amountTo: '2',
      providerFees: '0.1',
      referralFees: '0.05',
    });
    const same = report({
      status: 'FINISHED',
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
      amount: '1.5',
      providerFees: '0.01',
      referralFees: '0.005',
      payoutNetworkFees: '0.0005',
      payinTransactionId: null,
      payoutTransactionId: '0xdd',
      quoteId: 'q-1',
    });
  });

  it('is equal for reports that change the same things, different otherwise', () => {
    expect(reportFingerprint(report({ amount: '' }))).toBe(reportFingerprint(report({ amount: null })));
    expect(reportFingerprint(report({ status: 'ON_HOLD' }))).not.toBe(reportFingerprint(report()));
    expect(reportFingerprint(report({ payinTransactionId: 'x' }))).not.toBe(reportFingerprint(report()));
  });
});
