// Over 400 lines on purpose: drizzle-kit generates the projection migrations from this one file, so every
// projected table (swaps, journal, ledger, verdicts, chain, cases, month end) is declared here.
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { LEDGER_ACCOUNTS, LEDGER_ENTRY_KINDS } from '../../ledger/accounts.ts';
import { STATUS_CLASSES } from '../../swap/status.ts';
import { inList } from './in-list.ts';

/**
 * The projected state: every table here is folded from the event log and rebuilt by replay.
 * Tables are unqualified on purpose: a connection's search_path names the schema (the live one,
 * or a fresh one that replay rebuilds), so the same code and migrations serve both.
 * Money is `numeric` (decimal text in, decimal text out); atomic units are `numeric(78,0)`.
 * Table definitions repeat column shapes (ids, times, money, journals) by design: one declaration per table.
 */

const money = (name: string) => numeric(name);
const atomic = (name: string) => numeric(name, { precision: 78, scale: 0 });
const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'string', precision: 3 });

/** Current state of each swap attempt, keyed by (providerId, swapId): a swapId is unique per partner only. */
export const swaps = pgTable(
  'swaps',
  {
    providerId: text('provider_id').notNull(),
    swapId: text('swap_id').notNull(),
    requestId: text('request_id').notNull(),
    tradeMethod: text('trade_method').notNull(),
    quoteRef: text('quote_ref'),
    quoteId: text('quote_id'),
    currencyFrom: text('currency_from').notNull(),
    currencyTo: text('currency_to').notNull(),
    payloadCurrencyFrom: text('payload_currency_from').notNull(),
    payloadCurrencyTo: text('payload_currency_to').notNull(),
    /** The source amount asked for (float) or quoted (fixed). */
    amountFrom: money('amount_from'),
    /** The quote's estimated output amount, when the swap used a quote. */
    quotedAmountTo: money('quoted_amount_to'),
    slippage: money('slippage'),
    payinAddress: text('payin_address').notNull(),
    payoutAddress: text('payout_address').notNull(),
    payoutExtraId: text('payout_extra_id'),
    refundAddress: text('refund_address').notNull(),
    refundExtraId: text('refund_extra_id'),
    nonce: text('nonce').notNull(),
    createdAt: ts('created_at').notNull(),
    /** The fees of the SwapResponse; null when the partner sent no decimal text for one. */
    createdProviderFees: money('created_provider_fees'),
    createdReferralFees: money('created_referral_fees'),
    createdPayoutNetworkFees: money('created_payout_network_fees'),
    signedAmountToProvider: atomic('signed_amount_to_provider'),
    signedAmountToWallet: atomic('signed_amount_to_wallet'),
    signatureValid: boolean('signature_valid').notNull(),
    /** Internal status (after the provider's mapping); CREATED until the first report. */
    status: text('status').notNull(),
    providerStatus: text('provider_status'),
    /** open | closed (ended, reopenable: EXPIRED) | final (src/swap/status.ts), as ingest decided it. */
    statusClass: text('status_class').notNull().default('open'),
    /** When the swap last entered a closed status (the slow polling set's grace window starts here). */
    closedAt: ts('closed_at'),
    final: boolean('final').notNull().default(false),
    finalAt: ts('final_at'),
    /** Final amount transferred to the user, in the output currency. */
    amountTo: money('amount_to'),
    providerFees: money('provider_fees'),
    referralFees: money('referral_fees'),
    payoutNetworkFees: money('payout_network_fees'),
    payinTransactionId: text('payin_transaction_id'),
    payoutTransactionId: text('payout_transaction_id'),
    /** REFUNDED: the refund's hash, when the partner reports one. */
    refundTransactionId: text('refund_transaction_id'),
    /** The webhook's "referral or extra fee" when the provider's is not the referral fee (fee.extra). */
    extraFees: money('extra_fees'),
    /** The webhook's networkFees under the provider's default reading: the reconciler reads it by evidence. */
    webhookNetworkFees: money('webhook_network_fees'),
    corrected: boolean('corrected').notNull().default(false),
    /** The applied SwapCorrected that last amended this swap: the only key to a final swap (see trigger). */
    lastCorrectionEventId: uuid('last_correction_event_id'),
    /** Applied events so far, and the last one: what the next fold builds on. */
    version: integer('version').notNull(),
    lastEventId: uuid('last_event_id').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.providerId, t.swapId], name: 'swaps_pkey' }),
    index('swaps_open_idx')
      .on(t.providerId, t.createdAt)
      .where(sql`not ${t.final}`),
    index('swaps_request_idx').on(t.requestId),
    check('swaps_trade_method_chk', sql`${t.tradeMethod} in ('fixed', 'float')`),
    check('swaps_final_at_chk', sql`(${t.final}) = (${t.finalAt} is not null)`),
    check('swaps_status_class_chk', sql`${t.statusClass} in (${inList(STATUS_CLASSES)})`),
    check('swaps_final_class_chk', sql`(${t.final}) = (${t.statusClass} = 'final')`),
  ],
);

