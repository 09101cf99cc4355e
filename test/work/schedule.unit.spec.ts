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
