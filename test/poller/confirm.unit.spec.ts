import { describe, expect, it } from 'vitest';
import { pollReport } from '../../src/swap/report.ts';
import {
  confirmBackoffMs,
  confirmationDeadline,
  judgeConfirmation,
  missingFigures,
  neededFigures,
  nextConfirmationAt,
} from '../../src/poller/confirm.ts';
import type { SwapStatus } from '../../src/partner/types.ts';
import type { ReportValues } from '../../src/swap/report.ts';
import { buildStatusMapping, mapStatus } from '../../src/swap/status.ts';

const mapping = buildStatusMapping({});
const answer = (s: Partial<SwapStatus> & { status: string }) =>
  pollReport(mapStatus(mapping, s.status)!, s as SwapStatus);

const nothing: ReportValues = {
  amountTo: null,
  providerFees: null,
  referralFees: null,
  payoutNetworkFees: null,
  payinTransactionId: null,
  payoutTransactionId: null,
  refundTransactionId: null,
};
const complete = {
  amount: '0.25',
  providerFees: '0.001',
  referralFees: '0.0005',
  payoutNetworkFees: '0.002',
  payinTransactionId: 'in-hash',
  payoutTransactionId: 'out-hash',
};
/** A FINISHED swap as a webhook leaves it: no payout network fee. */
const byWebhook = {
  ...nothing,
  status: 'FINISHED',
  amountTo: '0.25',
  providerFees: '0.001',
  referralFees: '0.0005',
  payinTransactionId: 'in-hash',
  payoutTransactionId: 'out-hash',
};

describe('the figures an outcome needs', () => {
  it('FINISHED: amount, the three fees, payin and payout hashes', () => {
    expect(neededFigures('FINISHED')).toEqual([
      'amountTo',
      'providerFees',
      'referralFees',
      'payoutNetworkFees',
      'payinTransactionId',
      'payoutTransactionId',
    ]);
  });
  it('REFUNDED: amount, the three fees, payin and refund hashes (no payout)', () => {
    expect(neededFigures('REFUNDED')).toEqual([
      'amountTo',
      'providerFees',
      'referralFees',
      'payoutNetworkFees',
      'payinTransactionId',
      'refundTransactionId',
    ]);
  });
  it('another final status a provider configures: the money figures', () => {
    expect(neededFigures('EXPIRED')).toEqual([
      'amountTo',
      'providerFees',
      'referralFees',
      'payoutNetworkFees',
    ]);
  });
  it('missing: those still unknown', () => {
    expect(missingFigures(byWebhook, 'FINISHED')).toEqual(['payoutNetworkFees']);
    expect(missingFigures({ ...byWebhook, payoutNetworkFees: '0' }, 'FINISHED')).toEqual([]);
    expect(missingFigures(byWebhook, 'REFUNDED')).toEqual(['payoutNetworkFees', 'refundTransactionId']);
  });
});

describe('is this answer a complete confirmation', () => {
  it('the same final status with every figure: complete', () => {
    expect(judgeConfirmation(byWebhook, answer({ status: 'FINISHED', ...complete }))).toEqual({
      stale: false,
      otherOutcome: false,
      complete: true,
      missing: [],
    });
  });
  it('complete even when the swap knew nothing: the answer alone carries every figure', () => {
    const j = judgeConfirmation(
      { ...nothing, status: 'FINISHED' },
      answer({ status: 'FINISHED', ...complete }),
    );
    expect(j.complete).toBe(true);
  });
  it('a lagging answer (PENDING, with every figure) is stale: no confirmation, fills nothing', () => {
    expect(judgeConfirmation(byWebhook, answer({ status: 'PENDING', ...complete }))).toEqual({
      stale: true,
      otherOutcome: false,
      complete: false,
      missing: ['payoutNetworkFees'],
    });
  });
  it('a closed answer (EXPIRED after FINISHED) is no confirmation either', () => {
    const j = judgeConfirmation(byWebhook, answer({ status: 'EXPIRED', ...complete }));
    expect(j).toMatchObject({ stale: true, complete: false });
  });
  it('a blank fee is not known: "" and absent both leave the answer incomplete', () => {
    for (const blank of [
      { payoutNetworkFees: '' },
      { payoutNetworkFees: undefined },
      { referralFees: '  ' },
    ]) {
      const j = judgeConfirmation(
        { ...nothing, status: 'FINISHED' },
        answer({ status: 'FINISHED', ...complete, ...blank }),
      );
      expect(j.complete).toBe(false);
      expect(j.missing).toHaveLength(1);
    }
  });
  it('a figure the swap already knows does not make a blank answer complete', () => {
    const known = { ...byWebhook, payoutNetworkFees: '0.002' };
    const j = judgeConfirmation(known, answer({ status: 'FINISHED', ...complete, referralFees: '' }));
    expect(j).toMatchObject({ complete: false, missing: [] });
  });
  it('a partial answer fills what it carries: missing is what neither the swap nor the answer knows', () => {
    const j = judgeConfirmation(
      { ...nothing, status: 'FINISHED', amountTo: '0.25' },
      answer({ status: 'FINISHED', ...complete, providerFees: '', payoutTransactionId: '' }),
    );
    expect(j).toMatchObject({ complete: false, missing: ['providerFees', 'payoutTransactionId'] });
  });
  it('another final outcome (REFUNDED for FINISHED) confirms nothing and fills nothing', () => {
    const j = judgeConfirmation(byWebhook, answer({ status: 'REFUNDED', ...complete }));
    expect(j).toEqual({ stale: false, otherOutcome: true, complete: false, missing: ['payoutNetworkFees'] });
  });
  it('REFUNDED: the partner payoutTransactionId is the refund hash (the poll maps it)', () => {
    const refunded = { ...nothing, status: 'REFUNDED' };
    const full = { ...complete, amount: '0' };
    expect(judgeConfirmation(refunded, answer({ status: 'REFUNDED', ...full })).complete).toBe(true);
    const noRefund = judgeConfirmation(
      refunded,
      answer({ status: 'REFUNDED', ...full, payoutTransactionId: '' }),
    );
    expect(noRefund).toMatchObject({ complete: false, missing: ['refundTransactionId'] });
  });
});

describe('confirming backoff and deadline', () => {
  it('about 1 min, doubling, capped at 1 h', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 50, 10_000].map((n) => confirmBackoffMs(n) / 60_000)).toEqual([
      1, 2, 4, 8, 16, 32, 60, 60, 60, 60,
    ]);
    expect(confirmBackoffMs(0)).toBe(0);
    expect(confirmBackoffMs(3, { baseMs: 1000, maxMs: 3000 })).toBe(3000);
  });
  it('the next attempt never lies past the deadline', () => {
    const now = Date.parse('2026-11-01T12:00:00Z');
    expect(nextConfirmationAt(now, 1, now + 3_600_000)).toBe(now + 60_000);
    expect(nextConfirmationAt(now, 7, now + 600_000)).toBe(now + 600_000);
    expect(nextConfirmationAt(now, 1, now - 5)).toBe(now - 5); // passed: due at once, to be given up
  });
  it('the deadline counts from the final status', () => {
    expect(confirmationDeadline('2026-11-01T12:00:00.000Z', 48 * 3_600_000)).toBe(
      Date.parse('2026-11-03T12:00:00.000Z'),
    );
  });
});
