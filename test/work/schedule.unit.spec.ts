import { describe, expect, it } from 'vitest';
import { DueSchedule } from '../../src/work/schedule.ts';

describe('DueSchedule', () => {
  const interval = 1000;

  it('polls a new swap at once, then once per interval after an answer', () => {
    const s = new DueSchedule({ baseMs: 5000, maxMs: 60_000 });
    expect(s.due('a', 0)).toBe(true);
    s.succeeded('a', 0, interval);
    expect(s.due('a', 999)).toBe(false);
    expect(s.due('a', 1000)).toBe(true);
  });

  it('backs a failing swap off exponentially, capped, and resets after an answer', () => {
    const s = new DueSchedule({ baseMs: 5000, maxMs: 30_000 });
    expect([1, 2, 3, 4, 5].map(() => s.failed('a', 0, interval))).toEqual([
      5000, 10_000, 20_000, 30_000, 30_000,
    ]);
    expect(s.failures('a')).toBe(5);
    expect(s.due('a', 29_999)).toBe(false);
    expect(s.due('a', 30_000)).toBe(true);
    s.succeeded('a', 30_000, interval);
    expect(s.failures('a')).toBe(0);
    expect(s.failed('a', 31_000, interval)).toBe(5000);
  });

  it('never retries a failure sooner than the poll interval', () => {
    const s = new DueSchedule({ baseMs: 10, maxMs: 100 });
    expect(s.failed('a', 0, 60_000)).toBe(60_000);
  });

  it('keeps a huge failure count finite', () => {
    const s = new DueSchedule({ baseMs: 1000, maxMs: 5000 });
    expect(s.backoffMs(5000)).toBe(5000);
  });

  it('forgets swaps that left the polling set', () => {
    const s = new DueSchedule({ baseMs: 1000, maxMs: 5000 });
    s.failed('gone', 0, interval);
    s.succeeded('kept', 0, interval);
    s.retain(new Set(['kept']));
    expect(s.size).toBe(1);
    expect(s.due('gone', 1)).toBe(true);
  });
});

describe('the due schedule as the chain watcher counts: every look a failure', () => {
  // The watcher's wait after its n-th look: base * 2^min(n, 20), up to the maximum.
  const watcher = (base: number, max: number) =>
    new DueSchedule({ baseMs: 2 * base, maxMs: max, maxExponent: 19 });

  it('doubles the wait at each look from twice the base, up to the maximum', () => {
    const s = watcher(15_000, 600_000);
    const waits = [1, 2, 3, 4, 5, 6].map((n) => s.failed('tx', n * 1_000_000, 0));
    expect(waits).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 600_000]);
    expect(s.failures('tx')).toBe(6);
  });

  it('stops doubling after 20 looks, whatever the maximum', () => {
    const s = watcher(1, Number.MAX_SAFE_INTEGER);
    expect(s.backoffMs(20)).toBe(2 ** 20);
    expect(s.backoffMs(25)).toBe(2 ** 20);
  });

  it('sets a key as looked at 20 times (no source for it), and forgets one so it is due at once', () => {
    const s = watcher(15_000, 600_000);
    s.failedAsOften('no-source', 1_000, 20);
    expect(s.due('no-source', 1_000 + 599_999)).toBe(false);
    expect(s.nextAt('no-source')).toBe(601_000);
    expect(s.failures('no-source')).toBe(20);
    s.forget('no-source');
    expect(s.due('no-source', 0)).toBe(true);
    expect(s.nextAt('no-source')).toBe(0);
  });
});
