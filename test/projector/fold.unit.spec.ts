import { describe, expect, it } from 'vitest';
import { swapKey } from '../../src/events/keys.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import { foldEvent, rowKeys } from '../../src/projector/fold.ts';
import { WorkingSet } from '../../src/projector/state.ts';
import { spec } from '../../src/testing/fold-spec.ts';
import {
  quoteReceived,
  statusContradicted,
  statusReported,
  swapCorrected,
  swapCreated,
  swapCreationFailed,
  swapReconciled,
  swapRequested,
} from '../../src/testing/events.ts';

const A = 'partner-a';
const B = 'partner-b';
const S1 = swapKey(A, 's1');

const finishedFigures = { amount: '0.248', payinTransactionId: 'in', payoutTransactionId: 'out' };
/** A swap made final by webhook: the webhook carries no fees. */
const finishedByWebhook = (swapId = 's1', providerId = A) =>
  statusReported(swapId, 'FINISHED', finishedFigures, { source: 'webhook', providerId });
const fullPoll = (fields: Parameters<typeof statusReported>[2] = {}) =>
  statusReported('s1', 'FINISHED', {
    ...finishedFigures,
    providerFees: '0.0005',
    referralFees: '0.0001',
    payoutNetworkFees: '0.002',
    ...fields,
  });

describe('fold: swap creation', () => {
  it('creates the swap in CREATED, open, with the request, fees at creation and signed amounts', () => {
    const { row, ws } = spec()
      .when(swapCreated('s1', { request: { slippage: '0.02' } }))
      .then({
        outcome: 'applied',
        changes: { status: [null, 'CREATED'] },
        swap: {
          status: 'CREATED',
          statusClass: 'open',
          final: false,
          closedAt: null,
          providerId: A,
          swapId: 's1',
          tradeMethod: 'float',
          amountFrom: '0.015',
          slippage: '0.02',
          createdProviderFees: '0.0005',
          signedAmountToWallet: '250000000000000000',
          version: 1,
        },
        queue: null,
        postings: [],
      });
    expect(row).toMatchObject({ eventType: 'SwapCreated', swapId: 's1', aggregateKey: S1, offset: 0n });
    expect(ws.dirty.swaps.has(S1)).toBe(true);
  });

  it('rejects a second SwapCreated of the same provider and swapId and keeps the first', () => {
    const first = swapCreated('s1');
    spec()
      .given(first)
      .when(swapCreated('s1', { created: { payinAddress: 'other' } }))
      .thenRejected(first.eventId);
  });

  it('rejects an unknown trade method', () => {
    spec()
      .when(swapCreated('s1', { request: { tradeMethod: 'swing' } }))
      .thenRejected('swing');
  });
});

