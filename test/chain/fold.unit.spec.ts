import { describe, expect, it } from 'vitest';
import { swapKey } from '../../src/events/keys.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import { foldEvent } from '../../src/projector/fold.ts';
import { WorkingSet } from '../../src/projector/state.ts';
import { chainObserved } from '../../src/testing/chain.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';

const position = (offset: number) => ({ topic: 't', partition: 0, offset: BigInt(offset) });

function fold(events: SwapEvent[]) {
  const ws = new WorkingSet();
  const rows = events.map((e, i) => foldEvent(ws, e, position(i)));
  return { ws, rows };
}

const finished = () =>
  statusReported('s1', 'FINISHED', { amount: '0.248', payinTransactionId: 'in', payoutTransactionId: 'out' });

describe('fold: ChainTransactionObserved', () => {
  it('keeps the latest observation of a (swap, role, txid) and queues an ended swap for reconciliation', () => {
    const pending = chainObserved('s1', { status: 'pending', confirmations: 1, txid: 'out' });
    const found = chainObserved('s1', { status: 'found', confirmations: 12, txid: 'out' });
    const { ws, rows } = fold([swapCreated('s1'), finished(), pending, found]);
    expect(rows[2]!.outcome).toBe('applied');
    expect(rows[3]!.outcome).toBe('applied');
    expect([...ws.chainObservations.values()]).toMatchObject([
      {
        swapId: 's1',
        role: 'payout',
        txid: 'out',
        status: 'found',
        confirmations: 12,
        eventId: found.eventId,
      },
    ]);
    expect(ws.queue.get(swapKey('partner-a', 's1'))).toMatchObject({
      queuedByEventId: found.eventId,
      reason: 'chain',
    });
  });

  it('records the observation of an open swap without queueing it (it is judged when it ends)', () => {
    const { ws, rows } = fold([swapCreated('s1'), chainObserved('s1', { role: 'payin', txid: 'in' })]);
    expect(rows[1]!.outcome).toBe('applied');
    expect(ws.chainObservations.size).toBe(1);
    expect(ws.queue.get(swapKey('partner-a', 's1'))).toBeUndefined();
  });

  it('rejects, with the reason, an observation the projection cannot hold', () => {
    const cases: [Parameters<typeof chainObserved>[1], RegExp][] = [
      [{ role: 'fee' }, /role "fee"/],
      [{ status: 'maybe' }, /status "maybe"/],
      [{ transfers: [{ asset: 'native', recipient: 'x', amount: '1.5' }] }, /not atomic units/],
      [{ transfers: [{ asset: 'native', recipient: 'x', amount: '-1' }] }, /not atomic units/],
      [{ confirmations: -1 }, /confirmations -1/],
      [{ txid: '' }, /txid is empty/],
    ];
    for (const [fields, reason] of cases) {
      const { ws, rows } = fold([swapCreated('s1'), finished(), chainObserved('s1', fields)]);
      expect(rows[2]!.outcome).toBe('rejected');
      expect(rows[2]!.reason).toMatch(reason);
      expect(ws.chainObservations.size).toBe(0);
    }
  });

  it('rejects an observation of an unknown swap', () => {
    const { rows } = fold([chainObserved('nope')]);
    expect(rows[0]!.outcome).toBe('rejected');
    expect(rows[0]!.reason).toMatch(/unknown swap/);
  });

  it('is pure: the same events fold to the same rows', () => {
    const events = [swapCreated('s1'), finished(), chainObserved('s1', { txid: 'out' })];
    expect([...fold(events).ws.chainObservations.values()]).toEqual([
      ...fold(events).ws.chainObservations.values(),
    ]);
  });
});
