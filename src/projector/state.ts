import type { projection } from '../db/projection.ts';
import type { SwapEvent } from '../events/types.ts';

/** Rows of the projected tables, as the fold reads and writes them (money as decimal text). */
export type SwapRow = typeof projection.swaps.$inferSelect;
export type SwapRequestRow = typeof projection.swapRequests.$inferSelect;
export type QuoteRow = typeof projection.quotes.$inferSelect;
export type QueueRow = typeof projection.reconciliationQueue.$inferSelect;
export type ReconciliationRow = typeof projection.reconciliations.$inferSelect;
export type ReconciliationHistoryRow = typeof projection.reconciliationHistory.$inferSelect;
export type StatusConflictRow = typeof projection.statusConflicts.$inferSelect;
export type DeadLetterRow = typeof projection.deadLetters.$inferSelect;
export type PostingRow = typeof projection.ledgerPostings.$inferSelect;
export type ChainObservationRow = typeof projection.chainObservations.$inferSelect;
export type StatementRow = typeof projection.statements.$inferSelect;
export type StatementLineRow = typeof projection.statementLines.$inferSelect;
export type PeriodEventRow = typeof projection.periodEvents.$inferSelect;
export type InvoiceRow = typeof projection.invoices.$inferSelect;
export type InvoiceLineRow = typeof projection.invoiceLines.$inferSelect;
export type CaseRow = typeof projection.cases.$inferSelect;
export type ChainClaimRow = typeof projection.chainClaims.$inferSelect;
export type JournalRow = Omit<typeof projection.eventJournal.$inferSelect, 'changes' | 'payload'> & {
  changes: Changes | null;
  payload: unknown;
};

export type JournalOutcome = 'applied' | 'rejected' | 'noop' | 'parked' | 'contradicted';
/** What an event changed, field by field: [before, after]. */
export type Changes = Record<string, [unknown, unknown]>;

export interface Position {
  topic: string;
  partition: number;
  offset: bigint;
}

/** A message the projector could not decode: it becomes a dead letter and parks its key. */
export interface UndecodableMessage {
  position: Position;
  key: string;
  reason: string;
  valueBase64: string;
  /** The Kafka message timestamp, ISO-8601. */
  timestamp: string;
}

/** What a dead letter's retry brings: the event to apply in its place, or why it still cannot be. */
export type RetryInput = { event: SwapEvent } | { error: string };

/** A set of row keys for each table a batch upserts by key. */
const keysOfUpsertedTables = () => ({
  swaps: new Set<string>(),
  requests: new Set<string>(),
  quotes: new Set<string>(),
  queue: new Set<string>(),
  reconciliations: new Set<string>(),
  cases: new Set<string>(),
});

/**
 * The slice of projected state one batch may touch, loaded before the fold and written after it.
 * Each map holds the current row (or undefined when absent); `dirty` names the keys to write. Swap rows
 * (and their queue, verdict and postings) are keyed by swapKey(providerId, swapId).
 */
export class WorkingSet {
  readonly swaps = new Map<string, SwapRow | undefined>();
  readonly requests = new Map<string, SwapRequestRow | undefined>();
  readonly quotes = new Map<string, QuoteRow | undefined>();
  readonly queue = new Map<string, QueueRow | undefined>();
  readonly reconciliations = new Map<string, ReconciliationRow | undefined>();
  /** Each swap's case (src/cases/machine.ts), by swap key. */
  readonly cases = new Map<string, CaseRow | undefined>();
  readonly deadLetters = new Map<string, DeadLetterRow | undefined>();
  /** Ledger postings of the batch's swaps, by swap: those already written, then those folded in this batch. */
  readonly postings = new Map<string, PostingRow[]>();
  /** Postings folded in this batch: only ever inserted (the journal is immutable). */
  readonly newPostings: PostingRow[] = [];
  /** Append-only rows folded in this batch. */
  readonly newConflicts: StatusConflictRow[] = [];
  readonly newVerdicts: ReconciliationHistoryRow[] = [];
  /**
   * Chain observations folded in this batch, by (swap, role, txid): the latest by log order, upserted
   * (nothing reads the stored ones: an observation replaces its key's row whole).
   */
  readonly chainObservations = new Map<string, ChainObservationRow>();
  /** Month end rows folded in this batch (src/projector/monthend.ts): only ever inserted. */
  readonly newStatements: StatementRow[] = [];
  readonly newStatementLines: StatementLineRow[] = [];
  readonly newPeriodEvents: PeriodEventRow[] = [];
  readonly newInvoices: InvoiceRow[] = [];
  readonly newInvoiceLines: InvoiceLineRow[] = [];
  /**
   * Claims on transfers folded in this batch, by (chain, txid, transfer, swap, role): inserted where absent
   * (a stored claim keeps its first event: nothing reads them back).
   */
  readonly chainClaims = new Map<string, ChainClaimRow>();
  /** Events held behind an open dead letter of their key, by key, in offset order. */
  readonly parked = new Map<string, { event: SwapEvent; position: Position }[]>();
  /** Prepared before the fold (decoding is I/O): what each retried dead letter brings. */
  readonly retryInputs = new Map<string, RetryInput>();
  /** Journal rows besides the one per event: a dead letter's replacement, and held events re-folded. */
  readonly extraJournal: JournalRow[] = [];
  readonly journalUpdates: JournalRow[] = [];
  /**
   * Keys of the rows read from the database: rows that exist before the batch writes. A dirty row of any
   * other key is new, and a batch with many new rows inserts them by COPY rather than by upsert.
   */
  readonly stored = keysOfUpsertedTables();
  readonly dirty = { deadLetters: new Set<string>(), ...keysOfUpsertedTables() };
  /** Event ids already journaled (earlier batches) or folded in this batch. */
  readonly seenEventIds = new Set<string>();
  /**
   * Log offsets of the events the batch's verdicts are based on (loaded) and of every event folded in this
   * batch: a verdict based on an older event than the current one's goes to the history only.
   */
  readonly offsets = new Map<string, bigint>();
}
