import type pg from 'pg';
import type { SwapCreated, SwapCreationFailed } from '../events/types.ts';
import { createdSwapAnswer, type Answer } from './answers.ts';

/**
 * The recorded outcome of a swap request whose Idempotency-Key was never completed (a crash between the
 * partner call and the record). Every SwapCreated goes through the outbox (created_swaps' transaction),
 * so the outbox knows each created swap; a failure may have gone straight to Kafka, so the projection
 * (swap_requests) is asked too where it is available (the operator's `requests resolve`).
 */

type Db = pg.Pool | pg.ClientBase;

/** The answer the gateway gives for a recorded creation failure. */
export function failureAnswer(f: SwapCreationFailed): Answer {
  if (f.kind === 'outcome_unknown')
    return {
      status: 504,
      reason: 'partner:outcome_unknown',
      body: {
        error: 'the partner did not answer in time; whether it acted on the request is unknown',
        requestId: f.requestId,
      },
    };
  return {
    status: 502,
    reason: 'partner:recorded_failure',
    body: { error: `the swap was not created: ${f.message}`, requestId: f.requestId },
  };
}

/** The outcome the outbox recorded for `requestId` (a full scan of the outbox: only for stale keys). */
export async function outcomeFromOutbox(db: Db, requestId: string): Promise<Answer | undefined> {
  const r = await db.query<{
    event_type: 'SwapCreated' | 'SwapCreationFailed';
    swap_id: string | null;
    provider_id: string;
    payload: unknown;
  }>(
    `select event_type, event->>'swapId' as swap_id, provider_id, event->'payload' as payload
     from platform.outbox
     where event_type in ('SwapCreated', 'SwapCreationFailed') and event->'payload'->>'requestId' = $1
     order by (event_type = 'SwapCreated') desc, seq limit 1`,
    [requestId],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  return row.event_type === 'SwapCreated'
    ? createdSwapAnswer(row.provider_id, row.swap_id ?? '', row.payload as SwapCreated)
    : failureAnswer(row.payload as SwapCreationFailed);
}

/**
 * The outcome the projection folded for `requestId` (swap_requests, swaps and the journal), if any. The
 * creation event is joined by (provider, swapId): two partners may issue the same swapId.
 */
export async function outcomeFromProjection(db: Db, requestId: string): Promise<Answer | undefined> {
  const created = await db.query<{ provider_id: string; swap_id: string; payload: SwapCreated }>(
    `select s.provider_id, s.swap_id, j.payload from swaps s
     join event_journal j on j.provider_id = s.provider_id and j.swap_id = s.swap_id
       and j.event_type = 'SwapCreated' and j.outcome = 'applied'
     where s.request_id = $1 limit 1`,
    [requestId],
  );
  if (created.rows[0])
    return createdSwapAnswer(created.rows[0].provider_id, created.rows[0].swap_id, created.rows[0].payload);
  const failed = await db.query<{ failure_kind: string | null; failure_reason: string | null }>(
    `select failure_kind, failure_reason from swap_requests where request_id = $1 and outcome in ('failed', 'unknown')`,
    [requestId],
  );
  const f = failed.rows[0];
  if (!f) return undefined;
  return failureAnswer({
    requestId,
    kind: (f.failure_kind ?? 'partner_error') as SwapCreationFailed['kind'],
    httpStatus: null,
    errorKey: null,
    message: f.failure_reason ?? 'recorded as failed',
  });
}