describe('fold: status reports of an open swap', () => {
  it('applies PENDING → ON_HOLD → PENDING → FINISHED, each a change', () => {
    const finished = statusReported('s1', 'FINISHED', finishedFigures);
    const { givenRows } = spec()
      .given(
        swapCreated('s1'),
        statusReported('s1', 'PENDING'),
        statusReported('s1', 'ON_HOLD'),
        statusReported('s1', 'PENDING'),
      )
      .when(finished)
      .then({
        outcome: 'applied',
        changes: {
          status: ['PENDING', 'FINISHED'],
          statusClass: ['open', 'final'],
          final: [false, true],
          amountTo: [null, '0.248'],
          payinTransactionId: [null, 'in'],
          payoutTransactionId: [null, 'out'],
        },
        swap: { status: 'FINISHED', statusClass: 'final', final: true, amountTo: '0.248', version: 5 },
        postings: ['final'],
      });
    expect(givenRows.map((r) => [r?.outcome, r?.changes?.status])).toEqual([
      ['applied', [null, 'CREATED']],
      ['applied', ['CREATED', 'PENDING']],
      ['applied', ['PENDING', 'ON_HOLD']],
      ['applied', ['ON_HOLD', 'PENDING']],
    ]);
    spec()
      .given(swapCreated('s1'))
      .when(finished)
      .then({ outcome: 'applied', swap: { finalAt: finished.occurredAt } });
  });

  it('journals a report that changes nothing as a no-op (a poll repeating a webhook)', () => {
    spec()
      .given(
        swapCreated('s1'),
        statusReported('s1', 'PENDING', { payinTransactionId: 'in' }, { source: 'webhook' }),
      )
      .when(statusReported('s1', 'PENDING', { payinTransactionId: 'in', amount: '' }, { source: 'poll' }))
      .then({ outcome: 'noop', swap: { version: 2 } });
  });

  it('treats empty fields as unknown, never as erasing a known value', () => {
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'PENDING', { payinTransactionId: 'in' }))
      .when(statusReported('s1', 'ON_HOLD', { payinTransactionId: '  ' }))
      .then({
        outcome: 'applied',
        changes: { status: ['PENDING', 'ON_HOLD'] },
        swap: { payinTransactionId: 'in' },
      });
  });

  it('compares amounts as decimals: 1.50 repeats 1.5', () => {
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'PENDING', { amount: '1.5' }))
      .when(statusReported('s1', 'PENDING', { amount: '1.50' }))
      .then({ outcome: 'noop', swap: { amountTo: '1.5' } });
  });

  it('queues the swap for reconciliation in the same fold when it becomes final', () => {
    const refunded = statusReported('s1', 'REFUNDED', { payinTransactionId: 'in' });
    spec()
      .given(swapCreated('s1'))
      .when(refunded)
      .then({
        outcome: 'applied',
        queue: {
          providerId: A,
          swapId: 's1',
          queuedByEventId: refunded.eventId,
          queuedAt: refunded.occurredAt,
          reason: 'final',
        },
      });
  });

  it('decides the class from the event (decided at ingest), not from the status name', () => {
    spec()
      .given(swapCreated('s1'))
      .when(statusReported('s1', 'CLOSED', { statusClass: 'final' }))
      .then({ outcome: 'applied', swap: { status: 'CLOSED', statusClass: 'final', final: true } });
    spec()
      .given(swapCreated('s2'))
      .when(statusReported('s2', 'FINISHED', { statusClass: 'open', final: false }))
      .then({ outcome: 'applied', swap: { status: 'FINISHED', final: false }, queue: null, postings: [] });
  });

  it('folds an old event (no class, final flag set) as final, even for EXPIRED (replay of an old log)', () => {
    const old = statusReported('s1', 'EXPIRED', { statusClass: null, final: true });
    spec()
      .given(swapCreated('s1'))
      .when(old)
      .then({
        outcome: 'applied',
        swap: { status: 'EXPIRED', statusClass: 'final', final: true, finalAt: old.occurredAt },
        queue: { reason: 'final', queuedByEventId: old.eventId },
      });
    spec()
      .given(swapCreated('s1'))
      .when(statusReported('s1', 'PENDING', { statusClass: null, final: false }))
      .then({ outcome: 'applied', swap: { statusClass: 'open', final: false } });
  });

  it('rejects a report for an unknown swap, and one from a provider that did not create the swap', () => {
    spec().when(statusReported('ghost', 'PENDING')).thenRejected('unknown swap partner-a/ghost');
    spec()
      .given(swapCreated('s1'))
      .when(statusReported('s1', 'PENDING', {}, { providerId: B }))
      .thenRejected('unknown swap partner-b/s1');
  });
});

describe('fold: two providers, one swapId', () => {
  it('keeps a swap per (provider, swapId): each reaches FINISHED with its own row, queue and postings', () => {
    const finB = statusReported('s1', 'FINISHED', { amount: '0.3' }, { providerId: B });
    const finA = finishedByWebhook('s1', A);
    const { ws, postings } = spec()
      .given(
        swapCreated('s1', { providerId: A }),
        swapCreated('s1', { providerId: B, request: { amountFrom: '0.02' } }),
        statusReported('s1', 'PENDING', {}, { providerId: A }),
        finA,
      )
      .when(finB)
      .then({
        outcome: 'applied',
        swap: {
          providerId: B,
          swapId: 's1',
          status: 'FINISHED',
          amountTo: '0.3',
          amountFrom: '0.02',
          version: 2,
        },
        queue: { providerId: B, swapId: 's1', queuedByEventId: finB.eventId, reason: 'final' },
        postings: ['final'],
      });
    expect(ws.swaps.get(swapKey(A, 's1'))).toMatchObject({
      providerId: A,
      status: 'FINISHED',
      amountTo: '0.248',
      amountFrom: '0.015',
      version: 3,
    });
    expect(ws.queue.get(swapKey(A, 's1'))).toMatchObject({ providerId: A, queuedByEventId: finA.eventId });
    expect(postings.length).toBeGreaterThan(0);
    expect(postings.every((p) => p.providerId === B && p.swapId === 's1')).toBe(true);
    const postedA = ws.postings.get(swapKey(A, 's1'))!;
    expect(postedA.length).toBeGreaterThan(0);
    expect(postedA.every((p) => p.providerId === A && p.entryId === finA.eventId)).toBe(true);
    expect(ws.postings.get(swapKey(B, 's1'))).toEqual(postings);
  });

  it("a report from partner-b never touches partner-a's swap of the same swapId", () => {
    const { ws } = spec()
      .given(
        swapCreated('s1', { providerId: A }),
        finishedByWebhook('s1', A),
        swapCreated('s1', { providerId: B }),
      )
      .when(statusReported('s1', 'REFUNDED', { amount: '0.1' }, { providerId: B }))
      .then({ outcome: 'applied', swap: { providerId: B, status: 'REFUNDED' }, conflicts: [] });
    expect(ws.swaps.get(swapKey(A, 's1'))).toMatchObject({
      status: 'FINISHED',
      amountTo: '0.248',
      version: 2,
    });
  });
});

