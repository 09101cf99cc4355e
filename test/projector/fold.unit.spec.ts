import { describe, expect, it } from 'vitest';
import { foldEvent, rowKeys } from '../../src/projector/fold.ts';
import { WorkingSet, type JournalRow } from '../../src/projector/state.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import {
  quoteReceived,
  statusReported,
  swapCorrected,
  swapCreated,
  swapCreationFailed,
  swapReconciled,
  swapRequested,
} from '../../src/testing/events.ts';

function foldAll(events: SwapEvent[], ws = new WorkingSet()) {
  const journal: (JournalRow | undefined)[] = events.map((e, i) =>
    foldEvent(ws, e, { topic: 'swap-events', partition: 0, offset: BigInt(i) }),
  );
  return { ws, journal };
}

const outcomes = (journal: (JournalRow | undefined)[]) => journal.map((j) => j?.outcome);

describe('fold: swap creation', () => {
  it('creates the swap in CREATED with the request, fees at creation and signed amounts', () => {
    const { ws, journal } = foldAll([swapCreated('s1', { request: { slippage: '0.02' } })]);
    const swap = ws.swaps.get('s1')!;
    expect(journal[0]).toMatchObject({
      outcome: 'applied',
      eventType: 'SwapCreated',
      swapId: 's1',
      offset: 0n,
    });
    expect(swap).toMatchObject({
      status: 'CREATED',
      final: false,
      providerId: 'partner-a',
      tradeMethod: 'float',
      amountFrom: '0.015',
      slippage: '0.02',
      createdProviderFees: '0.0005',
      signedAmountToWallet: '250000000000000000',
      version: 1,
    });
    expect(ws.dirty.swaps.has('s1')).toBe(true);
  });

  it('rejects a second SwapCreated for the same swapId and keeps the first', () => {
    const first = swapCreated('s1');
    const { ws, journal } = foldAll([first, swapCreated('s1', { created: { payinAddress: 'other' } })]);
    expect(outcomes(journal)).toEqual(['applied', 'rejected']);
    expect(journal[1]!.reason).toContain(first.eventId);
    expect(ws.swaps.get('s1')!.payinAddress).not.toBe('other');
  });

  it('rejects an unknown trade method', () => {
    const { journal } = foldAll([swapCreated('s1', { request: { tradeMethod: 'swing' } })]);
    expect(journal[0]).toMatchObject({ outcome: 'rejected', reason: expect.stringContaining('swing') });
  });
});

describe('fold: status reports', () => {
  it('applies PENDING → ON_HOLD → PENDING → FINISHED, each a change', () => {
    const { ws, journal } = foldAll([
      swapCreated('s1'),
      statusReported('s1', 'PENDING'),
      statusReported('s1', 'ON_HOLD'),
      statusReported('s1', 'PENDING'),
      statusReported('s1', 'FINISHED', {
        amount: '0.248',
        payinTransactionId: 'in',
        payoutTransactionId: 'out',
      }),
    ]);
    expect(outcomes(journal)).toEqual(['applied', 'applied', 'applied', 'applied', 'applied']);
    expect(journal.map((j) => j?.changes?.status)).toEqual([
      [null, 'CREATED'],
      ['CREATED', 'PENDING'],
      ['PENDING', 'ON_HOLD'],
      ['ON_HOLD', 'PENDING'],
      ['PENDING', 'FINISHED'],
    ]);
    const swap = ws.swaps.get('s1')!;
    expect(swap).toMatchObject({ status: 'FINISHED', final: true, amountTo: '0.248', version: 5 });
    expect(swap.finalAt).toBe(journal[4]!.occurredAt);
  });

  it('journals a report that changes nothing as a no-op (a poll repeating a webhook)', () => {
    const { ws, journal } = foldAll([
      swapCreated('s1'),
      statusReported('s1', 'PENDING', { payinTransactionId: 'in' }, { source: 'webhook' }),
      statusReported('s1', 'PENDING', { payinTransactionId: 'in', amount: '' }, { source: 'poll' }),
    ]);
    expect(outcomes(journal)).toEqual(['applied', 'applied', 'noop']);
    expect(ws.swaps.get('s1')!.version).toBe(2);
  });

  it('treats empty fields as unknown, never as erasing a known value', () => {
    const { ws } = foldAll([
      swapCreated('s1'),
      statusReported('s1', 'PENDING', { payinTransactionId: 'in' }),
      statusReported('s1', 'ON_HOLD', { payinTransactionId: '  ' }),
    ]);
    expect(ws.swaps.get('s1')!.payinTransactionId).toBe('in');
  });

  it('compares amounts as decimals: 1.50 repeats 1.5', () => {
    const { journal } = foldAll([
      swapCreated('s1'),
      statusReported('s1', 'PENDING', { amount: '1.5' }),
      statusReported('s1', 'PENDING', { amount: '1.50' }),
    ]);
    expect(outcomes(journal)).toEqual(['applied', 'applied', 'noop']);
  });

  it('queues the swap for reconciliation in the same fold when it becomes final', () => {
    const { ws, journal } = foldAll([
      swapCreated('s1'),
      statusReported('s1', 'REFUNDED', { payinTransactionId: 'in' }),
    ]);
    expect(ws.queue.get('s1')).toEqual({
      swapId: 's1',
      queuedByEventId: journal[1]!.eventId,
      queuedAt: journal[1]!.occurredAt,
      reason: 'final',
    });
  });

  it('decides finality from the event flag, not from the status name', () => {
    const { ws } = foldAll([
      swapCreated('s1'),
      statusReported('s1', 'FINISHED', { amount: '1' }, {}),
      statusReported('s1', 'CLOSED', { final: true }),
    ]);
    expect(ws.swaps.get('s1')!.final).toBe(true);
    const notFinal = foldAll([swapCreated('s2'), statusReported('s2', 'FINISHED', { final: false })]);
    expect(notFinal.ws.swaps.get('s2')).toMatchObject({ status: 'FINISHED', final: false });
    expect(notFinal.ws.queue.get('s2')).toBeUndefined();
  });

  it('rejects a report for an unknown swap, and one from a provider that does not own the swap', () => {
    const { journal } = foldAll([
      statusReported('ghost', 'PENDING'),
      swapCreated('s1'),
      statusReported('s1', 'PENDING', {}, { providerId: 'partner-b' }),
    ]);
    expect(journal[0]).toMatchObject({
      outcome: 'rejected',
      reason: expect.stringContaining('unknown swap ghost'),
    });
    expect(journal[2]).toMatchObject({
      outcome: 'rejected',
      reason: expect.stringContaining('belongs to provider partner-a'),
    });
  });
});

