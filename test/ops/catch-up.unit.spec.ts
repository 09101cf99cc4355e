import { describe, expect, it } from 'vitest';
import { catchUpProblem } from '../../src/ops/catch-up.ts';

const lag = (partition: number, endOffset: bigint, nextOffset: bigint) => ({
  partition,
  endOffset,
  nextOffset,
  lag: endOffset - nextOffset,
});

describe('what keeps a close from sealing: the projection behind the log', () => {
  it('says nothing when every partition is at its end and the outbox is empty', () => {
    expect(catchUpProblem({ lags: [lag(0, 5n, 5n), lag(1, 0n, 0n)], outboxPending: 0 })).toBeUndefined();
  });

  it('names the events behind, per partition', () => {
    expect(catchUpProblem({ lags: [lag(0, 5n, 3n), lag(1, 9n, 9n), lag(2, 4n, 0n)], outboxPending: 0 })).toBe(
      'the projector is 6 event(s) behind the log (partition 0: 2, 2: 4)',
    );
  });

  it('names events still in the outbox, with or without a lag', () => {
    expect(catchUpProblem({ lags: [lag(0, 1n, 1n)], outboxPending: 3 })).toBe(
      '3 event(s) wait in the outbox to be relayed to the log',
    );
    expect(catchUpProblem({ lags: [lag(0, 2n, 1n)], outboxPending: 1 })).toBe(
      'the projector is 1 event(s) behind the log (partition 0: 1); 1 event(s) wait in the outbox to be relayed to the log',
    );
  });
});
