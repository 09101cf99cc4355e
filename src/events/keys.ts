import { uuidv7 } from './ids.ts';
import type { EventSource, EventType, PayloadByType, SwapEventOf } from './types.ts';

/**
 * The Kafka keys of the events topic, and the one factory of event envelopes. A swapId is unique per
 * partner only, so a swap's key names both: `swap:<providerId>:<swapId>`. Before a swap exists its events
 * are keyed by the platform's own ids: `request:<requestId>` (SwapRequested, SwapCreationFailed) and
 * `quote:<quoteRef>` (QuoteReceived, QuoteRejected). Provider ids never contain ':' (providers file rule).
 */
export const swapKey = (providerId: string, swapId: string): string => `swap:${providerId}:${swapId}`;
export const requestKey = (requestId: string): string => `request:${requestId}`;
export const quoteKey = (quoteRef: string): string => `quote:${quoteRef}`;

/**
 * The partition-relevant part of a key. A swap key hashes as the bare swapId, which is what events written
 * before swap keys named the provider used as their key: every event of one swap, old or new, lands in the
 * same partition, so a log that spans the change still folds in order (two partners' swaps with the same
 * swapId share a partition, which costs nothing: rows are keyed by both ids).
 */
export function partitionKeyOf(key: string): string {
  if (!key.startsWith('swap:')) return key;
  const sep = key.indexOf(':', 5);
  return sep < 0 ? key : key.slice(sep + 1);
}

export interface EventOrigin {
  providerId: string;
  source: EventSource;
  /** A swap event's swapId; with it the key is swapKey(providerId, swapId) unless `aggregateKey` is given. */
  swapId?: string | null;
  aggregateKey?: string;
  /** A resend keeps its original id; otherwise a UUIDv7 of `at`. */
  eventId?: string;
}

/**
 * Every writer builds its envelopes here, so id, time and key follow one rule: the id is a UUIDv7 of the
 * same instant as occurredAt and recordedAt (the writer's clock, injected where it is testable).
 */
export function newEvent<T extends EventType>(
  type: T,
  at: Date,
  payload: PayloadByType[T],
  origin: EventOrigin,
): SwapEventOf<T> {
  const swapId = origin.swapId ?? null;
  const aggregateKey =
    origin.aggregateKey ?? (swapId !== null ? swapKey(origin.providerId, swapId) : undefined);
  if (aggregateKey === undefined) throw new Error(`${type} needs a swapId or an aggregate key`);
  const time = at.toISOString();
  return {
    eventId: origin.eventId ?? uuidv7(at.getTime()),
    eventType: type,
    swapId,
    aggregateKey,
    providerId: origin.providerId,
    source: origin.source,
    occurredAt: time,
    recordedAt: time,
    payload,
  };
}
