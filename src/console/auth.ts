import { randomBytes, timingSafeEqual } from 'node:crypto';
import { apiKeyDigest } from '../providers/api-keys.ts';

export const SESSION_COOKIE = 'swap_ledger_console';
const SESSION_TTL_MS = 12 * 3600_000;

/**
 * Login by key: the key's SHA-256 digest must be one of CONSOLE_KEY_DIGESTS (compared in constant time);
 * a login gets a random session token in an HttpOnly, SameSite=Strict cookie. Sessions live in memory:
 * a console restart asks for the key again.
 */
export class ConsoleAuth {
  private readonly digests: Buffer[];
  private readonly sessions = new Map<string, number>();

  constructor(
    keyDigests: readonly string[],
    private readonly now: () => number = Date.now,
  ) {
    this.digests = keyDigests.map((d) => Buffer.from(d, 'hex'));
  }

  keyIsValid(key: unknown): boolean {
    if (typeof key !== 'string' || key.length === 0 || key.length > 200) return false;
    const digest = apiKeyDigest(key);
    let ok = false;
    for (const d of this.digests) ok = timingSafeEqual(d, digest) || ok;
    return ok;
  }

  /** A new session token, or undefined when the key is wrong. */
  login(key: unknown): string | undefined {
    if (!this.keyIsValid(key)) return undefined;
    const token = randomBytes(32).toString('base64url');
    this.sessions.set(token, this.now() + SESSION_TTL_MS);
    return token;
  }

  logout(token: string | undefined): void {
    if (token) this.sessions.delete(token);
  }

  isSession(token: string | undefined): boolean {
    if (!token) return false;
    const expires = this.sessions.get(token);
    if (expires === undefined) return false;
    if (expires < this.now()) {
      this.sessions.delete(token);
      return false;
    }
    return true;
  }
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

export function sessionCookie(token: string, secure = false): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_TTL_MS / 1000}${secure ? '; Secure' : ''}`;
}

export const clearedCookie = `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
