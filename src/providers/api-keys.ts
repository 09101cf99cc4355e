import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Webhook API keys: 32 random bytes shown once as `slk_` + base64url, stored as the SHA-256 digest of
 * that whole text (lower-case hex). A fast digest, not bcrypt: the key has 256 bits of entropy, so
 * a slow hash adds nothing but would cap intake far below the design's 3,000 requests/s.
 */

export const API_KEY_PREFIX = 'slk_';
const KEY_BYTES = 32;
const KEY_TEXT = /^slk_[A-Za-z0-9_-]{43}$/;
export const SHA256_HEX = /^[0-9a-f]{64}$/;

export interface NewApiKey {
  /** The key in clear: shown once to the operator, never stored or logged. */
  readonly key: string;
  /** Its SHA-256 digest, lower-case hex: what Postgres and the providers file hold. */
  readonly sha256: string;
}

export function generateApiKey(): NewApiKey {
  const key = API_KEY_PREFIX + randomBytes(KEY_BYTES).toString('base64url');
  return { key, sha256: apiKeyDigest(key).toString('hex') };
}

/** Whether a text has the shape of a generated key (to refuse a key pasted where its digest belongs). */
export function looksLikeApiKey(text: string): boolean {
  return text.startsWith(API_KEY_PREFIX) || KEY_TEXT.test(text);
}

export function apiKeyDigest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** A key id that sorts by creation time: `k` + UTC yyyymmddHHMMss + 4 random hex digits. */
export function newKeyId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `k${stamp}${randomBytes(2).toString('hex')}`;
}

/** One stored key: whose it is, and its digest. Only keys that are not revoked belong in an index. */
export interface ApiKeyEntry {
  readonly providerId: string;
  readonly keyId: string;
  /** Lower-case hex SHA-256 digest. */
  readonly sha256: string;
}

export interface KeyMatch {
  readonly providerId: string;
  readonly keyId: string;
}

/**
 * Finds the provider a presented key belongs to. Every call does the same work whatever the input:
 * one SHA-256 of the presented text (an empty text when the header is missing), one lookup of that
 * digest, and one constant-time comparison of 32 bytes, against the stored digest when the lookup
 * found one and against a fixed dummy digest otherwise. A missing, malformed, unknown or wrong key
 * therefore costs the same as a right one. The lookup is keyed by the digest, not the key: its
 * timing can only reveal something about digests, which an attacker cannot steer toward a real one.
 */
export class ApiKeyIndex {
  private readonly byDigest = new Map<string, { entry: ApiKeyEntry; digest: Buffer }>();
  private readonly dummy: Buffer = randomBytes(32);

  constructor(
    entries: Iterable<ApiKeyEntry>,
    /** The comparison (tests count its calls); must be constant-time. */
    private readonly compare: (a: Buffer, b: Buffer) => boolean = timingSafeEqual,
  ) {
    for (const entry of entries) {
      if (!SHA256_HEX.test(entry.sha256))
        throw new Error(`key ${entry.keyId} of ${entry.providerId}: digest is not 64 lower-case hex digits`);
      if (this.byDigest.has(entry.sha256))
        throw new Error(`key ${entry.keyId} of ${entry.providerId}: digest already belongs to another key`);
      this.byDigest.set(entry.sha256, { entry, digest: Buffer.from(entry.sha256, 'hex') });
    }
  }

  get size(): number {
    return this.byDigest.size;
  }

  authenticate(presented: string | undefined): KeyMatch | undefined {
    const digest = apiKeyDigest(presented ?? '');
    const found = this.byDigest.get(digest.toString('hex'));
    const equal = this.compare(digest, found ? found.digest : this.dummy);
    if (!equal || found === undefined || presented === undefined || presented === '') return undefined;
    return { providerId: found.entry.providerId, keyId: found.entry.keyId };
  }
}
