import { createHash, timingSafeEqual } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ApiKeyIndex,
  apiKeyDigest,
  generateApiKey,
  looksLikeApiKey,
  newKeyId,
} from '../../src/providers/api-keys.ts';

describe('webhook API keys', () => {
  it('are 32 random bytes as slk_ + base64url, stored as the SHA-256 hex digest of the whole text', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key).toMatch(/^slk_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.key.slice(4), 'base64url')).toHaveLength(32);
    expect(a.key).not.toBe(b.key);
    expect(a.sha256).toBe(createHash('sha256').update(a.key).digest('hex'));
    expect(a.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(looksLikeApiKey(a.key)).toBe(true);
    expect(looksLikeApiKey(a.sha256)).toBe(false);
  });

  it('key ids sort by creation time', () => {
    expect(newKeyId(new Date('2026-11-01T12:34:56Z'))).toMatch(/^k20261101123456[0-9a-f]{4}$/);
  });

  const a1 = generateApiKey();
  const a2 = generateApiKey();
  const b1 = generateApiKey();
  const entries = [
    { providerId: 'a', keyId: 'a1', sha256: a1.sha256 },
    { providerId: 'a', keyId: 'a2', sha256: a2.sha256 },
    { providerId: 'b', keyId: 'b1', sha256: b1.sha256 },
  ];

  it('finds the provider and key id of a valid key; several keys of a provider are valid at once', () => {
    const index = new ApiKeyIndex(entries);
    expect(index.authenticate(a1.key)).toEqual({ providerId: 'a', keyId: 'a1' });
    expect(index.authenticate(a2.key)).toEqual({ providerId: 'a', keyId: 'a2' });
    expect(index.authenticate(b1.key)).toEqual({ providerId: 'b', keyId: 'b1' });
  });

  it('refuses a missing, empty, wrong, truncated key, and the digest itself presented as a key', () => {
    const index = new ApiKeyIndex(entries);
    for (const bad of [
      undefined,
      '',
      'slk_wrong',
      a1.key.slice(0, -1),
      a1.key + 'x',
      a1.sha256,
      ` ${a1.key}`,
    ])
      expect(index.authenticate(bad)).toBeUndefined();
  });

  it('does the same work on every path: one digest compared in constant time over 32 bytes', () => {
    const calls: [number, number][] = [];
    const index = new ApiKeyIndex(entries, (x, y) => {
      calls.push([x.length, y.length]);
      return timingSafeEqual(x, y);
    });
    for (const presented of [a1.key, undefined, '', 'slk_wrong', 'x'.repeat(5000), b1.key]) {
      calls.length = 0;
      index.authenticate(presented);
      expect(calls).toEqual([[32, 32]]);
    }
  });

  it('refuses malformed digests and a digest listed for two keys', () => {
    expect(() => new ApiKeyIndex([{ providerId: 'a', keyId: 'x', sha256: 'ABC' }])).toThrow(
      /64 lower-case hex/,
    );
    expect(
      () =>
        new ApiKeyIndex([
          { providerId: 'a', keyId: 'x', sha256: a1.sha256 },
          { providerId: 'b', keyId: 'y', sha256: a1.sha256 },
        ]),
    ).toThrow(/another key/);
    expect(apiKeyDigest('abc').toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});