/**
 * Every swap request the gateway recorded before calling the partner (key request:<id>). Which swap it
 * created is swaps.request_id: each row is owned by one Kafka key, so one partition, so folds of
 * different partitions never touch the same row.
 */
export const swapRequests = pgTable('swap_requests', {
  requestId: text('request_id').primaryKey(),
  providerId: text('provider_id').notNull(),
  idempotencyKey: text('idempotency_key'),
  tradeMethod: text('trade_method').notNull(),
  quoteRef: text('quote_ref'),
  amountFrom: money('amount_from'),
  currencyFrom: text('currency_from').notNull(),
  currencyTo: text('currency_to').notNull(),
  requestedAt: ts('requested_at').notNull(),
  /** requested | failed | unknown (a timeout: the partner may or may not have created a swap). */
  outcome: text('outcome').notNull(),
  failureKind: text('failure_kind'),
  failureReason: text('failure_reason'),
  httpStatus: integer('http_status'),
  errorKey: text('error_key'),
});

/** Quotes the platform received or was refused, keyed by the platform's own quote reference. */
export const quotes = pgTable('quotes', {
  quoteRef: text('quote_ref').primaryKey(),
  providerId: text('provider_id').notNull(),
  outcome: text('outcome').notNull(),
  tradeMethod: text('trade_method').notNull(),
  quoteId: text('quote_id'),
  currencyFrom: text('currency_from').notNull(),
  currencyTo: text('currency_to').notNull(),
  amountFrom: money('amount_from'),
  amountTo: money('amount_to'),
  providerFees: money('provider_fees'),
  referralFees: money('referral_fees'),
  payoutNetworkFees: money('payout_network_fees'),
  expiry: ts('expiry'),
  defaultSlippage: money('default_slippage'),
  minSlippage: money('min_slippage'),
  maxSlippage: money('max_slippage'),
  errorKey: text('error_key'),
  errorMessage: text('error_message'),
  receivedAt: ts('received_at').notNull(),
});

/**
 * One row per event the projector read: applied, rejected (with the reason), no-op or parked.
 * The primary key on event_id is also how a redelivered event is recognised and ignored.
 */
