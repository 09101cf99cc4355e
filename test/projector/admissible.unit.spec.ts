import { describe, expect, it } from 'vitest';
import { storablePayload } from '../../src/projector/admissible.ts';

describe('storablePayload: what the journal can store', () => {
  it('shows a U+0000 inside any text as U+FFFD, keys and other values untouched', () => {
    const payload = { a: 'x\u0000y', list: ['ok', '\u0000'], nested: { n: 1, b: true, z: null } };
    expect(storablePayload(payload)).toEqual({
      a: 'x\ufffdy',
      list: ['ok', '\ufffd'],
      nested: { n: 1, b: true, z: null },
    });
    expect(payload.a).toBe('x\u0000y'); // a copy: the event itself is not altered
  });

  it('leaves a literal backslash-u0000 text as it is (it is six printable characters, not a NUL)', () => {
    const payload = { path: 'C:\\u0000x', text: '\\u0000' };
    expect(storablePayload(payload)).toEqual(payload);
    expect(storablePayload('C:\\u0000x')).toBe('C:\\u0000x');
  });

  it('returns a payload without NUL as the same object', () => {
    const payload = { a: 'plain' };
    expect(storablePayload(payload)).toBe(payload);
  });
});