describe('fold: EXPIRED is closed, reopenable', () => {
  it('closes the swap: closedAt set, queued for reconciliation (closed), nothing posted', () => {
    const expired = statusReported('s1', 'EXPIRED');
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'PENDING'))
      .when(expired)
      .then({
        outcome: 'applied',
        changes: { status: ['PENDING', 'EXPIRED'], statusClass: ['open', 'closed'] },
        swap: {
          status: 'EXPIRED',
          statusClass: 'closed',
          final: false,
          finalAt: null,
          closedAt: expired.occurredAt,
        },
        queue: { reason: 'closed', queuedByEventId: expired.eventId, queuedAt: expired.occurredAt },
        postings: [],
      });
  });

  it('a late FINISHED applies: final, finalAt, a final entry, queued again on the new event', () => {
    const expired = statusReported('s1', 'EXPIRED');
    const finished = statusReported('s1', 'FINISHED', finishedFigures);
    spec()
      .given(swapCreated('s1'), expired)
      .when(finished)
      .then({
        outcome: 'applied',
        changes: {
          status: ['EXPIRED', 'FINISHED'],
          statusClass: ['closed', 'final'],
          final: [false, true],
          amountTo: [null, '0.248'],
          payinTransactionId: [null, 'in'],
          payoutTransactionId: [null, 'out'],
        },
        swap: {
          status: 'FINISHED',
          statusClass: 'final',
          final: true,
          finalAt: finished.occurredAt,
          closedAt: expired.occurredAt,
        },
        queue: { reason: 'final', queuedByEventId: finished.eventId },
        postings: ['final'],
      });
  });

  it('a late REFUNDED applies likewise', () => {
    const refunded = statusReported('s1', 'REFUNDED', {
      payinTransactionId: 'in',
      refundTransactionId: 'back',
    });
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'EXPIRED'))
      .when(refunded)
      .then({
        outcome: 'applied',
        swap: { status: 'REFUNDED', statusClass: 'final', final: true, refundTransactionId: 'back' },
        queue: { reason: 'final', queuedByEventId: refunded.eventId },
        postings: ['final'],
      });
  });

  it('a later PENDING reopens it (open), without queueing it again', () => {
    const expired = statusReported('s1', 'EXPIRED');
    spec()
      .given(swapCreated('s1'), expired)
      .when(statusReported('s1', 'PENDING', { payinTransactionId: 'late' }))
      .then({
        outcome: 'applied',
        changes: {
          status: ['EXPIRED', 'PENDING'],
          statusClass: ['closed', 'open'],
          payinTransactionId: [null, 'late'],
        },
        swap: { status: 'PENDING', statusClass: 'open', final: false },
        queue: { queuedByEventId: expired.eventId, reason: 'closed' },
        postings: [],
      });
  });
});

