import { createPublicKey, ECDH, KeyObject, type JsonWebKey } from 'node:crypto';
import { normaliseHex } from './encoding.ts';

/** The curves a partner may sign with (docs/architecture.md): ES256K and ES256 in JWS terms. */
export type Curve = 'secp256k1' | 'secp256r1';
export const CURVES: readonly Curve[] = ['secp256k1', 'secp256r1'];

export type SignatureAlg = 'ES256K' | 'ES256';

const CURVE_INFO: Record<Curve, { alg: SignatureAlg; jwkCrv: string; nodeName: string }> = {
  secp256k1: { alg: 'ES256K', jwkCrv: 'secp256k1', nodeName: 'secp256k1' },
  secp256r1: { alg: 'ES256', jwkCrv: 'P-256', nodeName: 'prime256v1' },
};

export function algOf(curve: Curve): SignatureAlg {
  return CURVE_INFO[curve].alg;
}

/**
 * A public key as configured or typed: `publicKey` is uncompressed hex (04‖X‖Y, "0x" optional),
 * compressed hex (02/03‖X, needs `curve`), a PEM SPKI block, JWK JSON text, or a JWK object.
 * Without `curve` it is taken from the PEM or JWK, or for uncompressed hex from the one curve the
 * point lies on.
 */
export interface PublicKeyInput {
  readonly curve?: Curve | undefined;
  readonly publicKey: string | JsonWebKey;
}

/** A public key ready for jose: the KeyObject, its curve and the JWS alg to verify with. */
export interface VerificationKey {
  readonly curve: Curve;
  readonly alg: SignatureAlg;
  readonly key: KeyObject;
}

/** The key text or object cannot be used as a public key on the stated curve. */
export class KeyImportError extends Error {
  override name = 'KeyImportError';
}

function curveOfNodeName(name: unknown): Curve | undefined {
  return CURVES.find((c) => CURVE_INFO[c].nodeName === name);
}

function curveOfJwkCrv(crv: unknown): Curve | undefined {
  return CURVES.find((c) => CURVE_INFO[c].jwkCrv === crv);
}

function fromPoint(uncompressedHex: string, curve: Curve): KeyObject {
  const point = Buffer.from(uncompressedHex, 'hex');
  const jwk = {
    kty: 'EC',
    crv: CURVE_INFO[curve].jwkCrv,
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33, 65).toString('base64url'),
  };
  try {
    // OpenSSL refuses a point that is not on the curve.
    return createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    throw new KeyImportError(`the public key is not a point on ${curve}`);
  }
}

function fromHex(hex: string, curve: Curve | undefined): VerificationKey {
  if (hex.length === 130 && hex.startsWith('04')) {
    if (curve) return make(curve, fromPoint(hex, curve));
    const fits = CURVES.flatMap((c) => {
      try {
        return [make(c, fromPoint(hex, c))];
      } catch {
        return [];
      }
    });
    if (fits.length === 1) return fits[0]!;
    throw new KeyImportError(
      fits.length === 0
        ? 'the public key is a point on neither secp256k1 nor secp256r1'
        : 'the public key lies on both curves; name its curve',
    );
  }
  if (hex.length === 66 && (hex.startsWith('02') || hex.startsWith('03'))) {
    // Half of all X values decompress on either curve, so the curve cannot be inferred.
    if (!curve) throw new KeyImportError('a compressed public key needs its curve');
    let uncompressed: string;
    try {
      uncompressed = ECDH.convertKey(hex, CURVE_INFO[curve].nodeName, 'hex', 'hex', 'uncompressed') as string;
    } catch {
      throw new KeyImportError(`the public key is not a point on ${curve}`);
    }
    return make(curve, fromPoint(uncompressed, curve));
  }
  throw new KeyImportError(
    `hex public key must be 65 bytes 04‖X‖Y (or 33 bytes 02/03‖X), got ${hex.length / 2} bytes`,
  );
}

function fromJwk(jwk: JsonWebKey, curve: Curve | undefined): VerificationKey {
  if (jwk.kty !== 'EC') throw new KeyImportError(`JWK kty must be "EC", got ${JSON.stringify(jwk.kty)}`);
  if ('d' in jwk) throw new KeyImportError('the JWK holds a private key; configure the public key only');
  const jwkCurve = curveOfJwkCrv(jwk.crv);
  if (!jwkCurve)
    throw new KeyImportError(`JWK crv must be "secp256k1" or "P-256", got ${JSON.stringify(jwk.crv)}`);
  if (curve && curve !== jwkCurve) throw new KeyImportError(`the JWK is a ${jwkCurve} key, not ${curve}`);
  try {
    return make(
      jwkCurve,
      createPublicKey({ key: { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y }, format: 'jwk' }),
    );
  } catch (e) {
    throw new KeyImportError(`the JWK is not a valid ${jwkCurve} public key (${(e as Error).message})`);
  }
}

