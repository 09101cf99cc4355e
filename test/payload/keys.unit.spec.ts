import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  importVerificationKey,
  KeyImportError,
  KeyRegistryError,
  keysValidAt,
  parsePartnerKeys,
  selectKeyAt,
  type PartnerKey,
  type PublicKeyInput,
} from '../../src/payload/index.ts';
import { KEYS, readKeyFile, VECTOR } from '../fixtures/payload/vectors.ts';

describe('importVerificationKey', () => {
  it.each([
    ['vector hex, curve inferred', { publicKey: VECTOR.publicKey }, 'secp256k1', 'ES256K'],
    ['k1 PEM', { publicKey: readKeyFile(KEYS.k1PemFile) }, 'secp256k1', 'ES256K'],
    ['r1 hex, curve inferred', { publicKey: KEYS.r1Hex }, 'secp256r1', 'ES256'],
    ['r1 JWK text', { publicKey: readKeyFile(KEYS.r1JwkFile) }, 'secp256r1', 'ES256'],
    [
      'k1 compressed with curve',
      { curve: 'secp256k1', publicKey: KEYS.k1CompressedHex },
      'secp256k1',
      'ES256K',
    ],
  ] as const)('imports %s', (_, input, curve, alg) => {
    expect(importVerificationKey(input)).toMatchObject({ curve, alg });
  });

  const privateK1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;

  it.each([
    ['malformed hex', { publicKey: '04zz' }, /neither hex, PEM nor JWK/],
    ['a short hex point', { publicKey: '04' + 'ab'.repeat(32) }, /must be 65 bytes/],
    ['a point on neither curve', { publicKey: '04' + '00'.repeat(64) }, /neither secp256k1 nor secp256r1/],
    ['a compressed key without curve', { publicKey: KEYS.k1CompressedHex }, /needs its curve/],
    [
      'the k1 point as secp256r1',
      { curve: 'secp256r1', publicKey: VECTOR.publicKey },
      /not a point on secp256r1/,
    ],
    [
      'an r1 JWK as secp256k1',
      { curve: 'secp256k1', publicKey: readKeyFile(KEYS.r1JwkFile) },
      /is a secp256r1 key, not secp256k1/,
    ],
    [
      'an r1 PEM as secp256k1',
      { curve: 'secp256k1', publicKey: readKeyFile(KEYS.r1PemFile) },
      /is a secp256r1 key, not secp256k1/,
    ],
    [
      'a private PEM',
      { publicKey: privateK1.export({ type: 'pkcs8', format: 'pem' }) as string },
      /private key/,
    ],
    ['a private JWK', { publicKey: privateK1.export({ format: 'jwk' }) }, /private key/],
    [
      'an RSA PEM',
      { publicKey: rsa.export({ type: 'spki', format: 'pem' }) as string },
      /rsa key, not an EC key/,
    ],
    ['an Ed25519-like JWK', { publicKey: { kty: 'OKP', crv: 'Ed25519', x: 'AA' } }, /kty must be "EC"/],
    ['a P-384 JWK', { publicKey: { kty: 'EC', crv: 'P-384', x: 'AA', y: 'AA' } }, /crv must be/],
    ['broken JSON', { publicKey: '{"kty":' }, /does not parse/],
    [
      'garbage PEM',
      { publicKey: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' },
      /not a public key/,
    ],
    [
      'an unknown curve name',
      { curve: 'ed25519' as 'secp256k1', publicKey: VECTOR.publicKey },
      /curve must be/,
    ],
  ] as [string, PublicKeyInput, RegExp][])('refuses %s with a reason', (_, input, message) => {
    expect(() => importVerificationKey(input)).toThrow(KeyImportError);
    expect(() => importVerificationKey(input)).toThrow(message);
  });
});

describe('key registry', () => {
  const key = (keyId: string, validFrom: string, validTo?: string): PartnerKey => ({
    keyId,
    curve: 'secp256k1',
    publicKey: VECTOR.publicKey,
    validFrom,
    ...(validTo ? { validTo } : {}),
  });
  const k2024 = key('k-2024', '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z');
  const k2025 = key('k-2025', '2024-12-15T00:00:00Z'); // overlaps k-2024 for the rotation
  const keys = [k2024, k2025];
  const ids = (list: PartnerKey[]) => list.map((k) => k.keyId);

  it('selects the key whose window holds createdAt', () => {
    expect(selectKeyAt(keys, '2024-06-01T00:00:00Z')?.keyId).toBe('k-2024');
    expect(selectKeyAt(keys, '2026-06-01T00:00:00Z')?.keyId).toBe('k-2025');
  });

  it('treats validFrom as inclusive and validTo as exclusive', () => {
    expect(ids(keysValidAt(keys, '2024-01-01T00:00:00Z'))).toEqual(['k-2024']);
    expect(ids(keysValidAt(keys, '2024-12-31T23:59:59.999Z'))).toEqual(['k-2025', 'k-2024']);
    expect(ids(keysValidAt(keys, '2025-01-01T00:00:00Z'))).toEqual(['k-2025']);
  });

  it('lists overlapping keys newest validFrom first, list order breaking ties', () => {
    expect(ids(keysValidAt(keys, '2024-12-20T00:00:00Z'))).toEqual(['k-2025', 'k-2024']);
    const twin = key('k-twin', '2024-12-15T00:00:00Z');
    expect(ids(keysValidAt([k2024, twin, k2025], '2024-12-20T00:00:00Z'))).toEqual([
      'k-twin',
      'k-2025',
      'k-2024',
    ]);
  });

  it('returns no key before the first window', () => {
    expect(selectKeyAt(keys, '2023-12-31T23:59:59Z')).toBeUndefined();
    expect(keysValidAt([], '2024-06-01T00:00:00Z')).toEqual([]);
  });

  it('reads the timestamp shapes partners send, and Date objects', () => {
    for (const at of [
      '2024-12-31T23:00:00+0000',
      '2024-12-31T23:00:00+00:00',
      '2025-01-01T00:30:00+01:30',
      '2024-12-31T23:00:00.123456Z',
      '2024-12-31T23:00Z',
      '2024-12-31T23:00:00.5Z',
      new Date('2024-12-31T23:00:00Z'),
    ])
      expect(ids(keysValidAt(keys, at))).toEqual(['k-2025', 'k-2024']);
    expect(ids(keysValidAt(keys, '2025-01-01T00:30:00+00:30'))).toEqual(['k-2025']);
  });

  it('refuses malformed createdAt and windows', () => {
    for (const at of [
      '2024-06-01',
      '2024-06-01T00:00:00',
      'yesterday',
      '',
      '2024-13-01T00:00:00Z',
      '2024-02-30T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-06-01T24:00:00Z',
      '2024-06-01T12:00:60Z',
      new Date('x'),
    ])
      expect(() => keysValidAt(keys, at)).toThrow(KeyRegistryError);
    expect(() => keysValidAt([key('bad', 'soon')], '2024-06-01T00:00:00Z')).toThrow(/validFrom "soon"/);
    expect(() =>
      keysValidAt([key('rev', '2024-02-01T00:00:00Z', '2024-01-01T00:00:00Z')], '2024-06-01T00:00:00Z'),
    ).toThrow(/validTo is not after validFrom/);
  });

  describe('parsePartnerKeys', () => {
    it('accepts a well-formed key history', () => {
      const raw = JSON.parse(
        JSON.stringify([k2024, { ...k2025, curve: 'secp256r1', publicKey: readKeyFile(KEYS.r1PemFile) }]),
      );
      expect(ids(parsePartnerKeys(raw))).toEqual(['k-2024', 'k-2025']);
    });

    it.each([
      ['not an array', {}, /must be an array/],
      ['a missing keyId', [{ ...k2024, keyId: '' }], /keyId is missing/],
      ['a duplicate keyId', [k2024, k2024], /appears twice/],
      ['an unknown curve', [{ ...k2024, curve: 'P-384' }], /curve must be/],
      [
        'a key off its curve',
        [{ ...k2024, curve: 'secp256r1' }],
        /k-2024\): the public key is not a point on secp256r1/,
      ],
      ['a missing publicKey', [{ ...k2024, publicKey: undefined }], /publicKey is missing/],
      ['a missing validFrom', [{ ...k2024, validFrom: undefined }], /validFrom is missing/],
      ['a malformed validTo', [{ ...k2024, validTo: 'later' }], /validTo "later"/],
    ])('refuses %s, naming the entry', (_, value, message) => {
      expect(() => parsePartnerKeys(value)).toThrow(KeyRegistryError);
      expect(() => parsePartnerKeys(value)).toThrow(message);
    });
  });
});