describe('fold: life after final', () => {
  it('FINISHED then REFUNDED: contradicted, swap unchanged, a conflict per field, queued, nothing posted', () => {
    const refunded = statusReported('s1', 'REFUNDED', { amount: '0.3' }, { source: 'webhook' });
    spec()
      .given(swapCreated('s1'), finishedByWebhook())
      .when(refunded)
      .then({
        outcome: 'contradicted',
        reason: 'contradicts final swap (FINISHED)',
        changes: { status: ['FINISHED', 'REFUNDED'], amountTo: ['0.248', '0.3'] },
        swap: 'unchanged',
        conflicts: [
          {
            conflictId: `${refunded.eventId}:status`,
            field: 'status',
            finalValue: 'FINISHED',
            reportedValue: 'REFUNDED',
            providerId: A,
            swapId: 's1',
            source: 'webhook',
          },
          { field: 'amountTo', finalValue: '0.248', reportedValue: '0.3', eventId: refunded.eventId },
        ],
        queue: { reason: 'contradicted', queuedByEventId: refunded.eventId },
        postings: [],
      });
  });

  it('BUG: a REFUNDED poll of a FINISHED swap fills its refund hash (applied) instead of contradicting it', () => {
    // src/swap/report.ts reportDifferences fills unknown values of a final swap even from a report whose
    // status contradicts it; the same report by webhook becomes StatusContradicted and fills nothing.
    const refunded = statusReported('s1', 'REFUNDED', {
      payinTransactionId: 'in',
      refundTransactionId: 'back',
    });
    const { conflicts } = spec()
      .given(swapCreated('s1'), finishedByWebhook())
      .when(refunded)
      .then({
        outcome: 'contradicted',
        swap: 'unchanged',
        queue: { reason: 'contradicted', queuedByEventId: refunded.eventId },
      });
    expect(conflicts.map((c) => c.field)).toContain('status');
  });

  it('a later open status of a final swap is out of date: a no-op, neither applied nor a conflict', () => {
    spec()
      .given(swapCreated('s1'), finishedByWebhook())
      .when(statusReported('s1', 'PENDING', { amount: '9', providerFees: '1' }))
      .then({
        outcome: 'noop',
        reason: 'an open status (PENDING) after the final status FINISHED: out of date, ignored',
        swap: 'unchanged',
        queue: 'unchanged',
        conflicts: [],
      });
  });

  it('a changed final amount or hash is a conflict; the final value stays', () => {
    for (const [change, field, finalValue] of [
      [{ amount: '0.3' }, 'amountTo', '0.248'],
      [{ payoutTransactionId: 'other' }, 'payoutTransactionId', 'out'],
    ] as const) {
      spec()
        .given(swapCreated('s1'), finishedByWebhook())
        .when(statusReported('s1', 'FINISHED', { ...finishedFigures, ...change }))
        .then({
          outcome: 'contradicted',
          swap: 'unchanged',
          conflicts: [{ field, finalValue, reportedValue: Object.values(change)[0] }],
        });
    }
  });

  it('the confirming poll fills the fees a webhook could not carry (completion entry, queued again); a repeat is a no-op', () => {
    const confirm = fullPoll();
    spec()
      .given(swapCreated('s1'), finishedByWebhook())
      .when(confirm)
      .then({
        outcome: 'applied',
        changes: {
          providerFees: [null, '0.0005'],
          referralFees: [null, '0.0001'],
          payoutNetworkFees: [null, '0.002'],
        },
        swap: { providerFees: '0.0005', payoutNetworkFees: '0.002', status: 'FINISHED', version: 3 },
        queue: { reason: 'filled', queuedByEventId: confirm.eventId },
        conflicts: [],
        postings: ['completion'],
      });
    spec()
      .given(swapCreated('s1'), finishedByWebhook(), fullPoll())
      .when(fullPoll())
      .then({ outcome: 'noop', swap: { version: 3 }, queue: 'unchanged', postings: [] });
  });

  it('a confirming poll that fills the network fee and contradicts the amount: fee filled, amount kept, a conflict', () => {
    const confirm = statusReported('s1', 'FINISHED', {
      ...finishedFigures,
      amount: '0.2',
      payoutNetworkFees: '0.002',
    });
    spec()
      .given(swapCreated('s1'), finishedByWebhook())
      .when(confirm)
      .then({
        outcome: 'applied',
        reason: 'amountTo 0.248 → 0.2',
        changes: { payoutNetworkFees: [null, '0.002'], amountTo: ['0.248', '0.2'] },
        swap: { payoutNetworkFees: '0.002', amountTo: '0.248', version: 3 },
        conflicts: [
          { field: 'amountTo', finalValue: '0.248', reportedValue: '0.2', eventId: confirm.eventId },
        ],
        queue: { reason: 'filled', queuedByEventId: confirm.eventId },
        postings: ['completion'],
      });
  });

  it('StatusContradicted (ingest saw final, answered 405): conflicts recorded, queued, swap unchanged', () => {
    const refused = statusContradicted('s1', 'REFUNDED', 'FINISHED', { amount: '0.3' });
    spec()
      .given(swapCreated('s1'), finishedByWebhook())
      .when(refused)
      .then({
        outcome: 'contradicted',
        swap: 'unchanged',
        conflicts: [
          { field: 'status', finalValue: 'FINISHED', reportedValue: 'REFUNDED', source: 'webhook' },
          { field: 'amountTo', finalValue: '0.248', reportedValue: '0.3' },
        ],
        queue: { reason: 'contradicted', queuedByEventId: refused.eventId },
        postings: [],
      });
  });

  it('StatusContradicted that agrees with the final swap is a no-op', () => {
    spec()
      .given(swapCreated('s1'), finishedByWebhook())
      .when(statusContradicted('s1', 'FINISHED', 'FINISHED', { amount: '0.2480' }))
      .then({ outcome: 'noop', conflicts: [] });
  });

  it('StatusContradicted for a swap that is not final is rejected', () => {
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'EXPIRED'))
      .when(statusContradicted('s1', 'REFUNDED', 'FINISHED'))
      .thenRejected('not final');
  });
});

