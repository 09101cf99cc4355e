import { describe, expect, it } from 'vitest';
import { mustQueue, publishableSeqs, type LockedRow } from '../../src/outbox/order.ts';

const rows = (...r: [number, string][]): LockedRow[] => r.map(([seq, key]) => ({ seq: BigInt(seq), key }));
const pending = (entries: Record<string, number[]>) =>
  new Map(Object.entries(entries).map(([k, seqs]) => [k, seqs.map((s) => BigInt(s))]));

describe('rule 1: an event whose key has pending outbox rows queues behind them', () => {
  it('queues the events of pending keys, sends the others', () => {
    expect(mustQueue(['a', 'b', 'c'], new Set(['b']))).toEqual([false, true, false]);
  });

  it('queues every later event of a key once one of its events is queued', () => {
    expect(mustQueue(['a', 'b', 'a', 'b'], new Set(['a']))).toEqual([true, false, true, false]);
  });

  it('sends everything when nothing is pending', () => {
    expect(mustQueue(['a', 'a'], new Set())).toEqual([false, false]);
  });
});

describe('rule 2: a relay publishes per key only an unbroken run from the oldest pending row', () => {
  it('publishes every row it holds when it holds all pending rows, in seq order', () => {
    const locked = rows([3, 'k1'], [1, 'k1'], [2, 'k2']);
    expect(publishableSeqs(locked, pending({ k1: [1, 3], k2: [2] }))).toEqual([1n, 2n, 3n]);
  });

  it('holds back a key whose oldest pending row is locked by someone else', () => {
    // Row 1 of k1 is held by another transaction (SKIP LOCKED hid it): 4 must wait behind it.
    const locked = rows([4, 'k1'], [5, 'k2']);
    expect(publishableSeqs(locked, pending({ k1: [1, 4], k2: [5] }))).toEqual([5n]);
  });

  it('stops a key at a gap: rows after a row it does not hold wait', () => {
    const locked = rows([1, 'k'], [3, 'k'], [4, 'k']);
    expect(publishableSeqs(locked, pending({ k: [1, 2, 3, 4] }))).toEqual([1n]);
  });

  it('publishes nothing of a key that has no pending rows left (published meanwhile)', () => {
    expect(publishableSeqs(rows([7, 'k']), pending({}))).toEqual([]);
  });

  it('handles many keys independently', () => {
    const locked = rows([10, 'a'], [11, 'b'], [12, 'a'], [13, 'c'], [14, 'b']);
    const p = pending({ a: [10, 12], b: [9, 11, 14], c: [13] });
    expect(publishableSeqs(locked, p)).toEqual([10n, 12n, 13n]);
  });
});
