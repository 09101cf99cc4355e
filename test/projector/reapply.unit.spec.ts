import { describe, expect, it } from 'vitest';
import { foldEvent } from '../../src/projector/fold.ts';
import { WorkingSet } from '../../src/projector/state.ts';
import { rejectionKind } from '../../src/projector/decision.ts';
import { reapplyEvent, type RejectedJournalRow } from '../../src/ops/reapply.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import type { SwapEvent } from '../../src/events/types.ts';

const rowOf = (e: SwapEvent, reason: string): RejectedJournalRow => ({
  eventId: e.eventId,
  eventType: e.eventType,
  swapId: e.swapId,
  aggregateKey: e.aggregateKey,
  providerId: e.providerId,
  source: e.source,
  occurredAt: e.occurredAt,
  recordedAt: e.recordedAt,
  outcome: 'rejected',
  reason,
  payload: e.payload,
  reappliedBy: null,
});

describe('EventReapplied in the fold (pure: the carried event is in the log)', () => {
  const fold = (events: SwapEvent[]) => {
    const ws = new WorkingSet();
    const rows = events.map((e, i) => foldEvent(ws, e, { topic: 't', partition: 0, offset: BigInt(i) })!);
    return { ws, rows };
  };

  it('applies the carried event under the reapply id, once its cause is gone; the same events fold the same', () => {
    const early = statusReported('r1', 'PENDING', { payinTransactionId: 'in-1' });
    const { rows: first } = fold([early]);
    expect(first[0]!.outcome).toBe('rejected');
    const reapply = reapplyEvent(
      rowOf(early, first[0]!.reason!),
      { eventId: early.eventId, operator: 'alice', reason: 'swap exists' },
      new Date('2026-11-02T00:00:00Z'),
    );
    const events = [early, swapCreated('r1'), reapply];
    const a = fold(events);
    const b = fold(events);
    expect(a.rows.map((r) => r.outcome)).toEqual(['rejected', 'applied', 'applied']);
    expect(a.rows[2]!.reason).toMatch(/^reapplied StatusReported .* by alice: swap exists/);
    expect(a.ws.swaps.get('swap:partner-a:r1')).toMatchObject({ payinTransactionId: 'in-1' });
    expect(JSON.stringify([...b.ws.swaps])).toBe(JSON.stringify([...a.ws.swaps]));
  });

  it('is rejected with the reason when the carried event is still refused, or not the one it names', () => {
    const early = statusReported('r2', 'PENDING');
    const reapply = reapplyEvent(rowOf(early, 'unknown swap'), {
      eventId: early.eventId,
      operator: 'alice',
      reason: 'x',
    });
    const still = fold([early, reapply]).rows[1]!;
    expect(still.outcome).toBe('rejected');
    expect(still.reason).toMatch(/^reapply of .* by alice still rejected: unknown swap/);
    expect(rejectionKind(still.reason)).toBe('reapply');
    const forged = { ...reapply, payload: { ...reapply.payload, eventJson: '{"nope":' } };
    expect(fold([forged]).rows[0]!.reason).toMatch(/^reapply of .* refused: the carried event is not JSON/);
  });
});
