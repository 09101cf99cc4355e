import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * Idempotency of POST /v1/swaps. The wallet sends an `Idempotency-Key` with each swap request; the
 * gateway claims the key (state in_progress) before it records SwapRequested and calls the partner,
 * and stores the exact answer (state completed) once it has one. Then:
 *   same key, same request, completed  -> the stored answer again, no partner call
 *   same key, same request, in flight  -> 409 "in progress"
 *   same key, in flight beyond a lease -> the recorded outcome, else 409 "outcome unknown" (a crash between
 *                                         the partner call and the record; `requests resolve` settles it)
 *   same key, another request          -> 422 (the key belongs to another request)
 * Refusals before the claim (validation, expired quote, slippage) store nothing: the same key may be
 * used again with a corrected request.
 */

export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** JSON with object keys sorted at every level and absent/null members dropped: one text per request. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && v !== null)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** SHA-256 (hex) of the canonical request: the provider and every field of the body, as sent. */
export function requestFingerprint(providerId: string, body: Readonly<Record<string, unknown>>): string {
  return createHash('sha256')
    .update(canonicalJson({ ...body, providerId }), 'utf8')
    .digest('hex');
}

export interface IdempotencyRecord {
  readonly key: string;
  readonly providerId: string;
  readonly fingerprint: string;
  readonly requestId: string;
  readonly state: 'in_progress' | 'completed';
  readonly responseStatus: number | null;
  readonly response: unknown;
  readonly createdAt: Date;
}

export type IdempotencyDecision =
  | { readonly kind: 'new' }
  | { readonly kind: 'mismatch'; readonly requestId: string }
  | { readonly kind: 'in_progress'; readonly requestId: string }
  | { readonly kind: 'lease_expired'; readonly requestId: string; readonly ageMs: number }
  | { readonly kind: 'replay'; readonly requestId: string; readonly status: number; readonly body: unknown };

/** `lease`: an in-progress key older than `leaseMs` at `nowMs` has an unknown outcome. */
export function idempotencyDecision(
  existing: IdempotencyRecord | undefined,
  fingerprint: string,
  lease: { readonly nowMs: number; readonly leaseMs: number },
): IdempotencyDecision {
  if (!existing) return { kind: 'new' };
  if (existing.fingerprint !== fingerprint) return { kind: 'mismatch', requestId: existing.requestId };
  if (existing.state === 'in_progress') {
    const ageMs = lease.nowMs - existing.createdAt.getTime();
    return ageMs > lease.leaseMs
      ? { kind: 'lease_expired', requestId: existing.requestId, ageMs }
      : { kind: 'in_progress', requestId: existing.requestId };
  }
  return {
    kind: 'replay',
    requestId: existing.requestId,
    status: existing.responseStatus ?? 500,
    body: existing.response,
  };
}

type Db = pg.Pool | pg.ClientBase;

// Each platform read maps its few columns by hand (as quotes.ts and catalog/store.ts do): no row mapper.
export async function readIdempotency(db: Db, key: string): Promise<IdempotencyRecord | undefined> {
  const r = await db.query<{
    idempotency_key: string;
    provider_id: string;
    fingerprint: string;
    request_id: string;
    state: 'in_progress' | 'completed';
    response_status: number | null;
    response: unknown;
    created_at: Date;
  }>(
    `select idempotency_key, provider_id, fingerprint, request_id, state, response_status, response, created_at
     from platform.idempotency_keys where idempotency_key = $1`,
    [key],
  );
  const row = r.rows[0];
  return (
    row && {
      key: row.idempotency_key,
      providerId: row.provider_id,
      fingerprint: row.fingerprint,
      requestId: row.request_id,
      state: row.state,
      responseStatus: row.response_status,
      response: row.response,
      createdAt: new Date(row.created_at),
    }
  );
}

/** A request without an outcome: its key is still in progress. */
export interface StuckRequest {
  readonly key: string;
  readonly providerId: string;
  readonly requestId: string;
  readonly createdAt: Date;
}

/** Keys in progress since before `olderThanMs` ago (by the database clock), oldest first. */
export async function stuckRequests(db: Db, olderThanMs: number, limit = 1000): Promise<StuckRequest[]> {
  const r = await db.query<{
    idempotency_key: string;
    provider_id: string;
    request_id: string;
    created_at: Date;
  }>(
    `select idempotency_key, provider_id, request_id, created_at from platform.idempotency_keys
     where state = 'in_progress' and created_at < now() - make_interval(secs => $1::double precision / 1000)
     order by created_at limit $2`,
    [olderThanMs, limit],
  );
  return r.rows.map((row) => ({
    key: row.idempotency_key,
    providerId: row.provider_id,
    requestId: row.request_id,
    createdAt: new Date(row.created_at),
  }));
}

export async function readIdempotencyByRequest(
  db: Db,
  requestId: string,
): Promise<IdempotencyRecord | undefined> {
  const r = await db.query<{ idempotency_key: string }>(
    `select idempotency_key from platform.idempotency_keys where request_id = $1`,
    [requestId],
  );
  return r.rows[0] ? readIdempotency(db, r.rows[0].idempotency_key) : undefined;
}

/** Claims the key for this request; false when another request holds it already (read it again). */
export async function claimIdempotency(
  db: Db,
  claim: { key: string; providerId: string; fingerprint: string; requestId: string },
): Promise<boolean> {
  const r = await db.query(
    `insert into platform.idempotency_keys (idempotency_key, provider_id, fingerprint, request_id, state)
     values ($1, $2, $3, $4, 'in_progress') on conflict (idempotency_key) do nothing`,
    [claim.key, claim.providerId, claim.fingerprint, claim.requestId],
  );
  return r.rowCount === 1;
}

/** Records the answer of a key still in progress; false when it was completed meanwhile (the first wins). */
export async function completeIdempotency(
  db: Db,
  key: string,
  requestId: string,
  status: number,
  body: unknown,
): Promise<boolean> {
  const r = await db.query(
    `update platform.idempotency_keys set state = 'completed', response_status = $3, response = $4,
       completed_at = now()
     where idempotency_key = $1 and request_id = $2 and state = 'in_progress'`,
    [key, requestId, status, JSON.stringify(body)],
  );
  return r.rowCount === 1;
}

/** Gives a claimed key back (nothing was recorded for it, so the same request may be sent again). */
export async function releaseIdempotency(db: Db, key: string, requestId: string): Promise<void> {
  await db.query(
    `delete from platform.idempotency_keys where idempotency_key = $1 and request_id = $2 and state = 'in_progress'`,
    [key, requestId],
  );
}
