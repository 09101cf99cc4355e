import { GenericError, murmur2 } from '@platformatic/kafka';
import { partitionKeyOf } from './keys.ts';

// How the appender places events and reads the answers to its produce requests (producer.ts).
/** The partition of an event key among `partitions`: Java's murmur2 of partitionKeyOf(key), as kafkajs. */
export function partitionOf(key: string, partitions: number): number {
  return (murmur2(Buffer.from(partitionKeyOf(key))) & 0x7fffffff) % partitions;
}

/** Sequence errors: the broker and this producer disagree on what was written; a new producer id mends it. */
const DESYNC = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_EPOCH',
  'INVALID_PRODUCER_ID_MAPPING',
]);

/**
 * What a failed send says of its batch: `refused` (Kafka answered no: not written), `desync` (a sequence
 * error: not written, the producer id must be renewed) or `unknown` (no answer: maybe written).
 */
export function produceOutcome(error: unknown): 'refused' | 'desync' | 'unknown' {
  if (!(error instanceof Error) || !GenericError.isGenericError(error)) return 'unknown';
  const e = error as GenericError & { errors?: unknown[]; apiId?: string; canRetry?: boolean };
  // Retries wrap every attempt's error: the last one is what Kafka said at the end.
  if (e.code === 'PLT_KFK_MULTIPLE' && Array.isArray(e.errors) && e.errors.length > 0)
    return produceOutcome(e.errors[e.errors.length - 1]);
  if (e.code === 'PLT_KFK_RESPONSE' && Array.isArray(e.errors)) {
    const outcomes = e.errors.map(produceOutcome);
    if (outcomes.includes('unknown')) return 'unknown';
    return outcomes.includes('desync') ? 'desync' : 'refused';
  }
  if (e.code === 'PLT_KFK_PROTOCOL') {
    if (e.apiId !== undefined && DESYNC.has(e.apiId)) return 'desync';
    return e.canRetry === false ? 'refused' : 'unknown';
  }
  // A message the client could not build never left.
  if (e.code === 'PLT_KFK_USER') return 'refused';
  return 'unknown';
}

/**
 * Whether an attempt before the last one of a failed send (the client's own retries) had an unknown
 * outcome. The client wraps the retries' errors, and those again per destination: read as produceOutcome.
 */
export function unknownBeforeLast(error: unknown): boolean {
  if (!(error instanceof Error) || !GenericError.isGenericError(error)) return false;
  const e = error as GenericError & { errors?: unknown[] };
  if (e.code !== 'PLT_KFK_MULTIPLE' || !Array.isArray(e.errors) || e.errors.length === 0) return false;
  return (
    e.errors.slice(0, -1).some((attempt) => produceOutcome(attempt) === 'unknown') ||
    unknownBeforeLast(e.errors[e.errors.length - 1])
  );
}

/** What a lane does with its batch after a send that was not acknowledged. */
export interface LaneStep {
  /** Sent again unchanged (else its appends fail). */
  readonly resend: boolean;
  /** A new producer id before the lane's next send. */
  readonly renewProducer: boolean;
}

/**
 * The lane's step after a failed send of its batch. `earlierUnknown`: an earlier attempt of this batch
 * (an earlier send, or the client's own retry) had an unknown outcome, so the broker may hold the batch.
 * A refusal then does not say "not written": the broker checks size and validity before it looks for a
 * duplicate, so a batch it holds can still be refused when sent again. Its sequence range stays taken,
 * and the lane's next batch of the same size would go under it and be acknowledged as that duplicate,
 * never written: the producer id is renewed, so no later batch reuses the range.
 */
export function laneStepAfterFailure(
  outcome: ReturnType<typeof produceOutcome>,
  earlierUnknown: boolean,
): LaneStep {
  if (outcome === 'refused') return { resend: false, renewProducer: earlierUnknown };
  return { resend: true, renewProducer: outcome === 'desync' };
}
