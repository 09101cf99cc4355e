// Over 400 lines on purpose: drizzle-kit generates the platform migrations from this one file, so every
// platform table (providers, created swaps, outbox, quotes, requests, catalog, leases) is declared here.
import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  numeric,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import { INTERNAL_STATUSES } from '../../swap/status.ts';
import { inList } from './in-list.ts';

/**
 * Platform tables: configuration and records the platform owns, NOT folded from the event log and
 * never rebuilt by replay. They live in their own Postgres schema `platform` (names are qualified),
 * beside the projection schema(s), with their own migrations (drizzle/platform). Table definitions
 * repeat column shapes by design (as projection.ts's do): one declaration per table.
 */
export const platform = pgSchema('platform');

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'string', precision: 3 });

/** The internal statuses a partner status can map to (partner interface v2, Status.status). */
const INTERNAL_STATUS_SQL = sql`(${inList(INTERNAL_STATUSES)})`;

/**
 * A swap partner. `auth_headers` are the partner's credentials for calls to it: secret, never logged
 * or shown. `client_options` holds the rest of the partner client configuration (timeouts, retry,
 * page sizes) as parsed by src/partner/config.ts.
 */
export const providers = platform.table(
  'providers',
  {
    id: text('id').primaryKey(),
    displayName: text('display_name').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    baseUrl: text('base_url').notNull(),
    authHeaders: jsonb('auth_headers').$type<Record<string, string>>().notNull().default({}),
    clientOptions: jsonb('client_options').$type<Record<string, unknown>>().notNull().default({}),
    pollIntervalSeconds: integer('poll_interval_seconds').notNull(),
    /** Webhook rate limit: a token bucket refilled at this rate, holding at most `burst` requests. */
    rateLimitPerSecond: integer('rate_limit_per_second').notNull(),
    rateLimitBurst: integer('rate_limit_burst').notNull(),
    /** The provider's agreed slippage for float swaps when neither request nor quote gives one (ratio 0-1). */
    defaultSlippage: numeric('default_slippage'),
    /** How the webhook's `networkFees` ("referral or extra fee") is read: `evidence` (the reconciler, against the committed referral fee), or an override: `referral` or `extra`. */
    webhookNetworkFees: text('webhook_network_fees').notNull().default('evidence'),
    /** `file` (the providers file owns it; reloaded at start) or `cli` (created by `provider add`). */
    managedBy: text('managed_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    check('providers_id_chk', sql`${t.id} ~ '^[a-z0-9][a-z0-9._-]{0,63}$'`),
    check('providers_poll_chk', sql`${t.pollIntervalSeconds} > 0`),
    check('providers_rate_chk', sql`${t.rateLimitPerSecond} > 0 and ${t.rateLimitBurst} > 0`),
    check('providers_managed_by_chk', sql`${t.managedBy} in ('file', 'cli')`),
    check('providers_default_slippage_chk', sql`${t.defaultSlippage} between 0 and 1`),
    check(
      'providers_webhook_network_fees_chk',
      sql`${t.webhookNetworkFees} in ('evidence', 'referral', 'extra')`,
    ),
  ],
);

/**
 * Webhook API keys: only the SHA-256 digest (lower-case hex) of a random 256-bit key is stored.
 * Several keys of a provider may be valid at once (rotation); a revoked key stays for the record.
 * A digest is unique across providers: a key alone names its provider.
 */
export const providerApiKeys = platform.table(
  'provider_api_keys',
  {
    providerId: text('provider_id')
      .notNull()
      .references(() => providers.id, { onDelete: 'cascade' }),
    keyId: text('key_id').notNull(),
    sha256: text('sha256').notNull().unique('provider_api_keys_sha256_key'),
    createdAt: ts('created_at').notNull().defaultNow(),
    revokedAt: ts('revoked_at'),
  },
  (t) => [
    primaryKey({ columns: [t.providerId, t.keyId] }),
    check('provider_api_keys_sha256_chk', sql`${t.sha256} ~ '^[0-9a-f]{64}$'`),
  ],
);

/** Public keys the partner signs swap payloads with, each with its curve and validity window [from, to). */
export const providerPayloadKeys = platform.table(
  'provider_payload_keys',
  {
    providerId: text('provider_id')
      .notNull()
      .references(() => providers.id, { onDelete: 'cascade' }),
    keyId: text('key_id').notNull(),
    curve: text('curve').notNull(),
    /** Hex, PEM or JWK JSON text, as configured. */
    publicKey: text('public_key').notNull(),
    validFrom: ts('valid_from').notNull(),
    validTo: ts('valid_to'),
  },
  (t) => [
    primaryKey({ columns: [t.providerId, t.keyId] }),
    check('provider_payload_keys_curve_chk', sql`${t.curve} in ('secp256k1', 'secp256r1')`),
    check('provider_payload_keys_window_chk', sql`${t.validTo} is null or ${t.validTo} > ${t.validFrom}`),
  ],
);

/** The partner's currency ids and the platform's (payloadCurrencyFrom/To) they stand for. */
export const providerCurrencyMap = platform.table(
  'provider_currency_map',
  {
    providerId: text('provider_id')
      .notNull()
      .references(() => providers.id, { onDelete: 'cascade' }),
    partnerCurrencyId: text('partner_currency_id').notNull(),
    platformCurrencyId: text('platform_currency_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.providerId, t.partnerCurrencyId] })],
);

/** The effective status mapping of a provider: partner status string (exact) to internal status. */
export const providerStatusMap = platform.table(
  'provider_status_map',
  {
    providerId: text('provider_id')
      .notNull()
      .references(() => providers.id, { onDelete: 'cascade' }),
    partnerStatus: text('partner_status').notNull(),
    internalStatus: text('internal_status').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.providerId, t.partnerStatus] }),
    check('provider_status_map_internal_chk', sql`${t.internalStatus} in ${INTERNAL_STATUS_SQL}`),
  ],
);

