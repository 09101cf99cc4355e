import { describe, expect, it } from 'vitest';
import { UUID_PATTERN, uuidv7 } from '../../src/events/ids.ts';

describe('uuidv7 (RFC 9562)', () => {
  it('writes the millisecond time big-endian in the first 48 bits, then version 7 and variant 10', () => {
    const at = Date.UTC(2026, 10, 23, 12, 0, 0, 123);
    const id = uuidv7(at);
    expect(id).toMatch(UUID_PATTERN);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
  });

  it('orders by time as text, and ids of one millisecond differ', () => {
    const a = uuidv7(1_000);
    const b = uuidv7(1_001);
    expect(a < b).toBe(true);
    const same = new Set(Array.from({ length: 1000 }, () => uuidv7(5)));
    expect(same.size).toBe(1000);
    expect(uuidv7(0).startsWith('00000000-0000-7')).toBe(true);
    expect(uuidv7(2 ** 48 - 1).startsWith('ffffffff-ffff-7')).toBe(true);
  });

  it('refuses a time that does not fit 48 bits', () => {
    expect(() => uuidv7(2 ** 48)).toThrow(RangeError);
    expect(() => uuidv7(-1)).toThrow(RangeError);
    expect(() => uuidv7(1.5)).toThrow(RangeError);
  });
});
