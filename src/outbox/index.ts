// The Postgres outbox of events Kafka did not acknowledge in time, and its relay (README, "Outbox").
export {
  DurablePublisher,
  OutboxRelay,
  OutboxWriteError,
  createOutboxMetrics,
  outboxKeyFlusher,
  type OutboxMetrics,
  type PublishPath,
  type RelayRound,
} from './outbox.ts';
export { compareBigint, mustQueue, publishableSeqs, type LockedRow } from './order.ts';
export {
  countPending,
  insertOutbox,
  keysWithPendingRows,
  listOutbox,
  markPublished,
  pendingSeqsByKey,
  type OutboxEntry,
} from './store.ts';