export const eventJournal = pgTable(
  'event_journal',
  {
    eventId: uuid('event_id').primaryKey(),
    topic: text('topic').notNull(),
    partition: integer('partition').notNull(),
    offset: bigint('offset', { mode: 'bigint' }).notNull(),
    eventType: text('event_type').notNull(),
    swapId: text('swap_id'),
    aggregateKey: text('aggregate_key').notNull(),
    providerId: text('provider_id').notNull(),
    source: text('source').notNull(),
    occurredAt: ts('occurred_at').notNull(),
    recordedAt: ts('recorded_at').notNull(),
    outcome: text('outcome').notNull(),
    reason: text('reason'),
    /** What the event changed: { field: [before, after] }. */
    changes: jsonb('changes'),
    payload: jsonb('payload').notNull(),
  },
  (t) => [
    uniqueIndex('event_journal_position_idx').on(t.topic, t.partition, t.offset),
    index('event_journal_swap_idx').on(t.providerId, t.swapId, t.topic, t.partition, t.offset),
    index('event_journal_parked_idx')
      .on(t.aggregateKey, t.offset)
      .where(sql`${t.outcome} = 'parked'`),
    check(
      'event_journal_outcome_chk',
      sql`${t.outcome} in ('applied', 'rejected', 'noop', 'parked', 'contradicted')`,
    ),
  ],
);

/**
 * Swaps that await the reconciler, filled in the fold's transaction: a swap that became closed or final,
 * and any applied change of a final swap's figures afterwards (a fill, a conflict, a correction, a late
 * status). One row per swap: the latest event that queued it.
 */
export const reconciliationQueue = pgTable(
  'reconciliation_queue',
  {
    providerId: text('provider_id').notNull(),
    swapId: text('swap_id').notNull(),
    /** The event that queued it; the verdict names it as the event it is based on. */
    queuedByEventId: uuid('queued_by_event_id').notNull(),
    queuedAt: ts('queued_at').notNull(),
    reason: text('reason').notNull(),
    /**
     * The W3C traceparent of the Kafka message that queued it, so the reconciler's span joins that
     * request's trace; null when untraced. Not state: left out of the state checksum.
     */
    traceParent: text('trace_parent'),
  },
  (t) => [
    primaryKey({ columns: [t.providerId, t.swapId], name: 'reconciliation_queue_pkey' }),
    // The reconciler takes the oldest first, a round at a time: an index walk that stops after a round,
    // not a sort of the whole queue each round (a backlog made every round cost the backlog).
    index('reconciliation_queue_order_idx').on(t.queuedAt, t.providerId, t.swapId),
  ],
);