/** Internal statuses that are final for a provider (decided at ingest, written into the event). */
export const providerFinalStatuses = platform.table(
  'provider_final_statuses',
  {
    providerId: text('provider_id')
      .notNull()
      .references(() => providers.id, { onDelete: 'cascade' }),
    status: text('status').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.providerId, t.status] }),
    check('provider_final_statuses_chk', sql`${t.status} in ${INTERNAL_STATUS_SQL}`),
  ],
);

/**
 * The gateway's durable record of a swap the partner created, written in the request that created it,
 * before the projector folds SwapCreated: a status webhook that arrives at once finds its swap here.
 * No foreign key to providers: a record is never lost to a registry edit.
 */
export const createdSwaps = platform.table(
  'created_swaps',
  {
    swapId: text('swap_id').notNull(),
    providerId: text('provider_id').notNull(),
    /** The partner's createdAt of the swap. */
    createdAt: ts('created_at').notNull(),
    recordedAt: ts('recorded_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.swapId, t.providerId] }),
    index('created_swaps_recorded_idx').on(t.recordedAt),
  ],
);

/**
 * The gateway's record of each quote it handed to the wallet (key: the platform's quoteRef), written in
 * the quote request, so the swap request that follows finds the quote's terms, expiry and slippage
 * bounds at once, whatever the projector's lag. `terms` is the QuoteTerms of the QuoteReceived event;
 * `response` the partner's QuoteResponse as received (the payload check of a fixed swap compares with it).
 */
export const gatewayQuotes = platform.table(
  'gateway_quotes',
  {
    quoteRef: text('quote_ref').primaryKey(),
    providerId: text('provider_id').notNull(),
    quoteId: text('quote_id'),
    tradeMethod: text('trade_method').notNull(),
    currencyFrom: text('currency_from').notNull(),
    currencyTo: text('currency_to').notNull(),
    amountFrom: numeric('amount_from'),
    amountTo: numeric('amount_to').notNull(),
    expiry: ts('expiry'),
    minSlippage: numeric('min_slippage'),
    maxSlippage: numeric('max_slippage'),
    terms: jsonb('terms').notNull(),
    response: jsonb('response').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('gateway_quotes_created_idx').on(t.createdAt),
    check('gateway_quotes_trade_method_chk', sql`${t.tradeMethod} in ('fixed', 'float')`),
  ],
);

/**
 * Idempotency of POST /v1/swaps: one row per Idempotency-Key, claimed (in_progress) before the partner is
 * called and completed with the exact answer given, so a retry with the same key and body gets the same
 * answer and never a second partner call. `fingerprint` is the SHA-256 of the canonical request.
 */
export const idempotencyKeys = platform.table(
  'idempotency_keys',
  {
    idempotencyKey: text('idempotency_key').primaryKey(),
    providerId: text('provider_id').notNull(),
    fingerprint: text('fingerprint').notNull(),
    requestId: text('request_id').notNull(),
    state: text('state').notNull(),
    responseStatus: integer('response_status'),
    response: jsonb('response'),
    createdAt: ts('created_at').notNull().defaultNow(),
    completedAt: ts('completed_at'),
  },
  (t) => [
    check('idempotency_keys_state_chk', sql`${t.state} in ('in_progress', 'completed')`),
    check(
      'idempotency_keys_completed_chk',
      sql`(${t.state} = 'completed') = (${t.responseStatus} is not null and ${t.completedAt} is not null)`,
    ),
    check('idempotency_keys_fingerprint_chk', sql`${t.fingerprint} ~ '^[0-9a-f]{64}$'`),
  ],
);

/**
 * Events Kafka did not acknowledge in time, kept in Postgres until the relay of their topic publishes
 * them with their original ids, in `seq` order per aggregate key. `event` is the SwapEvent as JSON (encoded with the
 * registry only when published, so the outbox needs neither Kafka nor the registry).
 */
export const outbox = platform.table(
  'outbox',
  {
    seq: bigserial('seq', { mode: 'bigint' }).primaryKey(),
    /** The topic the event is for: a relay publishes only its own topic's rows. */
    topic: text('topic').notNull(),
    aggregateKey: text('aggregate_key').notNull(),
    eventId: uuid('event_id').notNull().unique('outbox_event_id_key'),
    eventType: text('event_type').notNull(),
    providerId: text('provider_id').notNull(),
    event: jsonb('event').notNull(),
    /** Why the event went to the outbox: `kafka: <error>` or `behind <n> pending event(s) of its key`. */
    reason: text('reason').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    publishedAt: ts('published_at'),
    /**
     * The W3C trace context (traceparent, tracestate) active when the event was written, sent as the
     * message's headers when relayed, so its consumers join the trace of the request that caused it.
     * Null when untraced.
     */
    traceParent: text('trace_parent'),
    traceState: text('trace_state'),
  },
  (t) => [
    index('outbox_pending_key_idx')
      .on(t.aggregateKey, t.seq)
      .where(sql`${t.publishedAt} is null`),
    index('outbox_pending_topic_seq_idx')
      .on(t.topic, t.seq)
      .where(sql`${t.publishedAt} is null`),
  ],
);

/**
 * Confirming polls of swaps made final by a webhook (DESIGN "Status rules"): GET /status is asked, with
 * backoff, until the partner reports the swap's final status with every figure its outcome needs, or until
 * the deadline. One row per swap, written at the first answered confirming poll (the reconciler waits for
 * it, platform.poll_confirmations existing, at most RECONCILER_CONFIRM_WAIT_MS) and updated by each later
 * one, conditionally on `attempts` so that two pollers never both record (and append) one attempt.
 */
export const pollConfirmations = platform.table(
  'poll_confirmations',
  {
    swapId: text('swap_id').notNull(),
    providerId: text('provider_id').notNull(),
    /** The last attempt's: appended | nothing_new | stale | unmappable | not_found | error | deadline */
    outcome: text('outcome').notNull(),
    detail: text('detail'),
    /** The StatusReported the last appending attempt appended. */
    eventId: uuid('event_id'),
    /** When the first confirming poll was answered. */
    confirmedAt: ts('confirmed_at').notNull().defaultNow(),
    /** confirming (asked again at next_due_at) | confirmed (a complete answer) | abandoned (the deadline) */
    state: text('state').notNull().default('confirming'),
    /** Answered confirming polls (an error or a 420 is no answer). */
    attempts: integer('attempts').notNull().default(1),
    /** When a swap still confirming is asked again (poller clock); null: at once. */
    nextDueAt: ts('next_due_at'),
    /** The figures its outcome needs still unknown after the last attempt (names as in src/swap/report.ts). */
    missing: text('missing')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    lastAttemptAt: ts('last_attempt_at').notNull().defaultNow(),
    /** When it was confirmed or abandoned. */
    endedAt: ts('ended_at'),
  },
  (t) => [
    primaryKey({ columns: [t.swapId, t.providerId] }),
    check('poll_confirmations_state_chk', sql`${t.state} in ('confirming', 'confirmed', 'abandoned')`),
    check('poll_confirmations_ended_chk', sql`(${t.state} = 'confirming') = (${t.endedAt} is null)`),
    index('poll_confirmations_due_idx')
      .on(t.nextDueAt)
      .where(sql`${t.state} = 'confirming'`),
  ],
);

/**
 * Swaps whose confirmation deadline passed with figures never reported (poll_confirmations abandoned with
 * `missing` not empty): each missing figure is UNVERIFIABLE "never reported" and the swap an exception.
 * Platform only (the projection's schema varies): join it to `swaps` by (provider_id, swap_id).
 */
export const confirmationsNeverReported = platform.view('confirmations_never_reported').as((qb) =>
  qb
    .select({
      providerId: pollConfirmations.providerId,
      swapId: pollConfirmations.swapId,
      missing: pollConfirmations.missing,
      attempts: pollConfirmations.attempts,
      lastOutcome: sql<string>`${pollConfirmations.outcome}`.as('last_outcome'),
      detail: pollConfirmations.detail,
      firstConfirmedAt: sql<string>`${pollConfirmations.confirmedAt}`.as('first_confirmed_at'),
      lastAttemptAt: pollConfirmations.lastAttemptAt,
      abandonedAt: sql<string>`${pollConfirmations.endedAt}`.as('abandoned_at'),
    })
    .from(pollConfirmations)
    .where(sql`${pollConfirmations.state} = 'abandoned' and cardinality(${pollConfirmations.missing}) > 0`),
);

/**
 * Work leases (src/db/lease.ts): which poller polls a swap, which chain watcher looks a transaction up.
 * Held (`owner` set) while one instance works on it, so two never do at once; released with `lease_until`
 * set to when it is next due (`owner` null), so every instance keeps one shared schedule. A lease past its
 * time (its holder died) is anyone's. Times are the workers' clocks.
 */
export const workLeases = platform.table(
  'work_leases',
  {
    /** poll | chain */
    kind: text('kind').notNull(),
    /** The swap (provider/swap) or the transaction looked up. */
    key: text('key').notNull(),
    owner: text('owner'),
    leaseUntil: ts('lease_until').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.kind, t.key], name: 'work_leases_pkey' }),
    index('work_leases_idle_idx')
      .on(t.kind, t.leaseUntil)
      .where(sql`${t.owner} is null`),
  ],
);

