import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { envelopeSchema, PAYLOAD_NAMESPACE } from '../../src/events/catalog.ts';
import { EventEncodeError, wireEncode } from '../../src/events/codec.ts';
import { statusReported } from '../../src/testing/events.ts';

/** The registry client's own framing: magic byte 0, the schema id big-endian, then avsc's body. */
const registryFraming = (type: avro.Type, id: number, value: unknown) => {
  const header = Buffer.alloc(5);
  header.writeUInt32BE(id, 1);
  return Buffer.concat([header, type.toBuffer(value)]);
};

describe('wireEncode (Confluent wire format, the body written once)', () => {
  const note = avro.Type.forSchema({
    type: 'record',
    name: 'Note',
    fields: [
      { name: 'id', type: 'string' },
      { name: 'text', type: 'string' },
    ],
  });

  it('frames a small value as the registry client does', () => {
    const value = { id: 'a', text: 'short' };
    expect(wireEncode(note, 7, value)).toEqual(registryFraming(note, 7, value));
  });

  it('writes a value larger than its scratch buffer whole, and a small one right after it', () => {
    const big = { id: 'big', text: 'x'.repeat(100_000) };
    const out = wireEncode(note, 0x01020304, big);
    expect(out).toEqual(registryFraming(note, 0x01020304, big));
    expect(out.subarray(0, 5)).toEqual(Buffer.from([0, 1, 2, 3, 4]));
    expect(note.fromBuffer(out.subarray(5))).toEqual(big);
    const small = { id: 'b', text: 'after' };
    expect(wireEncode(note, 9, small)).toEqual(registryFraming(note, 9, small));
  });

  it('gives each caller a buffer of its own (the scratch buffer is reused)', () => {
    const first = wireEncode(note, 1, { id: 'one', text: 'first' });
    const copy = Buffer.from(first);
    wireEncode(note, 1, { id: 'two', text: 'second, longer' });
    expect(first).toEqual(copy);
  });

  it('writes a ~2 KiB event envelope (over avsc’s 1 KiB shared buffer) as the registry client would', () => {
    const type = avro.Type.forSchema(envelopeSchema() as avro.Schema);
    const event = statusReported('s-1', 'FINISHED', { amount: '1.5', payinTransactionId: 'x'.repeat(2000) });
    const { payload, ...envelope } = event;
    const wrapped = { ...envelope, payload: { [`${PAYLOAD_NAMESPACE}.${event.eventType}`]: payload } };
    const out = wireEncode(type, 42, wrapped);
    expect(out.length).toBeGreaterThan(2000);
    expect(out).toEqual(registryFraming(type, 42, wrapped));
  });

  it('refuses a value that does not fit the schema, naming the field', () => {
    expect(() => wireEncode(note, 1, { id: 'a', text: 5 })).toThrow(EventEncodeError);
    expect(() => wireEncode(note, 1, { id: 'a', text: 5 })).toThrow(/text/);
  });
});
