import { describe, expect, it } from 'vitest';
import { foldEvent } from '../../src/projector/fold.ts';
import { WorkingSet } from '../../src/projector/state.ts';
import { rejectionKind } from '../../src/projector/decision.ts';
import {
  statusContradicted,
  statusReported,
  swapCreated,
  swapCreationFailed,
} from '../../src/testing/events.ts';
import type { SwapEvent } from '../../src/events/types.ts';

/** The kinds come from the fold's own reasons: fold real events and classify what it wrote. */
function reasonsOf(events: SwapEvent[]): (string | null)[] {
  const ws = new WorkingSet();
  return events.map((e, i) => foldEvent(ws, e, { topic: 't', partition: 0, offset: BigInt(i) })!.reason);
}

describe('rejectionKind', () => {
  it('names the kind of every rejection the fold writes', () => {
    const reasons = reasonsOf([
      statusReported('ghost', 'PENDING'),
      swapCreated('s1'),
      swapCreated('s1'),
      statusReported('s1', 'PENDING', { amount: '1'.repeat(41) }),
      statusContradicted('s1', 'REFUNDED', 'FINISHED'),
      swapCreated('s2', { request: { tradeMethod: 'swing' } }),
      swapCreationFailed('never-requested', 'partner_error'),
    ]);
    expect(reasons.map(rejectionKind)).toEqual([
      'unknown_swap',
      'other', // applied: no reason
      'duplicate',
      'input_bounds',
      'not_final',
      'trade_method',
      'request_state',
    ]);
  });

  it('classifies the database refusal and anything unknown', () => {
    expect(rejectionKind(`the database refused the event's effects: 22007 invalid input`)).toBe('database');
    expect(
      rejectionKind('the fold failed on the event (a bug, not a refusal by the database): TypeError: x'),
    ).toBe('fold_error');
    expect(rejectionKind('the projector failed on the event (a bug, not a refusal by the database): x')).toBe(
      'fold_error',
    );
    expect(rejectionKind('something new')).toBe('other');
    expect(rejectionKind(null)).toBe('other');
  });
});