/** The reconciler's latest verdict per swap (folded from SwapReconciled); the history keeps them all. */
export const reconciliations = pgTable(
  'reconciliations',
  {
    providerId: text('provider_id').notNull(),
    swapId: text('swap_id').notNull(),
    eventId: uuid('event_id').notNull(),
    basedOnEventId: uuid('based_on_event_id').notNull(),
    /**
     * The log offset of that event (a swap's events share a partition): the current verdict is the one based
     * on the newest event. Null when it was not journaled (verdicts folded before this column).
     */
    basedOnOffset: bigint('based_on_offset', { mode: 'bigint' }),
    verdict: text('verdict').notNull(),
    checks: jsonb('checks').notNull(),
    reconciledAt: ts('reconciled_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.providerId, t.swapId], name: 'reconciliations_pkey' })],
);

/** Every verdict ever recorded, each naming the event it is based on (append only). */
export const reconciliationHistory = pgTable(
  'reconciliation_history',
  {
    eventId: uuid('event_id').primaryKey(),
    providerId: text('provider_id').notNull(),
    swapId: text('swap_id').notNull(),
    basedOnEventId: uuid('based_on_event_id').notNull(),
    verdict: text('verdict').notNull(),
    checks: jsonb('checks').notNull(),
    reconciledAt: ts('reconciled_at').notNull(),
  },
  (t) => [index('reconciliation_history_swap_idx').on(t.providerId, t.swapId, t.reconciledAt)],
);

/**
 * Reports that contradicted a final swap, one row per contradicted field (`status` or a figure): the swap
 * kept its value; the partner's is kept here, shown as an exception and failing the swap's reconciliation.
 */
export const statusConflicts = pgTable(
  'status_conflicts',
  {
    /** `<event id>:<field>`. */
    conflictId: text('conflict_id').primaryKey(),
    eventId: uuid('event_id').notNull(),
    providerId: text('provider_id').notNull(),
    swapId: text('swap_id').notNull(),
    field: text('field').notNull(),
    finalValue: text('final_value'),
    reportedValue: text('reported_value'),
    source: text('source').notNull(),
    occurredAt: ts('occurred_at').notNull(),
    recordedAt: ts('recorded_at').notNull(),
  },
  (t) => [index('status_conflicts_swap_idx').on(t.providerId, t.swapId)],
);

/**
 * The double-entry journal: immutable lines (debit +, credit −) written by the fold when a swap becomes
 * final, when a value of a final swap still unknown arrives, and on an applied correction (a reversing
 * entry plus a new one). An entry is the lines one event wrote with one entry kind: it sums to zero per
 * currency (checked by the database at the end of each insert statement, migration 0004, which also refuses
 * UPDATE, DELETE and TRUNCATE). Currencies are the platform's ids (payloadCurrencyFrom/To).
 */
export const ledgerPostings = pgTable(
  'ledger_postings',
  {
    /**
     * `<entry id>:<line>`: deterministic, so a replay writes the same ids. Unique because (entry_id, line)
     * is the key and the check below ties the two: one index to keep, not two (the text one cost a
     * quarter of the postings' COPY).
     */
    postingId: text('posting_id').notNull(),
    /** The event that caused the entry. */
    entryId: uuid('entry_id').notNull(),
    /** 1.. within the event's lines (a correction numbers its reversal first, then the new lines). */
    line: integer('line').notNull(),
    entryKind: text('entry_kind').notNull(),
    swapId: text('swap_id').notNull(),
    /** The swap's version the event brought it to: orders a swap's entries. */
    swapVersion: integer('swap_version').notNull(),
    providerId: text('provider_id').notNull(),
    account: text('account').notNull(),
    currency: text('currency').notNull(),
    /** Signed: debit positive, credit negative; never zero. */
    amount: money('amount').notNull(),
    /** When the fact happened (the swap's final time); a correction restates that time. */
    effectiveAt: ts('effective_at').notNull(),
    /** When the platform recorded the event that caused the entry. */
    recordedAt: ts('recorded_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.entryId, t.line], name: 'ledger_postings_pkey' }),
    check(
      'ledger_postings_posting_id_chk',
      sql`${t.postingId} = ${t.entryId}::text || ':' || ${t.line}::text`,
    ),
    index('ledger_postings_swap_idx').on(t.providerId, t.swapId, t.swapVersion),
    index('ledger_postings_effective_idx').on(t.effectiveAt),
    check('ledger_postings_account_chk', sql`${t.account} in (${inList(LEDGER_ACCOUNTS)})`),
    check('ledger_postings_entry_kind_chk', sql`${t.entryKind} in (${inList(LEDGER_ENTRY_KINDS)})`),
    check('ledger_postings_amount_chk', sql`${t.amount} <> 0`),
  ],
);

/**
 * Messages the projector could not decode. Their Kafka key is parked: later events with that key are
 * journaled as parked and held, so order is kept, until an operator retries or discards the dead letter.
 */
export const deadLetters = pgTable(
  'dead_letters',
  {
    deadLetterId: text('dead_letter_id').primaryKey(),
    topic: text('topic').notNull(),
    partition: integer('partition').notNull(),
    offset: bigint('offset', { mode: 'bigint' }).notNull(),
    aggregateKey: text('aggregate_key').notNull(),
    reason: text('reason').notNull(),
    /** The message bytes exactly as read, base64. */
    valueBase64: text('value_base64').notNull(),
    /** The message's Kafka timestamp. */
    failedAt: ts('failed_at').notNull(),
    /** open | retried | discarded */
    status: text('status').notNull(),
    resolvedByEventId: uuid('resolved_by_event_id'),
    resolvedBy: text('resolved_by'),
    resolution: text('resolution'),
  },
  (t) => [
    index('dead_letters_open_idx')
      .on(t.aggregateKey)
      .where(sql`${t.status} = 'open'`),
    check('dead_letters_status_chk', sql`${t.status} in ('open', 'retried', 'discarded')`),
  ],
);

/** Where the projector stands in each partition: the next offset to fold. Written by compare-and-set. */
export const projectorCheckpoints = pgTable(
  'projector_checkpoints',
  {
    topic: text('topic').notNull(),
    partition: integer('partition').notNull(),
    nextOffset: bigint('next_offset', { mode: 'bigint' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.topic, t.partition] })],
);

/**
 * What the chain watcher saw of each transaction a partner reported for a swap (ChainTransactionObserved):
 * one row per (swap, role, txid), the latest observation by log order (a swap's events share a partition).
 * The reconciler's chain checks read it; the fold never calls a chain, so replay rebuilds it exactly.
 */
export const chainObservations = pgTable(
  'chain_observations',
  {
    providerId: text('provider_id').notNull(),
    swapId: text('swap_id').notNull(),
    /** payin | payout | refund */
    role: text('role').notNull(),
    txid: text('txid').notNull(),
    /** The observation event this row holds. */
    eventId: uuid('event_id').notNull(),
    currency: text('currency').notNull(),
    chain: text('chain').notNull(),
    family: text('family').notNull(),
    /** found | pending | not_found | reverted | refused */
    status: text('status').notNull(),
    confirmations: integer('confirmations').notNull(),
    requiredConfirmations: integer('required_confirmations').notNull(),
    block: bigint('block', { mode: 'number' }),
    blockHash: text('block_hash'),
    asset: text('asset').notNull(),
    decimals: integer('decimals').notNull(),
    /** [{ asset, recipient, amount, index }], amounts as atomic-unit decimal text. */
    transfers: jsonb('transfers').notNull(),
    source: text('source').notNull(),
    proven: boolean('proven').notNull(),
    deadlinePassed: boolean('deadline_passed').notNull(),
    observedAt: ts('observed_at').notNull(),
    detail: text('detail'),
    recordedAt: ts('recorded_at').notNull(),
    /** The mining block's time; null until mined or in observations recorded before it was. */
    blockTime: ts('block_time'),
    /** Fee the transaction spent, atomic units of the chain's native asset; null when not known. */
    fee: atomic('fee'),
    /** EVM: a contract call (internal native value moves are not visible). */
    contractCall: boolean('contract_call').notNull().default(false),
  },
  (t) => [
    primaryKey({
      columns: [t.providerId, t.swapId, t.role, t.txid],
      name: 'chain_observations_pkey',
    }),
    check('chain_observations_role_chk', sql`${t.role} in ('payin', 'payout', 'refund')`),
    check(
      'chain_observations_status_chk',
      sql`${t.status} in ('found', 'pending', 'not_found', 'reverted', 'refused')`,
    ),
  ],
);

/**
 * One transfer, one claim (DESIGN "The chain is the last witness"): each transfer of a chain transaction
 * (its output or log index) that a swap's observed transaction pays to the swap's address for the role, one
 * row per (transfer, swap, role), written once by the first observation that saw it. The holder of a transfer
 * is its claim with the earliest event id (UUIDv7, set once by the watcher): two swaps' events sit in
 * different partitions, whose interleaving a replay does not keep, so the id is the order a replay rebuilds.
 */
export const chainClaims = pgTable(
  'chain_claims',
  {
    chain: text('chain').notNull(),
    txid: text('txid').notNull(),
    /** The transfer's index as text, 'native' (an EVM transaction's own value) or, without an index, asset>recipient. */
    transfer: text('transfer').notNull(),
    providerId: text('provider_id').notNull(),
    swapId: text('swap_id').notNull(),
    role: text('role').notNull(),
    /** The observation that first claimed it. */
    eventId: uuid('event_id').notNull(),
    asset: text('asset').notNull(),
    recipient: text('recipient').notNull(),
    amount: atomic('amount').notNull(),
  },
  (t) => [
    primaryKey({
      columns: [t.chain, t.txid, t.transfer, t.providerId, t.swapId, t.role],
      name: 'chain_claims_pkey',
    }),
    index('chain_claims_swap_idx').on(t.providerId, t.swapId),
    check('chain_claims_role_chk', sql`${t.role} in ('payin', 'payout', 'refund')`),
  ],
);

/**
 * Month end (README "Month end"): partners' statements as imported, each line with its match decided at
 * import (StatementImported), and the closes and reopenings of periods (PeriodClosed, PeriodReopened). All
 * append-only: a re-import supersedes the statement in force by naming it, so both stay visible.
 */
export const statements = pgTable(
  'statements',
  {
    /** The StatementImported event's id. */
    statementId: uuid('statement_id').primaryKey(),
    providerId: text('provider_id').notNull(),
    /** YYYY-MM */
    period: text('period').notNull(),
    fileName: text('file_name').notNull(),
    fileDigest: text('file_digest').notNull(),
    layout: text('layout').notNull(),
    operator: text('operator').notNull(),
    reason: text('reason'),
    /** The statement in force it replaced; the one in force is the one no other supersedes. */
    supersedes: uuid('supersedes'),
    lineCount: integer('line_count').notNull(),
    importedAt: ts('imported_at').notNull(),
  },
  (t) => [
    index('statements_provider_period_idx').on(t.providerId, t.period),
    check('statements_period_chk', sql`${t.period} ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'`),
  ],
);

export const statementLines = pgTable(
  'statement_lines',
  {
    statementId: uuid('statement_id').notNull(),
    /** 1.. in the event's order: the file's lines, then the ledger_only entries. */
    seq: integer('seq').notNull(),
    providerId: text('provider_id').notNull(),
    /** The file's line (header = 1); null for a ledger_only entry. */
    lineNo: integer('line_no'),
    swapId: text('swap_id').notNull(),
    /** matched | statement_only | ledger_only | status_differs | amount_differs */
    outcome: text('outcome').notNull(),
    statusWord: text('status_word'),
    status: text('status'),
    finishedAt: ts('finished_at'),
    currencyFrom: text('currency_from'),
    amountFrom: money('amount_from'),
    currencyTo: text('currency_to'),
    amountTo: money('amount_to'),
    providerFee: money('provider_fee'),
    referralFee: money('referral_fee'),
    payoutNetworkFee: money('payout_network_fee'),
    ledgerStatus: text('ledger_status'),
    /** The earlier period the swap's postings of this month adjust (a prior-period adjustment). */
    priorPeriod: text('prior_period'),
    /** [{ field, ledger, statement, delta, tolerance, direction, verdict }] */
    differences: jsonb('differences').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.statementId, t.seq], name: 'statement_lines_pkey' }),
    index('statement_lines_swap_idx').on(t.providerId, t.swapId),
    check(
      'statement_lines_outcome_chk',
      sql`${t.outcome} in ('matched', 'statement_only', 'ledger_only', 'status_differs', 'amount_differs')`,
    ),
  ],
);

