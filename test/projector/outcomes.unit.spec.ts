// Issue 34, findings 2, 5 and 9 in the fold: each `then` here failed on the code before.
import { describe, expect, it } from 'vitest';
import { spec } from '../../src/testing/fold-spec.ts';
import { statusReported, swapCreated, swapReconciled } from '../../src/testing/events.ts';

const finishedFigures = { amount: '0.248', payinTransactionId: 'in', payoutTransactionId: 'out' };

describe('fold: a closed swap that changes is judged again', () => {
  it('a deposit reported on a swap that stays EXPIRED queues it (money moved on an expired swap)', () => {
    const expired = statusReported('s1', 'EXPIRED');
    const deposit = statusReported('s1', 'EXPIRED', { payinTransactionId: 'late-deposit' });
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'PENDING'), expired)
      .when(deposit)
      .then({
        outcome: 'applied',
        changes: { payinTransactionId: [null, 'late-deposit'] },
        swap: { status: 'EXPIRED', statusClass: 'closed', payinTransactionId: 'late-deposit' },
        queue: { reason: 'closed changed', queuedByEventId: deposit.eventId },
      });
  });

  it('a repeat of the same closed report changes nothing and queues nothing new', () => {
    const expired = statusReported('s1', 'EXPIRED');
    spec()
      .given(swapCreated('s1'), expired)
      .when(statusReported('s1', 'EXPIRED'))
      .then({ outcome: 'noop', queue: { queuedByEventId: expired.eventId } });
  });
});

describe('fold: a late EXPIRED after a final status is out of date', () => {
  it('EXPIRED after FINISHED is a no-op, neither applied nor a conflict', () => {
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'FINISHED', finishedFigures))
      .when(statusReported('s1', 'EXPIRED', { payinTransactionId: 'other' }))
      .then({ outcome: 'noop', conflicts: [], swap: { status: 'FINISHED', payinTransactionId: 'in' } });
  });
});

describe('fold: the newest verdict is current', () => {
  it('a verdict based on an older event, folded after a newer one, goes to the history only', () => {
    const finished = statusReported('s1', 'FINISHED', finishedFigures);
    const fill = statusReported('s1', 'FINISHED', { ...finishedFigures, providerFees: '0.1' });
    const newer = swapReconciled('s1', fill.eventId, 'MISMATCH');
    const older = swapReconciled('s1', finished.eventId, 'UNVERIFIABLE');
    const { ws } = spec()
      .given(swapCreated('s1'), finished, fill, newer)
      .when(older)
      .then({
        outcome: 'applied',
        reconciliation: { verdict: 'MISMATCH', eventId: newer.eventId, basedOnEventId: fill.eventId },
        verdicts: [{ verdict: 'UNVERIFIABLE', eventId: older.eventId, basedOnEventId: finished.eventId }],
      });
    expect(ws.newVerdicts).toHaveLength(2);
  });

  it('a verdict based on a newer event replaces the current one, and records the offset', () => {
    const finished = statusReported('s1', 'FINISHED', finishedFigures);
    const fill = statusReported('s1', 'FINISHED', { ...finishedFigures, providerFees: '0.1' });
    const newer = swapReconciled('s1', fill.eventId, 'MISMATCH');
    spec()
      .given(swapCreated('s1'), finished, fill, swapReconciled('s1', finished.eventId, 'UNVERIFIABLE'))
      .when(newer)
      .then({
        outcome: 'applied',
        changes: { verdict: ['UNVERIFIABLE', 'MISMATCH'] },
        reconciliation: { verdict: 'MISMATCH', basedOnEventId: fill.eventId, basedOnOffset: 2n },
      });
  });
});

describe("fold: the webhook's extra fee has a column", () => {
  it('an extra fee reported with a status is kept on the swap', () => {
    spec()
      .given(swapCreated('s1'))
      .when(statusReported('s1', 'FINISHED', { ...finishedFigures, extraFees: '0.0003' }))
      .then({ outcome: 'applied', swap: { extraFees: '0.0003' } });
  });
});

describe("fold: the webhook's networkFees read by evidence is kept for the reconciler", () => {
  it('under the default reading it is kept as sent: neither revenue nor an extra fee', () => {
    spec()
      .given(swapCreated('s1'))
      .when(
        statusReported('s1', 'FINISHED', {
          ...finishedFigures,
          networkFees: '0.0005',
          networkFeesReading: 'evidence',
        }),
      )
      .then({
        outcome: 'applied',
        swap: { webhookNetworkFees: '0.0005', referralFees: null, extraFees: null },
      });
  });

  it('under an override, and in events from before it was recorded, the column stays empty', () => {
    spec()
      .given(swapCreated('s1'))
      .when(
        statusReported('s1', 'FINISHED', {
          ...finishedFigures,
          referralFees: '0.0005',
          networkFees: '0.0005',
          networkFeesReading: 'referral',
        }),
      )
      .then({ outcome: 'applied', swap: { webhookNetworkFees: null, referralFees: '0.0005' } });
    spec()
      .given(swapCreated('s1'))
      .when(statusReported('s1', 'FINISHED', finishedFigures))
      .then({ outcome: 'applied', swap: { webhookNetworkFees: null } });
  });

  it('a pending estimate a final report does not repeat is dropped', () => {
    spec()
      .given(
        swapCreated('s1'),
        statusReported('s1', 'PENDING', { networkFees: '0.0009', networkFeesReading: 'evidence' }),
      )
      .when(statusReported('s1', 'FINISHED', finishedFigures))
      .then({ outcome: 'applied', swap: { webhookNetworkFees: null } });
  });
});

describe('fold: an old log with an invisible character in partner text replays as it was applied', () => {
  it('a payin hash with a bidi override applies (the edges refuse it now; the fold never did)', () => {
    spec()
      .given(swapCreated('s1'))
      .when(statusReported('s1', 'PENDING', { payinTransactionId: 'abc\u202edef' }))
      .then({ outcome: 'applied', swap: { payinTransactionId: 'abc\u202edef' } });
  });
});
