import { randomBytes, timingSafeEqual } from 'node:crypto';
import { apiKeyDigest } from '../providers/api-keys.ts';

export const SESSION_COOKIE = 'swap_ledger_console';
const SESSION_TTL_MS = 12 * 3600_000;

/** What a login may do: a viewer reads; an operator acts on cases; an approver also approves write-offs. */
export const CONSOLE_ROLES = ['viewer', 'operator', 'approver'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/** Key digests per role (CONSOLE_KEY_DIGESTS, CONSOLE_OPERATOR_KEY_DIGESTS, CONSOLE_APPROVER_KEY_DIGESTS). */
export type ConsoleKeys = Partial<Record<ConsoleRole, readonly string[]>>;

export interface ConsoleSession {
  readonly role: ConsoleRole;
  /** Who acts, as the case history shows it: the role and the start of the key's digest (never the key). */
  readonly operator: string;
  /** The per-session token every POST form carries (CSRF). */
  readonly csrf: string;
  readonly expires: number;
}

/**
 * Login by key: the key's SHA-256 digest must be one of the configured digests (compared in constant time,
 * against every digest); the digest's list gives the role. A login gets a random session token in an
 * HttpOnly, SameSite=Strict cookie. Sessions live in memory: a console restart asks for the key again.
 */
export class ConsoleAuth {
  private readonly digests: { digest: Buffer; hex: string; role: ConsoleRole }[];
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(
    keys: ConsoleKeys,
    private readonly now: () => number = Date.now,
  ) {
    this.digests = CONSOLE_ROLES.flatMap((role) =>
      (keys[role] ?? []).map((hex) => ({ digest: Buffer.from(hex, 'hex'), hex: hex.toLowerCase(), role })),
    );
  }

  /** The key's role (the highest, if its digest is listed twice), or undefined. */
  roleOf(key: unknown): { role: ConsoleRole; hex: string } | undefined {
    if (typeof key !== 'string' || key.length === 0 || key.length > 200) return undefined;
    const digest = apiKeyDigest(key);
    let found: { role: ConsoleRole; hex: string } | undefined;
    for (const d of this.digests) if (timingSafeEqual(d.digest, digest)) found = { role: d.role, hex: d.hex };
    return found;
  }

  keyIsValid(key: unknown): boolean {
    return this.roleOf(key) !== undefined;
  }

  /** A new session token, or undefined when the key is wrong. */
  login(key: unknown): string | undefined {
    const found = this.roleOf(key);
    if (!found) return undefined;
    const token = randomBytes(32).toString('base64url');
    this.sessions.set(token, {
      role: found.role,
      operator: `console:${found.role}:${found.hex.slice(0, 12)}`,
      csrf: randomBytes(32).toString('base64url'),
      expires: this.now() + SESSION_TTL_MS,
    });
    return token;
  }

  logout(token: string | undefined): void {
    if (token) this.sessions.delete(token);
  }

  session(token: string | undefined): ConsoleSession | undefined {
    if (!token) return undefined;
    const session = this.sessions.get(token);
    if (session === undefined) return undefined;
    if (session.expires < this.now()) {
      this.sessions.delete(token);
      return undefined;
    }
    return session;
  }

  isSession(token: string | undefined): boolean {
    return this.session(token) !== undefined;
  }
}

/** Whether a form's CSRF token is the session's, compared in constant time. */
export function csrfMatches(session: ConsoleSession, token: unknown): boolean {
  if (typeof token !== 'string') return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
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

export function clearedCookie(secure = false): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}
