import { describe, expect, it } from 'vitest';
import {
  importVerificationKey,
  verifyProviderSig,
  type Finding,
  type ProviderSig,
} from '../../src/payload/index.ts';
import { KEYS, OVER_VECTOR, R1, readKeyFile, TAMPERED_PAYLOAD, VECTOR } from '../fixtures/payload/vectors.ts';

const vectorKey = { curve: 'secp256k1', publicKey: VECTOR.publicKey } as const;
const k1 = { curve: 'secp256k1', publicKey: KEYS.k1Hex } as const;
const r1 = { curve: 'secp256r1', publicKey: KEYS.r1Hex } as const;
const over = (signature: string): ProviderSig => ({ payload: VECTOR.payload, signature });
const byCheck = (findings: Finding[], check: string) => findings.find((f) => f.check === check);

describe('verifyProviderSig', () => {
  it('verifies the public test vector, every check ok', async () => {
    const verdict = await verifyProviderSig(
      { payload: VECTOR.payload, signature: VECTOR.signature },
      vectorKey,
    );
    expect(verdict.valid).toBe(true);
    expect(verdict.curve).toBe('secp256k1');
    expect(verdict.findings.map((f) => [f.check, f.outcome])).toEqual([
      ['signature.field', 'ok'],
      ['signature.encoding', 'ok'],
      ['signature.key', 'ok'],
      ['signature.verify', 'ok'],
    ]);
  });

  it('verifies the vector with the curve inferred from the uncompressed point', async () => {
    expect((await verifyProviderSig(over(VECTOR.signature), { publicKey: VECTOR.publicKey })).valid).toBe(
      true,
    );
  });

  it.each([
    ['uncompressed hex', { curve: 'secp256k1', publicKey: KEYS.k1Hex }],
    ['0x-prefixed upper-case hex', { publicKey: '0x' + KEYS.k1Hex.toUpperCase() }],
    ['compressed hex with its curve', { curve: 'secp256k1', publicKey: KEYS.k1CompressedHex }],
    ['PEM', { publicKey: readKeyFile(KEYS.k1PemFile) }],
    ['JWK JSON text', { publicKey: readKeyFile(KEYS.k1JwkFile) }],
    ['JWK object', { curve: 'secp256k1', publicKey: JSON.parse(readKeyFile(KEYS.k1JwkFile)) }],
  ] as const)('accepts the k1 key as %s', async (_, key) => {
    expect((await verifyProviderSig(over(OVER_VECTOR.k1Valid), key)).valid).toBe(true);
  });

  it('accepts an already imported key', async () => {
    const key = importVerificationKey(r1);
    expect((await verifyProviderSig({ payload: R1.payload, signature: R1.signature }, key)).valid).toBe(true);
  });

  it('verifies secp256r1 (ES256) signatures with PEM and JWK keys', async () => {
    for (const publicKey of [KEYS.r1Hex, readKeyFile(KEYS.r1PemFile), readKeyFile(KEYS.r1JwkFile)]) {
      const verdict = await verifyProviderSig(
        { payload: R1.payload, signature: R1.signature },
        { publicKey },
      );
      expect(verdict.valid).toBe(true);
      expect(byCheck(verdict.findings, 'signature.key')?.actual).toBe('secp256r1 (ES256)');
    }
  });

  describe('invalid signatures', () => {
    const expectInvalid = async (sig: ProviderSig, key: Parameters<typeof verifyProviderSig>[1]) => {
      const verdict = await verifyProviderSig(sig, key);
      expect(verdict.valid).toBe(false);
      return verdict.findings;
    };

    it('refuses a tampered payload', async () => {
      const findings = await expectInvalid(
        { payload: TAMPERED_PAYLOAD, signature: VECTOR.signature },
        vectorKey,
      );
      expect(byCheck(findings, 'signature.verify')).toMatchObject({
        outcome: 'violation',
        actual: 'does not verify',
      });
    });

    it('refuses the vector under a wrong key', async () => {
      const findings = await expectInvalid(over(VECTOR.signature), k1);
      expect(byCheck(findings, 'signature.verify')?.outcome).toBe('violation');
    });

    it.each([
      ['without the dot', OVER_VECTOR.k1NoDot],
      ['over the unpadded payload', OVER_VECTOR.k1Unpadded],
      ['over the raw protobuf bytes', OVER_VECTOR.k1RawBytes],
    ])('refuses a signature %s (the signing input is "." + payload as received)', async (_, signature) => {
      const findings = await expectInvalid(over(signature), k1);
      expect(byCheck(findings, 'signature.verify')?.outcome).toBe('violation');
      expect(byCheck(findings, 'signature.encoding')?.outcome).toBe('ok');
    });

    it('refuses a secp256k1 key declared as secp256r1 (the point is not on that curve)', async () => {
      const findings = await expectInvalid(over(VECTOR.signature), {
        curve: 'secp256r1',
        publicKey: VECTOR.publicKey,
      });
      expect(byCheck(findings, 'signature.key')).toMatchObject({
        outcome: 'violation',
        detail: 'the public key is not a point on secp256r1',
      });
      expect(byCheck(findings, 'signature.verify')?.outcome).toBe('unverifiable');
    });

    it('refuses a secp256r1 PEM key declared as secp256k1', async () => {
      const findings = await expectInvalid(
        { payload: R1.payload, signature: R1.signature },
        { curve: 'secp256k1', publicKey: readKeyFile(KEYS.r1PemFile) },
      );
      expect(byCheck(findings, 'signature.key')?.detail).toBe('the PEM is a secp256r1 key, not secp256k1');
    });

    it('refuses signatures made on the other curve', async () => {
      await expectInvalid({ payload: R1.payload, signature: R1.signature }, k1);
      await expectInvalid(over(OVER_VECTOR.k1Valid), r1);
    });

    it('refuses a missing signature and a missing payload', async () => {
      let findings = await expectInvalid({ payload: VECTOR.payload }, vectorKey);
      expect(byCheck(findings, 'signature.field')).toMatchObject({
        outcome: 'violation',
        detail: 'signature or payload_signature is missing or empty',
      });
      findings = await expectInvalid({ payload: '', signature: VECTOR.signature }, vectorKey);
      expect(byCheck(findings, 'signature.field')?.detail).toBe('providerSig.payload is missing or empty');
      await expectInvalid(null as unknown as ProviderSig, vectorKey);
    });

    it('refuses a signature in standard base64 or of the wrong length', async () => {
      const standard = Buffer.from(OVER_VECTOR.k1Valid, 'base64url').toString('base64');
      expect(standard).toMatch(/[+/]/);
      let findings = await expectInvalid(over(standard), k1);
      expect(byCheck(findings, 'signature.encoding')?.detail).toMatch(/standard base64/);
      const short = Buffer.from(OVER_VECTOR.k1Valid, 'base64url').subarray(0, 63).toString('base64url');
      findings = await expectInvalid(over(short), k1);
      expect(byCheck(findings, 'signature.encoding')).toMatchObject({
        outcome: 'violation',
        actual: '63 bytes',
      });
    });
  });

  describe('payload_signature', () => {
    it('accepts the signature under the name payload_signature', async () => {
      const verdict = await verifyProviderSig(
        { payload: VECTOR.payload, payload_signature: VECTOR.signature },
        vectorKey,
      );
      expect(verdict.valid).toBe(true);
      expect(byCheck(verdict.findings, 'signature.field')).toEqual({
        check: 'signature.field',
        outcome: 'ok',
        actual: 'payload_signature',
      });
    });

    it('prefers signature when both are present', async () => {
      const good = await verifyProviderSig(
        { payload: VECTOR.payload, signature: VECTOR.signature, payload_signature: OVER_VECTOR.k1NoDot },
        vectorKey,
      );
      expect(good.valid).toBe(true);
      expect(byCheck(good.findings, 'signature.field')?.detail).toBe(
        'payload_signature is also present, differs, and was ignored',
      );
      const bad = await verifyProviderSig(
        { payload: VECTOR.payload, signature: OVER_VECTOR.k1NoDot, payload_signature: VECTOR.signature },
        vectorKey,
      );
      expect(bad.valid).toBe(false);
    });

    it('falls back to payload_signature when signature is null or empty', async () => {
      for (const signature of [null, '']) {
        const verdict = await verifyProviderSig(
          { payload: VECTOR.payload, signature, payload_signature: VECTOR.signature },
          vectorKey,
        );
        expect(verdict.valid).toBe(true);
      }
    });
  });

  describe('high-S', () => {
    it('accepts the vector signature with s replaced by n - s', async () => {
      expect(OVER_VECTOR.vectorHighS).not.toBe(VECTOR.signature.replace(/=+$/, ''));
      expect((await verifyProviderSig(over(OVER_VECTOR.vectorHighS), vectorKey)).valid).toBe(true);
    });

    it('accepts a high-S secp256r1 signature', async () => {
      expect((await verifyProviderSig({ payload: R1.payload, signature: R1.highS }, r1)).valid).toBe(true);
    });
  });

  describe('DER signatures are refused with signature.encoding', () => {
    it('refuses the vector signature DER-encoded and says it would verify converted', async () => {
      const verdict = await verifyProviderSig(over(OVER_VECTOR.vectorDer), vectorKey);
      expect(verdict.valid).toBe(false);
      expect(byCheck(verdict.findings, 'signature.encoding')).toEqual({
        check: 'signature.encoding',
        outcome: 'violation',
        expected: '64 bytes R‖S',
        actual: 'DER, 71 bytes',
        detail:
          'DER-encoded ECDSA signature refused: the interface requires a JWS signature, 64 bytes R‖S; converted to R‖S it would verify: yes',
      });
      expect(byCheck(verdict.findings, 'signature.verify')?.outcome).toBe('unverifiable');
    });

    it("refuses node:crypto's DER output, and says when even converted it would not verify", async () => {
      const withK1 = await verifyProviderSig(over(OVER_VECTOR.k1Der), k1);
      expect(withK1.valid).toBe(false);
      expect(byCheck(withK1.findings, 'signature.encoding')?.detail).toMatch(/would verify: yes$/);
      const withVectorKey = await verifyProviderSig(over(OVER_VECTOR.k1Der), vectorKey);
      expect(byCheck(withVectorKey.findings, 'signature.encoding')?.detail).toMatch(/would verify: no$/);
    });
  });
});
