import { describe, expect, it } from 'vitest';
import avro from 'avsc';
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

describe('a decoded event: avsc records, whose prototypes carry enumerable methods', () => {
  const type = avro.Type.forSchema({
    type: 'record',
    name: 'Outer',
    fields: [
      { name: 'a', type: 'string' },
      { name: 'inner', type: { type: 'record', name: 'Inner', fields: [{ name: 'b', type: 'string' }] } },
    ],
  });
  const decoded = (value: { a: string; inner: { b: string } }) =>
    type.fromBuffer(type.toBuffer(value)) as Record<string, unknown>;

  it('finds a U+0000 in a nested record and copies only the data, not the methods', () => {
    const payload = decoded({ a: 'x', inner: { b: 'y\u0000' } });
    const inherited: string[] = [];
    for (const k in payload) if (!Object.hasOwn(payload, k)) inherited.push(k);
    expect(inherited).toContain('toBuffer'); // what a for…in walk would also have visited
    const storable = storablePayload(payload) as Record<string, Record<string, unknown>>;
    expect(Object.keys(storable)).toEqual(['a', 'inner']);
    expect(Object.keys(storable.inner!)).toEqual(['b']);
    expect(storable).toEqual({ a: 'x', inner: { b: 'y\ufffd' } });
  });

  it('returns a decoded payload without NUL as the same object', () => {
    const payload = decoded({ a: 'x', inner: { b: 'y' } });
    expect(storablePayload(payload)).toBe(payload);
  });
});
