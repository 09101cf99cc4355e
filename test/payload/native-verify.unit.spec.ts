import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { importVerificationKey } from '../../src/payload/keys.ts';
import { verifiesNatively, verifiesWithJose } from '../../src/payload/verify.ts';
import { VECTOR } from '../fixtures/payload/vectors.ts';

// The ES256K fast path (libsecp256k1) must give jose's (OpenSSL's) answer on every signature.
const ORDER = BigInt('0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141');
const hex32 = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
const sOf = (sig: Buffer) => BigInt(`0x${sig.subarray(32).toString('hex')}`);

const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
const key = importVerificationKey({ curve: 'secp256k1', publicKey: publicKey.export({ format: 'jwk' }) });
const payload = VECTOR.payload;
const good = sign('sha256', Buffer.from(`.${payload}`), { key: privateKey, dsaEncoding: 'ieee-p1363' });

const flipped = Buffer.from(good);
flipped[10]! ^= 0x01;
const highS = Buffer.concat([good.subarray(0, 32), hex32(ORDER - sOf(good))]);
const cases: [string, Buffer, string][] = [
  ['a valid low-S signature', good, payload],
  ['the same signature high-S (valid in JWS)', highS, payload],
  ['a signature over another payload', good, `${payload}A`],
  ['a flipped bit in R', flipped, payload],
  ['S = 0', Buffer.concat([good.subarray(0, 32), hex32(0n)]), payload],
  ['R = 0', Buffer.concat([hex32(0n), good.subarray(32)]), payload],
  ['S = the group order', Buffer.concat([good.subarray(0, 32), hex32(ORDER)]), payload],
  ['R above the group order', Buffer.concat([hex32(ORDER + 5n), good.subarray(32)]), payload],
  ['all ones', Buffer.alloc(64, 0xff), payload],
];

describe('ES256K through libsecp256k1', () => {
  it('is loaded here (otherwise every verification takes the slower jose path)', () => {
    expect(verifiesNatively(payload, good, key)).toBe(true);
  });

  it.each(cases)('gives jose’s answer for %s', async (_name, signature, signed) => {
    const expected = await verifiesWithJose(signed, signature.toString('base64url'), key);
    expect(verifiesNatively(signed, signature, key)).toBe(expected);
  });

  it('leaves the caller’s bytes as they were (the binding normalizes high-S in place)', () => {
    const mine = Buffer.from(highS);
    expect(verifiesNatively(payload, mine, key)).toBe(true);
    expect(mine.equals(highS)).toBe(true);
  });

  it('verifies the public test vector as jose does', async () => {
    const vectorKey = importVerificationKey({ curve: 'secp256k1', publicKey: VECTOR.publicKey });
    const bytes = Buffer.from(VECTOR.signature, 'base64url');
    expect(verifiesNatively(VECTOR.payload, bytes, vectorKey)).toBe(true);
    expect(await verifiesWithJose(VECTOR.payload, VECTOR.signature, vectorKey)).toBe(true);
  });

  it('leaves secp256r1 (ES256) to jose', () => {
    const r1 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const r1Key = importVerificationKey({
      curve: 'secp256r1',
      publicKey: r1.publicKey.export({ format: 'jwk' }),
    });
    expect(verifiesNatively(payload, good, r1Key)).toBeUndefined();
  });
});
