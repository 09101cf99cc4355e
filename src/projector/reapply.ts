import type { SwapEvent, SwapEventOf } from '../events/types.ts';
import { rejected, type FoldDecision } from './decision.ts';
import type { WorkingSet } from './state.ts';

/**
 * An operator's `EventReapplied`: the event it carries (one journaled as rejected, whose cause is now
 * fixed) is folded at the reapply's position, under the reapply's id. Pure like every fold: the carried
 * event is in the log, inside this event, so a replay folds exactly what the live run folded, at the same
 * point of the sequence, against the same state. The rejected row of the original stays in the journal as
 * it was (the audit: what was refused, when, why); the reapply's own row says who reapplied it, why, and
 * what it changed.
 */

/** Events an operator may not reapply: operator resolutions, and reapplies themselves (no nesting). */
const NOT_REAPPLIABLE = new Set(['EventReapplied', 'DeadLetterRetried', 'DeadLetterDiscarded']);

/** The event a reapply carries, or why it cannot be read. Its own id, key and provider stay the original's. */
export function carriedEvent(e: SwapEventOf<'EventReapplied'>): SwapEvent | string {
  let carried: SwapEvent;
  try {
    carried = JSON.parse(e.payload.eventJson) as SwapEvent;
  } catch (err) {
    return `the carried event is not JSON (${(err as Error).message.slice(0, 100)})`;
  }
  if (!carried || typeof carried !== 'object' || typeof carried.payload !== 'object' || !carried.payload)
    return 'the carried event is not an event';
  if (carried.eventId !== e.payload.eventId) return 'the carried event is not the one it names';
  if (carried.eventType !== e.payload.eventType) return 'the carried event is not of the type it names';
  if (NOT_REAPPLIABLE.has(carried.eventType)) return `a ${carried.eventType} is not reapplied`;
  // Keyed like the original, so it folds in order with the rows it touches (and the same partition owns them).
  if (carried.aggregateKey !== e.aggregateKey || carried.providerId !== e.providerId)
    return 'the carried event is not of the key or provider the reapply is appended under';
  return carried;
}

/**
 * Folds the carried event with `fold` (the dispatcher's own rules, input bounds first) under the reapply's
 * id. Still rejected: the reapply is rejected with the reason, and nothing changes.
 */
export function foldEventReapplied(
  ws: WorkingSet,
  e: SwapEventOf<'EventReapplied'>,
  fold: (ws: WorkingSet, event: SwapEvent) => FoldDecision,
): FoldDecision {
  const p = e.payload;
  const carried = carriedEvent(e);
  if (typeof carried === 'string') return rejected(`reapply of ${p.eventId} refused: ${carried}`);
  const verdict = fold(ws, { ...carried, eventId: e.eventId } as SwapEvent);
  if (verdict.outcome === 'rejected')
    return rejected(`reapply of ${p.eventId} by ${p.operator} still rejected: ${verdict.reason ?? ''}`);
  const said = `reapplied ${p.eventType} ${p.eventId} by ${p.operator}: ${p.reason}`;
  return { ...verdict, reason: verdict.reason ? `${said}; ${verdict.reason}` : said };
}