function fromPem(pem: string, curve: Curve | undefined): VerificationKey {
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem))
    throw new KeyImportError('the PEM holds a private key; configure the public key only');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch (e) {
    throw new KeyImportError(`the PEM is not a public key (${(e as Error).message})`);
  }
  if (key.asymmetricKeyType !== 'ec')
    throw new KeyImportError(`the PEM is a ${key.asymmetricKeyType ?? 'unknown'} key, not an EC key`);
  const pemCurve = curveOfNodeName(key.asymmetricKeyDetails?.namedCurve);
  if (!pemCurve)
    throw new KeyImportError(
      `the PEM key's curve ${key.asymmetricKeyDetails?.namedCurve ?? '?'} is not supported`,
    );
  if (curve && curve !== pemCurve) throw new KeyImportError(`the PEM is a ${pemCurve} key, not ${curve}`);
  return make(pemCurve, key);
}

function make(curve: Curve, key: KeyObject): VerificationKey {
  return { curve, alg: CURVE_INFO[curve].alg, key };
}

/** Imports a public key for signature verification. Throws KeyImportError with the reason. */
export function importVerificationKey(input: PublicKeyInput): VerificationKey {
  // A partner signs every swap with one of a few keys: each text is imported once (the import cost as
  // much as the verification itself). Bounded: a flood of distinct keys only empties the cache.
  if (typeof input.publicKey !== 'string') return importKey(input);
  const cacheKey = `${String(input.curve)}\u0000${input.publicKey}`;
  const known = imported.get(cacheKey);
  if (known) return known;
  const key = importKey(input);
  if (imported.size >= IMPORTED_MAX) imported.clear();
  imported.set(cacheKey, key);
  return key;
}

const IMPORTED_MAX = 1000;
const imported = new Map<string, VerificationKey>();

function importKey(input: PublicKeyInput): VerificationKey {
  const { curve, publicKey } = input;
  if (curve !== undefined && !CURVES.includes(curve))
    throw new KeyImportError(`curve must be secp256k1 or secp256r1, got ${JSON.stringify(curve)}`);
  if (typeof publicKey === 'object' && publicKey !== null) return fromJwk(publicKey, curve);
  if (typeof publicKey !== 'string') throw new KeyImportError('no public key given');
  const text = publicKey.trim();
  if (text.startsWith('-----BEGIN')) return fromPem(text, curve);
  if (text.startsWith('{')) {
    let jwk: unknown;
    try {
      jwk = JSON.parse(text);
    } catch {
      throw new KeyImportError('the key looks like JWK JSON but does not parse');
    }
    if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk))
      throw new KeyImportError('a JWK must be an object');
    return fromJwk(jwk as JsonWebKey, curve);
  }
  const hex = normaliseHex(text);
  if (hex === undefined) throw new KeyImportError('the key is neither hex, PEM nor JWK');
  return fromHex(hex, curve);
}

// ---------------------------------------------------------------------------------------------------
// Key registry: every key a partner ever signed with, so old swaps still verify after a rotation.

/**
 * One signing key of a partner. The window is [validFrom, validTo): validFrom inclusive, validTo
 * exclusive and open-ended when absent. Timestamps are ISO-8601 with an offset ("Z", "+00:00" or
 * "+0000").
 */
export interface PartnerKey {
  readonly keyId: string;
  readonly curve: Curve;
  readonly publicKey: string | JsonWebKey;
  readonly validFrom: string;
  readonly validTo?: string | undefined;
}

/** Partner keys by provider id. */
export type PartnerKeyRegistry = Readonly<Record<string, readonly PartnerKey[]>>;

/** A key registry entry or a timestamp is unusable; the message names which and why. */
export class KeyRegistryError extends Error {
  override name = 'KeyRegistryError';
}

const ISO_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})$/;

/** Milliseconds since the epoch of an ISO-8601 timestamp with an explicit offset; undefined if malformed. */
export function parseTimestamp(value: string | Date): number | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.getTime();
  if (typeof value !== 'string') return undefined;
  const m = ISO_TIMESTAMP.exec(value);
  if (!m) return undefined;
  // Date.parse rolls "02-30" over to March and accepts "24:00"; a signed timestamp must mean one instant.
  const [y, mo, d, h, mi, sec = 0] = m[1]!.split(/[-T:]/).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number?,
  ];
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth || h > 23 || mi > 59 || sec > 59) return undefined;
  const fraction = (m[2] ?? '').padEnd(3, '0').slice(0, 3);
  const offset = m[3] === 'Z' ? 'Z' : m[3]!.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
  const seconds = m[1]!.length === 16 ? ':00' : ''; // "T12:30" has no seconds
  const ms = Date.parse(`${m[1]}${seconds}.${fraction}${offset}`);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * A key's window, parsed once per key object: the reconciler checks each key of a provider for every one
 * of its swaps (keys are readonly; a malformed window is not kept, so it throws every time).
 */