/**
 * The case notifications owed to CASE_NOTIFY_URL (src/ops/case-notifier.ts), an outbox: a row is written before
 * its POST and marked delivered after a 2xx, so each is delivered at least once. Kept here, not in the
 * projection: a replay rebuilds the cases, never re-sends what was told.
 */
export const caseNotifications = platform.table(
  'case_notifications',
  {
    providerId: text('provider_id').notNull(),
    swapId: text('swap_id').notNull(),
    /** The case's opening (1, then one more per reopening) the message is about. */
    opening: integer('opening').notNull(),
    /** opened | reopened | aged */
    kind: text('kind').notNull(),
    message: jsonb('message').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    deliveredAt: ts('delivered_at'),
    lastError: text('last_error'),
  },
  (t) => [
    primaryKey({ columns: [t.providerId, t.swapId, t.opening, t.kind], name: 'case_notifications_pkey' }),
    index('case_notifications_undelivered_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.deliveredAt} is null`),
    check('case_notifications_kind_chk', sql`${t.kind} in ('opened', 'reopened', 'aged')`),
  ],
);

/**
 * The reconciliation queue rows each reconciler's round took, by the events that queued them: other
 * reconcilers skip them until `claimed_until`, which outlasts the round's short claiming transaction until
 * the projector folds the verdicts (the queue rows go; the claimer then deletes its round). A claim past
 * its time is nobody's: its rows are taken again.
 */
export const reconciliationClaims = platform.table('reconciliation_claims', {
  roundId: uuid('round_id').primaryKey(),
  claimedBy: text('claimed_by').notNull(),
  claimedUntil: ts('claimed_until').notNull(),
  queuedByEventIds: uuid('queued_by_event_ids').array().notNull(),
});

/** The partner's currencies as of the latest full sync; one missing from it is disabled, never deleted. */
export const catalogCurrencies = platform.table(
  'catalog_currencies',
  {
    providerId: text('provider_id')
      .notNull()
      .references(() => providers.id, { onDelete: 'cascade' }),
    currencyId: text('currency_id').notNull(),
    type: text('type').notNull(),
    blockchain: text('blockchain'),
    chainId: integer('chain_id'),
    contract: text('contract'),
    enabled: boolean('enabled').notNull(),
    firstSeenAt: ts('first_seen_at').notNull(),
    lastSeenAt: ts('last_seen_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.providerId, t.currencyId] })],
);

/** The partner's pairs as of the latest full sync, limits as numeric; one missing from it is disabled. */
export const catalogPairs = platform.table(
  'catalog_pairs',
  {
    providerId: text('provider_id')
      .notNull()
      .references(() => providers.id, { onDelete: 'cascade' }),
    currencyFrom: text('currency_from').notNull(),
    currencyTo: text('currency_to').notNull(),
    tradeMethods: text('trade_methods').array().notNull(),
    minAmount: numeric('min_amount').notNull(),
    maxAmount: numeric('max_amount').notNull(),
    enabled: boolean('enabled').notNull(),
    firstSeenAt: ts('first_seen_at').notNull(),
    lastSeenAt: ts('last_seen_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.providerId, t.currencyFrom, t.currencyTo] })],
);

/** One catalog sync of one provider: when, how much it read, and whether it completed. */
export const catalogSyncs = platform.table(
  'catalog_syncs',
  {
    syncId: bigserial('sync_id', { mode: 'bigint' }).primaryKey(),
    providerId: text('provider_id').notNull(),
    startedAt: ts('started_at').notNull(),
    finishedAt: ts('finished_at').notNull(),
    /** ok | failed (a failed sync changes nothing: only a full read may disable what it did not see) */
    outcome: text('outcome').notNull(),
    currencies: integer('currencies'),
    pairs: integer('pairs'),
    changes: integer('changes'),
    error: text('error'),
  },
  (t) => [
    index('catalog_syncs_provider_idx').on(t.providerId, t.startedAt),
    check('catalog_syncs_outcome_chk', sql`${t.outcome} in ('ok', 'failed')`),
  ],
);

/** History of the catalog: what changed, from what to what, and when (the sync that saw it). */
export const catalogChanges = platform.table(
  'catalog_changes',
  {
    changeId: bigserial('change_id', { mode: 'bigint' }).primaryKey(),
    syncId: bigint('sync_id', { mode: 'bigint' }).notNull(),
    providerId: text('provider_id').notNull(),
    /** currency | pair */
    itemKind: text('item_kind').notNull(),
    /** `btc`, or `btc/eth` for a pair. */
    item: text('item').notNull(),
    /** added | disabled | enabled | min_amount | max_amount | trade_methods | type | network | contract */
    change: text('change').notNull(),
    oldValue: text('old_value'),
    newValue: text('new_value'),
    changedAt: ts('changed_at').notNull(),
  },
  (t) => [
    index('catalog_changes_provider_idx').on(t.providerId, t.changedAt),
    check('catalog_changes_kind_chk', sql`${t.itemKind} in ('currency', 'pair')`),
  ],
);