describe('fold: final-status rules', () => {
  const finished = () => [
    swapCreated('s1'),
    statusReported(
      's1',
      'FINISHED',
      { amount: '0.248', payinTransactionId: 'in', payoutTransactionId: 'out' },
      { source: 'webhook' },
    ),
  ];

  it('rejects a later status for a final swap and leaves the state as it was', () => {
    const { ws, journal } = foldAll([...finished(), statusReported('s1', 'PENDING')]);
    expect(journal[2]).toMatchObject({
      outcome: 'rejected',
      reason: 'swap is final (FINISHED); a report of PENDING is not applied',
    });
    expect(ws.swaps.get('s1')).toMatchObject({ status: 'FINISHED', version: 2 });
  });

  it('rejects a changed final amount, fee or hash', () => {
    for (const change of [{ amount: '0.3' }, { payoutTransactionId: 'other' }]) {
      const { ws, journal } = foldAll([...finished(), statusReported('s1', 'FINISHED', change)]);
      expect(journal[2]!.outcome).toBe('rejected');
      expect(ws.swaps.get('s1')!.amountTo).toBe('0.248');
    }
  });

  it('applies the confirming poll that fills fees a webhook could not carry, then no-ops a repeat', () => {
    const confirm = () =>
      statusReported('s1', 'FINISHED', {
        amount: '0.248',
        providerFees: '0.0005',
        referralFees: '0.0001',
        payoutNetworkFees: '0.002',
        payinTransactionId: 'in',
        payoutTransactionId: 'out',
      });
    const { ws, journal } = foldAll([...finished(), confirm(), confirm()]);
    expect(outcomes(journal)).toEqual(['applied', 'applied', 'applied', 'noop']);
    expect(journal[2]!.changes).toEqual({
      providerFees: [null, '0.0005'],
      referralFees: [null, '0.0001'],
      payoutNetworkFees: [null, '0.002'],
    });
    expect(ws.swaps.get('s1')).toMatchObject({ providerFees: '0.0005', status: 'FINISHED' });
    expect(ws.queue.get('s1')!.queuedByEventId).toBe(journal[1]!.eventId);
  });
});

describe('fold: corrections', () => {
  it('amends a final swap, records who and why, and queues it again', () => {
    const { ws, journal } = foldAll([
      swapCreated('s1'),
      statusReported('s1', 'FINISHED', { amount: '0.248' }),
      swapCorrected('s1', { amount: '0.25', operator: 'alice', reason: 'partner statement 42' }),
    ]);
    expect(journal[2]).toMatchObject({
      outcome: 'applied',
      reason: 'corrected by alice: partner statement 42',
      changes: { amountTo: ['0.248', '0.25'] },
    });
    expect(ws.swaps.get('s1')).toMatchObject({
      amountTo: '0.25',
      corrected: true,
      lastCorrectionEventId: journal[2]!.eventId,
    });
    expect(ws.queue.get('s1')).toMatchObject({ reason: 'corrected', queuedByEventId: journal[2]!.eventId });
  });

  it('can reopen a swap by status and finality; a correction that changes nothing is a no-op', () => {
    const { ws, journal } = foldAll([
      swapCreated('s1'),
      statusReported('s1', 'EXPIRED'),
      swapCorrected('s1', { status: 'PENDING', final: false }),
      swapCorrected('s1', { status: 'PENDING' }),
    ]);
    expect(outcomes(journal)).toEqual(['applied', 'applied', 'applied', 'noop']);
    expect(ws.swaps.get('s1')).toMatchObject({ status: 'PENDING', final: false, finalAt: null });
  });

  it('rejects a correction of an unknown swap', () => {
    expect(foldAll([swapCorrected('ghost', { amount: '1' })]).journal[0]!.outcome).toBe('rejected');
  });
});

