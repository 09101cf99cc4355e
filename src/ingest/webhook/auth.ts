import type { RegistrySnapshot } from '../../providers/cache.ts';
import type { ProviderRuntime } from '../../providers/reads.ts';

/**
 * Authentication of a status webhook (partner interface v2, "Authentication"): the `x-api-key`
 * header must be a valid key, of an enabled provider, and that provider must be the body's
 * `providerId`. Every failure gets the same 401 (fail closed, nothing to probe), and every call does
 * the same work: one digest, one lookup, one constant-time comparison (ApiKeyIndex), then one
 * comparison of provider ids.
 */

export type AuthFailure =
  'missing key' | 'unknown key' | 'provider unknown or disabled' | 'key of another provider';

export type AuthResult =
  | { readonly ok: true; readonly provider: ProviderRuntime; readonly keyId: string }
  | { readonly ok: false; readonly reason: AuthFailure };

/** The one 401 body: byte-identical whatever the reason (the reason goes to the log only). */
export const UNAUTHORIZED_BODY = '{"error":"unauthorized"}';

/** The 429 past the per-address failure throttle: the same whatever the failure was. */
export const TOO_MANY_FAILURES_BODY = '{"error":"too many failed authentications; retry later"}';

export function authenticateWebhook(
  snapshot: RegistrySnapshot,
  apiKeyHeader: string | string[] | undefined,
  bodyProviderId: unknown,
): AuthResult {
  // A repeated header is not a key: it is hashed as "no key", like a missing one.
  const presented = typeof apiKeyHeader === 'string' && apiKeyHeader !== '' ? apiKeyHeader : undefined;
  const match = snapshot.keys.authenticate(presented);
  const provider = match ? snapshot.providers.get(match.providerId) : undefined;
  // Evaluated whatever the outcome above, so each path ends in the same comparisons.
  const claimsOther = typeof bodyProviderId === 'string' && bodyProviderId !== match?.providerId;
  if (!match) return { ok: false, reason: presented === undefined ? 'missing key' : 'unknown key' };
  if (!provider || !provider.enabled) return { ok: false, reason: 'provider unknown or disabled' };
  // A body without a usable providerId is malformed (400), checked after authentication.
  if (claimsOther) return { ok: false, reason: 'key of another provider' };
  return { ok: true, provider, keyId: match.keyId };
}
