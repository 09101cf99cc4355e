import { createHash, KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { errors, flattenedVerify } from 'jose';
import { decodeBase64url } from './encoding.ts';
import { finding, type Finding } from './findings.ts';
import { importVerificationKey, type Curve, type PublicKeyInput, type VerificationKey } from './keys.ts';

/** `providerSig` of a SwapResponse. Partners name the signature `signature` or `payload_signature`. */
export interface ProviderSig {
  readonly payload: string;
  readonly signature?: string | null | undefined;
  readonly payload_signature?: string | null | undefined;
}

export interface SignatureVerdict {
  /** True only when the signature verifies over "." + payload with the given key. */
  readonly valid: boolean;
  /** signature.field, signature.encoding, signature.key, signature.verify: always all four. */
  readonly findings: Finding[];
  /** The curve of the key used, when the key could be imported. */
  readonly curve?: Curve;
}

const RAW_SIGNATURE_BYTES = 64;

/**
 * A DER ECDSA signature (SEQUENCE of two positive INTEGERs) converted to R‖S, or undefined when the
 * bytes are not one. Used only to explain a refusal, never to accept.
 */
function derToRaw(der: Uint8Array): Uint8Array | undefined {
  if (der.length < 8 || der[0] !== 0x30 || der[1] !== der.length - 2 || der[1]! >= 0x80) return undefined;
  const ints: Uint8Array[] = [];
  let at = 2;
  for (let i = 0; i < 2; i++) {
    if (der[at] !== 0x02) return undefined;
    const len = der[at + 1]!;
    if (len === 0 || len > 33 || at + 2 + len > der.length) return undefined;
    const value = der.subarray(at + 2, at + 2 + len);
    if (value[0]! >= 0x80) return undefined;
    ints.push(value);
    at += 2 + len;
  }
  if (at !== der.length) return undefined;
  const raw = new Uint8Array(RAW_SIGNATURE_BYTES);
  for (const [i, value] of ints.entries()) {
    let start = 0;
    while (start < value.length - 1 && value[start] === 0) start++;
    const digits = value.subarray(start);
    if (digits.length > 32) return undefined;
    raw.set(digits, 32 * (i + 1) - digits.length);
  }
  return raw;
}

/**
 * ES256K through libsecp256k1 (Bitcoin Core's library, the secp256k1 package's N-API binding): several
 * times cheaper than OpenSSL's generic-curve code (docs/architecture.md), and a signature is verified for
 * every swap reconciled. Where the binding does not load, jose (OpenSSL) verifies, with the
 * same outcome (a unit spec holds the two to the same answers).
 */
type NativeSecp256k1 = {
  ecdsaVerify(sig: Uint8Array, msg32: Uint8Array, publicKey: Uint8Array): boolean;
  signatureNormalize(sig: Uint8Array): Uint8Array;
};
const native: NativeSecp256k1 | undefined = (() => {
  try {
    return createRequire(import.meta.url)('secp256k1/bindings.js') as NativeSecp256k1;
  } catch {
    return undefined;
  }
})();

/** The uncompressed point 04‖X‖Y of a secp256k1 key, once per key. */
const points = new WeakMap<KeyObject, Uint8Array>();
function pointOf(key: KeyObject): Uint8Array {
  let point = points.get(key);
  if (!point) {
    const jwk = key.export({ format: 'jwk' });
    point = Buffer.concat([
      Buffer.from([4]),
      Buffer.from(jwk.x!, 'base64url'),
      Buffer.from(jwk.y!, 'base64url'),
    ]);
    points.set(key, point);
  }
  return point;
}

/** libsecp256k1's answer, or undefined when it has none (no binding, not secp256k1, not 64 bytes). */
export function verifiesNatively(
  payload: string,
  signature: Uint8Array,
  key: VerificationKey,
): boolean | undefined {
  if (!native || key.alg !== 'ES256K' || signature.length !== RAW_SIGNATURE_BYTES) return undefined;
  const digest = createHash('sha256').update(`.${payload}`, 'utf8').digest();
  try {
    // JWS accepts a high-S signature (OpenSSL does); libsecp256k1 verifies low-S only: normalize first.
    // On a copy: the binding normalizes in place, and the caller's bytes are the caller's.
    return native.ecdsaVerify(
      native.signatureNormalize(Uint8Array.from(signature)),
      digest,
      pointOf(key.key),
    );
  } catch {
    // R or S not below the group order: not a signature of anything, as OpenSSL also answers.
    return false;
  }
}

async function verifies(payload: string, signatureB64url: string, key: VerificationKey): Promise<boolean> {
  const decoded = decodeBase64url(signatureB64url);
  const fast = 'bytes' in decoded ? verifiesNatively(payload, decoded.bytes, key) : undefined;
  if (fast !== undefined) return fast;
  return verifiesWithJose(payload, signatureB64url, key);
}

/** The reference verification: jose's flattened JWS over OpenSSL. */
export async function verifiesWithJose(
  payload: string,
  signatureB64url: string,
  key: VerificationKey,
): Promise<boolean> {
  try {
    // No protected header: jose takes alg from the unprotected one and signs over "" + "." + payload,
    // the payload text exactly as received (docs/architecture.md, "Signed payload").
    await flattenedVerify({ payload, signature: signatureB64url, header: { alg: key.alg } }, key.key, {
      algorithms: [key.alg],
    });
    return true;
  } catch (e) {
    if (e instanceof errors.JWSSignatureVerificationFailed) return false;
    throw e;
  }
}

function isVerificationKey(key: PublicKeyInput | VerificationKey): key is VerificationKey {
  return key.curve !== undefined && 'key' in key && key.key instanceof KeyObject && 'alg' in key;
}

/**
 * Verifies `providerSig` as a flattened JWS with an empty protected header: ECDSA/SHA-256 over the
 * ASCII text "." + payload, the signature a base64url 64-byte R‖S (ES256K or ES256 by the key's
 * curve). High-S signatures are valid. `signature` is preferred to `payload_signature`.
 *
 * DER-encoded signatures are refused, not converted: the interface specifies JWS, whose ECDSA
 * signature is R‖S (RFC 7518 §3.4), and a partner sending DER is not following it. The
 * `signature.encoding` finding says so and whether the converted signature would have verified,
 * so the partner can be told exactly what to fix.
 *
 * Never throws for bad input: every problem is a finding and `valid` is false.
 */
export async function verifyProviderSig(
  providerSig: ProviderSig,
  key: PublicKeyInput | VerificationKey,
): Promise<SignatureVerdict> {
  const findings: Finding[] = [];
  const notReached = (check: string, why: string) =>
    finding(check, 'unverifiable', { detail: `not checked: ${why}` });
  const fail = (...rest: Finding[]): SignatureVerdict => ({ valid: false, findings: [...findings, ...rest] });

  // Which field carries the signature.
  const named = (v: unknown): v is string => typeof v === 'string' && v !== '';
  const sig = providerSig as ProviderSig | null | undefined;
  const payload = sig?.payload;
  let field: 'signature' | 'payload_signature' | undefined;
  if (named(sig?.signature)) field = 'signature';
  else if (named(sig?.payload_signature)) field = 'payload_signature';
  if (typeof payload !== 'string' || payload === '' || !field) {
    const missing =
      typeof payload !== 'string' || payload === ''
        ? 'providerSig.payload'
        : 'signature or payload_signature';
    return fail(
      finding('signature.field', 'violation', {
        expected: 'signature or payload_signature',
        detail: `${missing} is missing or empty`,
      }),
      notReached('signature.encoding', 'nothing to verify'),
      notReached('signature.key', 'nothing to verify'),
      notReached('signature.verify', 'nothing to verify'),
    );
  }
  const signatureText = sig![field]!;
  const both = named(sig?.signature) && named(sig?.payload_signature);
  findings.push(
    finding('signature.field', 'ok', {
      actual: field,
      detail: both
        ? sig!.signature === sig!.payload_signature
          ? 'payload_signature is also present and identical'
          : 'payload_signature is also present, differs, and was ignored'
        : undefined,
    }),
  );

  // The key, before the encoding, so a refused DER signature can say whether it would have verified.
  let verificationKey: VerificationKey | undefined;
  let keyFinding: Finding;
  try {
    verificationKey = isVerificationKey(key) ? key : importVerificationKey(key);
    keyFinding = finding('signature.key', 'ok', {
      actual: `${verificationKey.curve} (${verificationKey.alg})`,
    });
  } catch (e) {
    keyFinding = finding('signature.key', 'violation', { expected: key.curve, detail: (e as Error).message });
  }

  const decoded = decodeBase64url(signatureText);
  if ('reason' in decoded) {
    findings.push(
      finding('signature.encoding', 'violation', {
        expected: 'base64url of 64 bytes R‖S',
        detail: decoded.reason,
      }),
    );
    return fail(keyFinding, notReached('signature.verify', 'the signature is not base64url'));
  }
  if (decoded.bytes.length !== RAW_SIGNATURE_BYTES) {
    const raw = derToRaw(decoded.bytes);
    let detail = `${decoded.bytes.length} bytes is not an R‖S signature`;
    if (raw) {
      let wouldVerify = 'unknown (no usable key)';
      if (verificationKey) {
        const rawText = Buffer.from(raw).toString('base64url');
        wouldVerify = (await verifies(payload, rawText, verificationKey)) ? 'yes' : 'no';
      }
      detail =
        'DER-encoded ECDSA signature refused: the interface requires a JWS signature, 64 bytes R‖S; ' +
        `converted to R‖S it would verify: ${wouldVerify}`;
    }
    findings.push(
      finding('signature.encoding', 'violation', {
        expected: `${RAW_SIGNATURE_BYTES} bytes R‖S`,
        actual: raw ? `DER, ${decoded.bytes.length} bytes` : `${decoded.bytes.length} bytes`,
        detail,
      }),
    );
    return fail(keyFinding, notReached('signature.verify', 'the signature is not R‖S'));
  }
  findings.push(finding('signature.encoding', 'ok', { actual: `${RAW_SIGNATURE_BYTES} bytes R‖S` }));
  findings.push(keyFinding);
  if (!verificationKey) return fail(notReached('signature.verify', 'no usable key'));

  let valid: boolean;
  try {
    valid = await verifies(payload, signatureText, verificationKey);
  } catch (e) {
    return fail(
      finding('signature.verify', 'violation', { detail: `jose refused the JWS: ${(e as Error).message}` }),
    );
  }
  findings.push(
    finding('signature.verify', valid ? 'ok' : 'violation', {
      expected: `a valid ${verificationKey.alg} signature over "." + payload`,
      actual: valid ? 'verifies' : 'does not verify',
    }),
  );
  return { valid, findings, curve: verificationKey.curve };
}
