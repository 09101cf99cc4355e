import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';

/**
 * Platform tables: configuration and records the platform owns, NOT folded from the event log and
 * never rebuilt by replay. They live in their own Postgres schema `platform` (names are qualified),
 * beside the projection schema(s), with their own migrations (drizzle/platform).
 */
export const platform = pgSchema('platform');

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'string', precision: 3 });

/** The internal statuses a partner status can map to (partner interface v2, Status.status). */
const INTERNAL_STATUS_SQL = sql.raw(`('FINISHED', 'EXPIRED', 'ON_HOLD', 'PENDING', 'REFUNDED', 'UNKNOWN')`);

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