describe('fold: input bounds (events that bypassed the edges)', () => {
  const given = () => [swapCreated('s1'), statusReported('s1', 'PENDING')];

  it('rejects a 41-integer-digit amount and a 37-fraction-digit fee, changing nothing', () => {
    spec()
      .given(...given())
      .when(statusReported('s1', 'FINISHED', { amount: '1'.repeat(41) }))
      .thenRejected('amount "1111');
    spec()
      .given(...given())
      .when(statusReported('s1', 'FINISHED', { amount: '1', providerFees: `0.${'1'.repeat(37)}` }))
      .thenRejected('providerFees');
    // The limits themselves are accepted.
    spec()
      .given(...given())
      .when(statusReported('s1', 'FINISHED', { amount: '9'.repeat(40), providerFees: `0.${'1'.repeat(36)}` }))
      .then({ outcome: 'applied', swap: { amountTo: '9'.repeat(40) } });
  });

  it('rejects a NUL in a transaction id, and the journal row stays storable', () => {
    for (const field of ['payinTransactionId', 'payoutTransactionId'] as const) {
      const { row } = spec()
        .given(...given())
        .when(statusReported('s1', 'FINISHED', { amount: '1', [field]: 'ab\u0000cd' }))
        .thenRejected(`payload.${field} contains U+0000`);
      expect((row.payload as Record<string, unknown>)[field]).toBe('ab\ufffdcd');
    }
  });

  it('rejects a NUL in a swapId and in a payin address, and the journal row stays storable', () => {
    const { row } = spec()
      .given(...given())
      .when(statusReported('s\u00001', 'PENDING'))
      .thenRejected('swapId contains U+0000');
    expect(row.swapId).toBe('s\ufffd1');
    expect(row.aggregateKey).toBe('swap:partner-a:s\ufffd1');
    spec()
      .when(swapCreated('s2', { created: { payinAddress: 'bc1q\u0000' } }))
      .thenRejected('payload.payinAddress contains U+0000');
  });
});