export const periodEvents = pgTable(
  'period_events',
  {
    /** The PeriodClosed or PeriodReopened event's id (UUIDv7: orders them). */
    eventId: uuid('event_id').primaryKey(),
    period: text('period').notNull(),
    /** closed | reopened */
    kind: text('kind').notNull(),
    operator: text('operator').notNull(),
    reason: text('reason').notNull(),
    digest: text('digest').notNull(),
    previousDigest: text('previous_digest'),
    postingCount: integer('posting_count'),
    statementIds: jsonb('statement_ids'),
    acceptedDifferences: boolean('accepted_differences').notNull(),
    recordedAt: ts('recorded_at').notNull(),
  },
  (t) => [
    index('period_events_period_idx').on(t.period),
    check('period_events_kind_chk', sql`${t.kind} in ('closed', 'reopened')`),
    check('period_events_period_chk', sql`${t.period} ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'`),
  ],
);

/**
 * Referral invoices (README "Month end"): one row per InvoiceIssued, its lines in the event's order. Append
 * only: a reissue supersedes the invoice in force by naming it, so both stay visible.
 */
export const invoices = pgTable(
  'invoices',
  {
    /** The InvoiceIssued event's id: the key, so two issues racing for one number both fold and show. */
    eventId: uuid('event_id').primaryKey(),
    /** <provider>-<YYYY-MM>, then -r2, -r3 for reissues. */
    invoiceNumber: text('invoice_number').notNull(),
    providerId: text('provider_id').notNull(),
    /** YYYY-MM */
    period: text('period').notNull(),
    operator: text('operator').notNull(),
    issuedAt: ts('issued_at').notNull(),
    /** YYYY-MM-DD (UTC) */
    dueDate: text('due_date').notNull(),
    reason: text('reason'),
    /** The invoice in force it replaced; the one in force is the one no other supersedes. */
    supersedes: text('supersedes'),
    /** [{ currency, amount }]: the lines not in dispute. */
    totals: jsonb('totals').notNull(),
  },
  (t) => [
    index('invoices_provider_period_idx').on(t.providerId, t.period),
    index('invoices_number_idx').on(t.invoiceNumber),
    check('invoices_period_chk', sql`${t.period} ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'`),
  ],
);

