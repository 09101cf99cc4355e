import type pg from 'pg';
import { newEvent } from '../events/keys.ts';
import type { SwapEventOf } from '../events/types.ts';
import { UUID_PATTERN } from '../events/ids.ts';
import { rejectionKind } from '../projector/decision.ts';
import { journaledEvent } from '../projector/fold.ts';
import { OperatorInputError } from './operator-events.ts';

/**
 * `events reapply`: an event the projector journaled as rejected, re-applied by an operator once its
 * cause is fixed (the swap it needed now exists, a migration lets the database take it, a fold bug is
 * fixed). Nothing is written to the projection here: an `EventReapplied` carrying the rejected event whole
 * is appended to the log, under the event's own key, and the projector folds it in order like any event.
 * A replay folds the same event at the same point, so it rebuilds what the live run has (the fold reads
 * no configuration and no clock: the carried event is in the log).
 */

/** The journal's row of a rejected event, as the command reads it (times as ISO-8601 UTC). */
export interface RejectedJournalRow {
  eventId: string;
  eventType: string;
  swapId: string | null;
  aggregateKey: string;
  providerId: string;
  source: string;
  occurredAt: string;
  recordedAt: string;
  outcome: string;
  reason: string | null;
  payload: unknown;
  /** The id of an applied EventReapplied of it already in the journal, if any. */
  reappliedBy: string | null;
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** Reads the journal row of `eventId` (undefined when the projection never journaled it). */
export async function readJournaledEvent(
  db: pg.Pool | pg.ClientBase,
  eventId: string,
): Promise<RejectedJournalRow | undefined> {
  if (!UUID_PATTERN.test(eventId))
    throw new OperatorInputError(`"${eventId.slice(0, 60)}" is not an event id`);
  const r = await db.query(
    `select j.event_id as "eventId", j.event_type as "eventType", j.swap_id as "swapId",
            j.aggregate_key as "aggregateKey", j.provider_id as "providerId", j.source,
            to_char(j.occurred_at at time zone 'UTC', ${ISO}) as "occurredAt",
            to_char(j.recorded_at at time zone 'UTC', ${ISO}) as "recordedAt",
            j.outcome, j.reason, j.payload,
            (select r.event_id::text from event_journal r
              where r.event_type = 'EventReapplied' and r.outcome = 'applied' and r.payload->>'eventId' = $1
              order by r.topic, r.partition, r."offset" limit 1) as "reappliedBy"
       from event_journal j where j.event_id = $1::uuid`,
    [eventId],
  );
  return r.rows[0] as RejectedJournalRow | undefined;
}

function requireText(name: string, value: string | undefined): string {
  if (value === undefined || value.trim() === '') throw new OperatorInputError(`${name} is required`);
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value))
    throw new OperatorInputError(`${name} contains a control character`);
  if (value.length > 500) throw new OperatorInputError(`${name} is longer than 500 characters`);
  return value.trim();
}

/**
 * The `EventReapplied` of a rejected journal row, or an OperatorInputError saying why it may not be
 * reapplied: not journaled, not rejected, already reapplied, an operator event, or refused by the fold's
 * input bounds (its own values can never be stored: correct the swap with `swap correct` instead).
 */
export function reapplyEvent(
  row: RejectedJournalRow | undefined,
  input: { eventId: string; operator: string | undefined; reason: string | undefined },
  now = new Date(),
): SwapEventOf<'EventReapplied'> {
  const operator = requireText('--operator', input.operator);
  const reason = requireText('--reason', input.reason);
  if (!row) throw new OperatorInputError(`event ${input.eventId} is not in the journal`);
  if (row.outcome !== 'rejected')
    throw new OperatorInputError(`event ${row.eventId} was ${row.outcome}, not rejected: nothing to reapply`);
  if (row.reappliedBy)
    throw new OperatorInputError(`event ${row.eventId} was already reapplied by event ${row.reappliedBy}`);
  if (['EventReapplied', 'DeadLetterRetried', 'DeadLetterDiscarded'].includes(row.eventType))
    throw new OperatorInputError(
      `a rejected ${row.eventType} is not reapplied: append a new one (dlq retry, dlq discard, events reapply)`,
    );
  if (rejectionKind(row.reason) === 'input_bounds')
    throw new OperatorInputError(
      `event ${row.eventId} was refused by the fold's input bounds (${row.reason}): its values can never be ` +
        'stored, so reapplying it cannot help; amend the swap with swap correct',
    );
  const carried = journaledEvent(row);
  return newEvent(
    'EventReapplied',
    now,
    { eventId: row.eventId, eventType: row.eventType, operator, reason, eventJson: JSON.stringify(carried) },
    { providerId: row.providerId, source: 'ops', swapId: row.swapId, aggregateKey: row.aggregateKey },
  );
}