describe('fold: corrections', () => {
  it('amends a final swap, records who and why, reverses and re-posts, and queues it again', () => {
    const fix = swapCorrected('s1', { amount: '0.25', operator: 'alice', reason: 'partner statement 42' });
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'FINISHED', { amount: '0.248' }))
      .when(fix)
      .then({
        outcome: 'applied',
        reason: 'corrected by alice: partner statement 42',
        changes: { amountTo: ['0.248', '0.25'] },
        swap: { amountTo: '0.25', corrected: true, lastCorrectionEventId: fix.eventId },
        queue: { reason: 'corrected', queuedByEventId: fix.eventId },
        postings: ['reversal', 'correction'],
      });
  });

  it('can reopen a final swap by status and finality; a correction that changes nothing is a no-op', () => {
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'FINISHED', { amount: '0.248' }))
      .when(swapCorrected('s1', { status: 'PENDING', final: false }))
      .then({
        outcome: 'applied',
        changes: { status: ['FINISHED', 'PENDING'], final: [true, false] },
        swap: { status: 'PENDING', final: false, finalAt: null, statusClass: 'open' },
        postings: ['reversal'],
      });
    spec()
      .given(
        swapCreated('s1'),
        statusReported('s1', 'FINISHED'),
        swapCorrected('s1', { status: 'PENDING', final: false }),
      )
      .when(swapCorrected('s1', { status: 'PENDING' }))
      .then({ outcome: 'noop' });
  });

  it('BUG: a correction of an EXPIRED (closed) swap to PENDING leaves its class closed', () => {
    // src/projector/swaps.ts foldSwapCorrected derives the class only when `final` changes.
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'EXPIRED'))
      .when(swapCorrected('s1', { status: 'PENDING', final: false }))
      .then({ outcome: 'applied', swap: { status: 'PENDING', statusClass: 'open' } });
  });

  it.each([
    ['PENDING', true, 'FINISHED', 'PENDING is an open status and never final'],
    ['ON_HOLD', true, 'FINISHED', 'ON_HOLD is an open status and never final'],
    ['FINISHED', false, 'PENDING', 'FINISHED is a final status and never open'],
    ['REFUNDED', false, 'FINISHED', 'REFUNDED is a final status and never open'],
  ] as const)(
    'rejects a correction to %s with final %s (issue 41 point 11), the swap and its postings unchanged',
    (status, final, before, why) => {
      // thenRejected: the swap unchanged, no posting of this event.
      spec()
        .given(swapCreated('s1'), statusReported('s1', before, { amount: '0.248' }))
        .when(swapCorrected('s1', { status, final }))
        .thenRejected(`the correction contradicts the status classes: ${why}`);
    },
  );

  it('judges the swap as the correction leaves it: a status alone, or a finality alone, must agree too', () => {
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'FINISHED', { amount: '1' }))
      .when(swapCorrected('s1', { status: 'PENDING' }))
      .thenRejected('PENDING is an open status and never final');
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'PENDING'))
      .when(swapCorrected('s1', { final: true }))
      .thenRejected('PENDING is an open status and never final');
    // EXPIRED may be either: closed by default, final where a provider lists it.
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'FINISHED', { amount: '1' }))
      .when(swapCorrected('s1', { status: 'EXPIRED', final: true }))
      .then({ outcome: 'applied', swap: { status: 'EXPIRED', final: true, statusClass: 'final' } });
  });

  it('rejects a correction of an unknown swap', () => {
    spec()
      .when(swapCorrected('ghost', { amount: '1' }))
      .thenRejected('unknown swap partner-a/ghost');
  });
});

describe('fold: verdicts', () => {
  const created = swapCreated('s1');
  const fin = statusReported('s1', 'FINISHED', { amount: '1' });
  const fix = swapCorrected('s1', { amount: '2' });

  it('keeps the latest verdict and a history row; the queue stays when a newer event queued the swap', () => {
    const verdict = swapReconciled('s1', fin.eventId, 'MISMATCH');
    spec()
      .given(created, fin, fix)
      .when(verdict)
      .then({
        outcome: 'applied',
        changes: { verdict: [null, 'MISMATCH'] },
        reconciliation: { eventId: verdict.eventId, basedOnEventId: fin.eventId, verdict: 'MISMATCH' },
        verdicts: [{ eventId: verdict.eventId, providerId: A, swapId: 's1', verdict: 'MISMATCH' }],
        queue: { queuedByEventId: fix.eventId, reason: 'corrected' },
      });
  });

  it('a verdict on the queued event clears the queue; the history keeps both verdicts', () => {
    const first = swapReconciled('s1', fin.eventId, 'MISMATCH');
    const second = swapReconciled('s1', fix.eventId, 'MATCHED');
    const { ws } = spec()
      .given(created, fin, fix, first)
      .when(second)
      .then({
        outcome: 'applied',
        changes: { verdict: ['MISMATCH', 'MATCHED'] },
        reconciliation: { eventId: second.eventId, basedOnEventId: fix.eventId, verdict: 'MATCHED' },
        verdicts: [{ eventId: second.eventId }],
        queue: null,
      });
    expect(ws.dirty.queue.has(S1)).toBe(true);
    expect(ws.newVerdicts.map((v) => [v.verdict, v.basedOnEventId])).toEqual([
      ['MISMATCH', fin.eventId],
      ['MATCHED', fix.eventId],
    ]);
  });

  it('rejects a verdict for an unknown swap', () => {
    spec().when(swapReconciled('ghost', fin.eventId)).thenRejected('unknown swap');
  });
});

