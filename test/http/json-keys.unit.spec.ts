import { describe, expect, it } from 'vitest';
import { duplicateJsonKey, duplicateKeyMessage } from '../../src/http/json-keys.ts';

/** Issue 41 point 11: JSON.parse keeps the last of two equal keys; the edges refuse such a body. */
describe('duplicate JSON keys', () => {
  it.each([
    ['at the top', '{"amount":"1","providerId":"p","amount":"2"}', 'amount', '$'],
    ['nested in an object', '{"a":{"x":1,"y":{"z":1,"z":2}}}', 'z', '$.a.y'],
    ['in an object in an array', '{"list":[{"k":1},{"k":1,"k":1}]}', 'k', '$.list[1]'],
    ['spelled with an escape', '{"amount":"1","\\u0061mount":"2"}', 'amount', '$'],
    ['with whitespace around', '{ "a" : 1 ,\n\t"a" : 2 }', 'a', '$'],
    ['the empty key', '{"":1,"":2}', '', '$'],
    ['a key that is not a plain name', '{"a b":{"q":1,"q":1}}', 'q', '$["a b"]'],
  ])('finds one %s', (_what, text, key, at) => {
    expect(() => JSON.parse(text)).not.toThrow();
    expect(duplicateJsonKey(text)).toEqual({ key, at });
  });

  it.each([
    ['distinct keys', '{"providerId":"p","providerStatus":"PENDING","amount":"0.25","transactionHash":null}'],
    ['equal keys in sibling objects', '{"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":1}]}'],
    ['a value equal to a key', '{"a":"a","b":"a"}'],
    ['strings holding quotes, braces and commas', '{"a":"x\\",\\"a\\":{","b":"}],[{\\"b"}'],
    ['an array of strings', '{"a":["a","a","a"]}'],
    ['a key equal to the parent key', '{"a":{"a":{"a":1}}}'],
    ['not an object', '["x","x"]'],
    ['a scalar', '"text"'],
  ])('finds none with %s', (_what, text) => {
    expect(() => JSON.parse(text)).not.toThrow();
    expect(duplicateJsonKey(text)).toBeUndefined();
  });

  it('words the refusal with the key and where it is, the key bounded', () => {
    expect(duplicateKeyMessage({ key: 'amount', at: '$' })).toBe('duplicate key "amount" in the JSON body');
    expect(duplicateKeyMessage({ key: 'z', at: '$.a.y' })).toBe(
      'duplicate key "z" in the JSON body at $.a.y',
    );
    expect(duplicateKeyMessage({ key: 'k'.repeat(100), at: '$' })).toBe(
      `duplicate key "${'k'.repeat(64)}…" in the JSON body`,
    );
  });
});

describe('duplicate JSON keys on text that is not JSON', () => {
  it('ends without an answer on an unterminated string (JSON.parse refuses such text first)', () => {
    expect(duplicateJsonKey('{"a":1,"a')).toBeUndefined();
    expect(duplicateJsonKey('{"a":"x\\"')).toBeUndefined();
  });
});