describe('fold: requests, quotes, reconciliations, duplicates', () => {
  it('records a request and how it failed; a second ending is rejected', () => {
    const { ws, journal } = foldAll([
      swapRequested('r1'),
      swapCreationFailed('r1', 'outcome_unknown'),
      swapCreationFailed('r1', 'partner_error'),
      swapCreationFailed('r2', 'partner_error'),
    ]);
    expect(outcomes(journal)).toEqual(['applied', 'applied', 'rejected', 'rejected']);
    expect(ws.requests.get('r1')).toMatchObject({ outcome: 'unknown', failureKind: 'outcome_unknown' });
  });

  it('records a quote once by its platform reference', () => {
    const { ws, journal } = foldAll([quoteReceived('q1'), quoteReceived('q1')]);
    expect(outcomes(journal)).toEqual(['applied', 'rejected']);
    expect(ws.quotes.get('q1')).toMatchObject({ outcome: 'received', quoteId: 'q-q1', amountTo: '0.25' });
  });

  it('stores the reconciliation and clears the queue only for the event it was based on', () => {
    const created = swapCreated('s1');
    const fin = statusReported('s1', 'FINISHED', { amount: '1' });
    const fix = swapCorrected('s1', { amount: '2' });
    const { ws } = foldAll([created, fin, fix, swapReconciled('s1', fin.eventId, 'MISMATCH')]);
    expect(ws.reconciliations.get('s1')).toMatchObject({ verdict: 'MISMATCH', basedOnEventId: fin.eventId });
    expect(ws.queue.get('s1')?.queuedByEventId).toBe(fix.eventId);
    foldAll([swapReconciled('s1', fix.eventId, 'MATCHED')], ws);
    expect(ws.queue.get('s1')).toBeUndefined();
    expect(ws.dirty.queue.has('s1')).toBe(true);
  });

  it('ignores an event id seen before: not folded, not journaled', () => {
    const e = statusReported('s1', 'PENDING');
    const { ws, journal } = foldAll([swapCreated('s1'), e, e]);
    expect(journal[2]).toBeUndefined();
    expect(ws.swaps.get('s1')!.version).toBe(2);
  });

  it('is deterministic: the same events fold to the same state and journal', () => {
    const events = [
      swapCreated('s1'),
      statusReported('s1', 'PENDING'),
      statusReported('s1', 'FINISHED', { amount: '1' }),
    ];
    const a = foldAll(events);
    const b = foldAll(events);
    expect(b.journal).toEqual(a.journal);
    expect([...b.ws.swaps]).toEqual([...a.ws.swaps]);
  });

  it('names the rows each event touches', () => {
    expect(rowKeys(swapRequested('r1'))).toEqual({ requestId: 'r1' });
    expect(rowKeys(quoteReceived('q1'))).toEqual({ quoteRef: 'q1' });
    expect(rowKeys(statusReported('s1', 'PENDING'))).toEqual({ swapId: 's1' });
  });
});

describe('fold: the final amount', () => {
  it('is the one the final report carries, not an estimate reported before it', () => {
    const { ws, journal } = foldAll([
      swapCreated('s1'),
      statusReported('s1', 'PENDING', { amount: '0.25' }, { source: 'webhook' }),
      statusReported('s1', 'FINISHED', { payinTransactionId: 'in', payoutTransactionId: 'out' }),
    ]);
    expect(journal[2]!.changes).toMatchObject({ amountTo: ['0.25', null], status: ['PENDING', 'FINISHED'] });
    expect(ws.swaps.get('s1')).toMatchObject({ final: true, amountTo: null });
    // A later report may fill it: a value still unknown of a final swap.
    foldAll([statusReported('s1', 'FINISHED', { amount: '0.249' })], ws);
    expect(ws.swaps.get('s1')!.amountTo).toBe('0.249');
  });

  it('keeps the estimate when the final report confirms the same amount', () => {
    const { ws, journal } = foldAll([
      swapCreated('s1'),
      statusReported('s1', 'PENDING', { amount: '0.25' }),
      statusReported('s1', 'FINISHED', { amount: '0.250' }),
    ]);
    expect(journal[2]!.changes).toEqual({ status: ['PENDING', 'FINISHED'], final: [false, true] });
    expect(ws.swaps.get('s1')!.amountTo).toBe('0.25');
  });
});