describe('fold: requests, quotes, duplicates, determinism', () => {
  it('records a request and how it failed; a second ending or an unknown request is rejected', () => {
    const { ws } = spec()
      .given(swapRequested('r1'), swapCreationFailed('r1', 'outcome_unknown'))
      .when(swapCreationFailed('r1', 'partner_error'))
      .thenRejected('already ended as unknown');
    expect(ws.requests.get('r1')).toMatchObject({ outcome: 'unknown', failureKind: 'outcome_unknown' });
    spec().when(swapCreationFailed('r2', 'partner_error')).thenRejected('unknown request r2');
  });

  it('records a quote once by its platform reference', () => {
    const { ws } = spec()
      .given(quoteReceived('q1'))
      .when(quoteReceived('q1'))
      .thenRejected('already recorded');
    expect(ws.quotes.get('q1')).toMatchObject({ outcome: 'received', quoteId: 'q-q1', amountTo: '0.25' });
  });

  it('ignores an event id seen before: not folded, not journaled', () => {
    const e = statusReported('s1', 'PENDING');
    const { givenRows } = spec()
      .given(swapCreated('s1'), e, e)
      .when(statusReported('s1', 'ON_HOLD'))
      .then({ outcome: 'applied', swap: { version: 3 } });
    expect(givenRows.map((r) => r?.outcome)).toEqual(['applied', 'applied', undefined]);
  });

  it('is deterministic: the same events fold to the same state and journal', () => {
    const events: SwapEvent[] = [
      swapCreated('s1'),
      swapCreated('s1', { providerId: B }),
      statusReported('s1', 'EXPIRED'),
      statusReported('s1', 'FINISHED', { amount: '1' }),
      statusReported('s1', 'REFUNDED', { amount: '2' }, { providerId: B }),
      statusReported('s1', 'REFUNDED'),
    ];
    const fold = () => {
      const ws = new WorkingSet();
      const journal = events.map((e, i) => foldEvent(ws, e, { topic: 't', partition: 0, offset: BigInt(i) }));
      return { ws, journal };
    };
    const [a, b] = [fold(), fold()];
    expect(b.journal).toEqual(a.journal);
    expect([...b.ws.swaps]).toEqual([...a.ws.swaps]);
    expect(b.ws.newPostings).toEqual(a.ws.newPostings);
    expect(b.ws.newConflicts).toEqual(a.ws.newConflicts);
  });

  it('names the rows each event touches, a swap by provider and swapId', () => {
    expect(rowKeys(swapRequested('r1'))).toEqual({ requestId: 'r1' });
    expect(rowKeys(quoteReceived('q1'))).toEqual({ quoteRef: 'q1' });
    expect(rowKeys(statusReported('s1', 'PENDING', {}, { providerId: B }))).toEqual({
      swap: { providerId: B, swapId: 's1', key: swapKey(B, 's1') },
    });
  });
});

describe('fold: the final amount', () => {
  it('is the one the final report carries, not an estimate reported before it; a later report fills it', () => {
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'PENDING', { amount: '0.25' }, { source: 'webhook' }))
      .when(statusReported('s1', 'FINISHED', { payinTransactionId: 'in', payoutTransactionId: 'out' }))
      .then({
        outcome: 'applied',
        changes: {
          status: ['PENDING', 'FINISHED'],
          statusClass: ['open', 'final'],
          final: [false, true],
          amountTo: ['0.25', null],
          payinTransactionId: [null, 'in'],
          payoutTransactionId: [null, 'out'],
        },
        swap: { final: true, amountTo: null },
      });
    spec()
      .given(
        swapCreated('s1'),
        statusReported('s1', 'PENDING', { amount: '0.25' }),
        statusReported('s1', 'FINISHED', { payinTransactionId: 'in' }),
      )
      .when(statusReported('s1', 'FINISHED', { amount: '0.249' }))
      .then({ outcome: 'applied', changes: { amountTo: [null, '0.249'] }, swap: { amountTo: '0.249' } });
  });

  it('keeps the estimate when the final report confirms the same amount', () => {
    spec()
      .given(swapCreated('s1'), statusReported('s1', 'PENDING', { amount: '0.25' }))
      .when(statusReported('s1', 'FINISHED', { amount: '0.250' }))
      .then({
        outcome: 'applied',
        changes: { status: ['PENDING', 'FINISHED'], statusClass: ['open', 'final'], final: [false, true] },
        swap: { amountTo: '0.25' },
      });
  });
});