export const invoiceLines = pgTable(
  'invoice_lines',
  {
    eventId: uuid('event_id').notNull(),
    invoiceNumber: text('invoice_number').notNull(),
    /** 1.. in the event's order. */
    seq: integer('seq').notNull(),
    providerId: text('provider_id').notNull(),
    swapId: text('swap_id').notNull(),
    currency: text('currency').notNull(),
    referralFee: money('referral_fee').notNull(),
    /** Why the line is in dispute (not in the totals); null when invoiced. */
    disputed: text('disputed'),
  },
  (t) => [
    primaryKey({ columns: [t.eventId, t.seq], name: 'invoice_lines_pkey' }),
    index('invoice_lines_swap_idx').on(t.providerId, t.swapId),
  ],
);

/**
 * A swap's case (src/cases/machine.ts): one row per swap, opened and settled by its verdicts and exceptions,
 * moved by operators' CaseActed events; `history` keeps every step (derived or acted) in log order.
 */
export const cases = pgTable(
  'cases',
  {
    providerId: text('provider_id').notNull(),
    swapId: text('swap_id').notNull(),
    /** open | acknowledged | disputed | resolved */
    state: text('state').notNull(),
    outcome: text('outcome'),
    /** mismatch | unverifiable_past_deadline | exception */
    trigger: text('trigger').notNull(),
    triggerEventId: uuid('trigger_event_id').notNull(),
    openedAt: ts('opened_at').notNull(),
    openings: integer('openings').notNull(),
    resolvedAt: ts('resolved_at'),
    amountAtStake: money('amount_at_stake'),
    stakeCurrency: text('stake_currency'),
    /** The failing checks the case stands on (names, verdicts, actual figures): a reopen compares it. */
    failing: text('failing').notNull(),
    pendingWriteOff: jsonb('pending_write_off'),
    resolution: jsonb('resolution'),
    history: jsonb('history').notNull(),
    /** The event of the case's latest step. */
    lastEventId: uuid('last_event_id').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.providerId, t.swapId], name: 'cases_pkey' }),
    index('cases_state_idx').on(t.state, t.openedAt),
    check('cases_state_chk', sql`${t.state} in ('open', 'acknowledged', 'disputed', 'resolved')`),
    check(
      'cases_outcome_chk',
      sql`(${t.state} = 'resolved') = (${t.outcome} is not null) and (${t.outcome} is null or ${t.outcome} in ('settled_by_evidence', 'partner_paid', 'corrected', 'accepted_loss', 'false_alarm'))`,
    ),
  ],
);