const windows = new WeakMap<PartnerKey, { from: number; to: number }>();

function window(key: PartnerKey): { from: number; to: number } {
  let w = windows.get(key);
  if (!w) windows.set(key, (w = parseWindow(key)));
  return w;
}

function parseWindow(key: PartnerKey): { from: number; to: number } {
  const from = parseTimestamp(key.validFrom);
  if (from === undefined)
    throw new KeyRegistryError(
      `key ${key.keyId}: validFrom ${JSON.stringify(key.validFrom)} is not an ISO-8601 timestamp`,
    );
  if (key.validTo === undefined) return { from, to: Infinity };
  const to = parseTimestamp(key.validTo);
  if (to === undefined)
    throw new KeyRegistryError(
      `key ${key.keyId}: validTo ${JSON.stringify(key.validTo)} is not an ISO-8601 timestamp`,
    );
  if (to <= from) throw new KeyRegistryError(`key ${key.keyId}: validTo is not after validFrom`);
  return { from, to };
}

/**
 * Every key whose window holds `createdAt`, newest validFrom first (list order breaks ties).
 * Windows may overlap during a rotation, when the partner may sign with either key: verify against
 * each in this order and keep the first that verifies. Throws KeyRegistryError for a malformed
 * createdAt or window.
 */
export function keysValidAt(keys: readonly PartnerKey[], createdAt: string | Date): PartnerKey[] {
  const at = parseTimestamp(createdAt);
  if (at === undefined)
    throw new KeyRegistryError(`createdAt ${JSON.stringify(String(createdAt))} is not an ISO-8601 timestamp`);
  return keys
    .map((key, index) => ({ key, index, ...window(key) }))
    .filter((k) => k.from <= at && at < k.to)
    .sort((a, b) => b.from - a.from || a.index - b.index)
    .map((k) => k.key);
}

/** The key to verify a swap created at `createdAt` with: the newest valid one, or undefined if none is. */
export function selectKeyAt(keys: readonly PartnerKey[], createdAt: string | Date): PartnerKey | undefined {
  return keysValidAt(keys, createdAt)[0];
}

/**
 * Validates a provider's key list from configuration: fields present, curve known, key importable on
 * its curve, window well-formed, keyIds unique. Throws KeyRegistryError naming the entry.
 */
export function parsePartnerKeys(value: unknown): PartnerKey[] {
  if (!Array.isArray(value)) throw new KeyRegistryError('partner keys must be an array');
  const seen = new Set<string>();
  return value.map((entry: unknown, i) => {
    const where = `partner key #${i}`;
    if (typeof entry !== 'object' || entry === null) throw new KeyRegistryError(`${where} is not an object`);
    const e = entry as Record<string, unknown>;
    if (typeof e.keyId !== 'string' || e.keyId === '')
      throw new KeyRegistryError(`${where}: keyId is missing`);
    if (seen.has(e.keyId)) throw new KeyRegistryError(`${where}: keyId ${e.keyId} appears twice`);
    seen.add(e.keyId);
    if (!CURVES.includes(e.curve as Curve))
      throw new KeyRegistryError(`${where} (${e.keyId}): curve must be secp256k1 or secp256r1`);
    if (typeof e.publicKey !== 'string' && (typeof e.publicKey !== 'object' || e.publicKey === null))
      throw new KeyRegistryError(`${where} (${e.keyId}): publicKey is missing`);
    if (typeof e.validFrom !== 'string')
      throw new KeyRegistryError(`${where} (${e.keyId}): validFrom is missing`);
    if (e.validTo !== undefined && typeof e.validTo !== 'string')
      throw new KeyRegistryError(`${where} (${e.keyId}): validTo must be a timestamp string`);
    const key: PartnerKey = {
      keyId: e.keyId,
      curve: e.curve as Curve,
      publicKey: e.publicKey as string | JsonWebKey,
      validFrom: e.validFrom,
      ...(e.validTo !== undefined ? { validTo: e.validTo as string } : {}),
    };
    window(key);
    try {
      importVerificationKey(key);
    } catch (err) {
      throw new KeyRegistryError(`${where} (${e.keyId}): ${(err as Error).message}`);
    }
    return key;
  });
}
