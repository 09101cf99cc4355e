import type pg from 'pg';
import type { Logger } from '../observability/log.ts';
import { redactUrl } from '../observability/log.ts';
import { parsePartnerClientConfig, type PartnerClientConfig } from '../partner/config.ts';
import type { Curve, PartnerKey } from '../payload/keys.ts';
import { statusMappingFromEntries, type StatusMapping } from '../swap/status.ts';
import type { WebhookNetworkFees } from '../swap/report.ts';
import { type ApiKeyEntry } from './api-keys.ts';
import { resolveHeaders } from './secrets.ts';
import { type RateLimitConfig } from './file.ts';
import type { Db } from './store.ts';

/**
 * Reads of the provider registry (schema `platform`): what `provider list` shows, what an ingest process
 * caches, what a partner client needs, and the start-time credential check. Writes are in store.ts.
 */

/** What `provider list` shows: no key, digest or header value. */
export interface ProviderSummary {
  readonly id: string;
  readonly displayName: string;
  readonly enabled: boolean;
  readonly managedBy: string;
  readonly baseUrl: string;
  readonly authHeaderNames: string[];
  readonly webhookKeys: { keyId: string; createdAt: string; revokedAt: string | null }[];
  readonly payloadKeys: { keyId: string; curve: string; validFrom: string; validTo: string | null }[];
  readonly currencies: number;
  readonly statusMap: Record<string, string>;
  readonly finalStatuses: string[];
  readonly pollIntervalSeconds: number;
  readonly rateLimit: RateLimitConfig;
}

function hasPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return true; // unparseable: shown redacted
  }
}

export async function listProviders(db: Db): Promise<ProviderSummary[]> {
  const r = await db.query<{
    id: string;
    display_name: string;
    enabled: boolean;
    managed_by: string;
    base_url: string;
    header_names: string[];
    keys: { keyId: string; createdAt: string; revokedAt: string | null }[] | null;
    payload_keys: { keyId: string; curve: string; validFrom: string; validTo: string | null }[] | null;
    currencies: number;
    status_map: Record<string, string> | null;
    finals: string[] | null;
    poll_interval_seconds: number;
    rate_limit_per_second: number;
    rate_limit_burst: number;
  }>(
    `select p.id, p.display_name, p.enabled, p.managed_by, p.base_url,
       array(select jsonb_object_keys(p.auth_headers) order by 1) as header_names,
       (select jsonb_agg(jsonb_build_object('keyId', k.key_id, 'createdAt', k.created_at, 'revokedAt', k.revoked_at)
          order by k.created_at, k.key_id) from platform.provider_api_keys k where k.provider_id = p.id) as keys,
       (select jsonb_agg(jsonb_build_object('keyId', k.key_id, 'curve', k.curve, 'validFrom', k.valid_from,
          'validTo', k.valid_to) order by k.valid_from, k.key_id)
          from platform.provider_payload_keys k where k.provider_id = p.id) as payload_keys,
       (select count(*)::int from platform.provider_currency_map c where c.provider_id = p.id) as currencies,
       (select jsonb_object_agg(s.partner_status, s.internal_status)
          from platform.provider_status_map s where s.provider_id = p.id) as status_map,
       array(select f.status from platform.provider_final_statuses f where f.provider_id = p.id order by 1) as finals,
       p.poll_interval_seconds, p.rate_limit_per_second, p.rate_limit_burst
     from platform.providers p order by p.id`,
  );
  return r.rows.map((row) => ({
    id: row.id,
    displayName: row.display_name,
    enabled: row.enabled,
    managedBy: row.managed_by,
    baseUrl: hasPassword(row.base_url) ? redactUrl(row.base_url) : row.base_url,
    authHeaderNames: row.header_names,
    webhookKeys: row.keys ?? [],
    payloadKeys: row.payload_keys ?? [],
    currencies: row.currencies,
    statusMap: row.status_map ?? {},
    finalStatuses: row.finals ?? [],
    pollIntervalSeconds: row.poll_interval_seconds,
    rateLimit: { perSecond: row.rate_limit_per_second, burst: row.rate_limit_burst },
  }));
}

/** What an ingest process needs of each provider, read in one pass (see ProviderRegistryCache). */
export interface ProviderRuntime {
  readonly id: string;
  readonly enabled: boolean;
  readonly statusMapping: StatusMapping;
  readonly rateLimit: RateLimitConfig;
  readonly pollIntervalSeconds: number;
  /** How the webhook's networkFees is read: by evidence (default), or as the referral or an extra fee. */
  readonly webhookNetworkFees: WebhookNetworkFees;
}

export interface RegistryData {
  readonly providers: ProviderRuntime[];
  /** Keys not revoked (a disabled provider's keys included: authentication refuses them by its flag). */
  readonly keys: ApiKeyEntry[];
}

export async function readRegistry(db: Db): Promise<RegistryData> {
  const providers = await db.query<{
    id: string;
    enabled: boolean;
    poll_interval_seconds: number;
    rate_limit_per_second: number;
    rate_limit_burst: number;
    webhook_network_fees: WebhookNetworkFees;
    statuses: [string, string][] | null;
    finals: string[];
  }>(
    `select p.id, p.enabled, p.poll_interval_seconds, p.rate_limit_per_second, p.rate_limit_burst,
       p.webhook_network_fees,
       (select jsonb_agg(jsonb_build_array(s.partner_status, s.internal_status))
          from platform.provider_status_map s where s.provider_id = p.id) as statuses,
       array(select f.status from platform.provider_final_statuses f where f.provider_id = p.id) as finals
     from platform.providers p`,
  );
  const keys = await db.query<{ provider_id: string; key_id: string; sha256: string }>(
    `select k.provider_id, k.key_id, k.sha256 from platform.provider_api_keys k
     where k.revoked_at is null`,
  );
  return {
    providers: providers.rows.map((row) => ({
      id: row.id,
      enabled: row.enabled,
      statusMapping: statusMappingFromEntries(row.statuses ?? [], row.finals),
      rateLimit: { perSecond: row.rate_limit_per_second, burst: row.rate_limit_burst },
      pollIntervalSeconds: row.poll_interval_seconds,
      webhookNetworkFees: row.webhook_network_fees,
    })),
    keys: keys.rows.map((row) => ({ providerId: row.provider_id, keyId: row.key_id, sha256: row.sha256 })),
  };
}

/** Everything a partner client and the signed-payload check need for one provider (gateway, poller). */
export interface ProviderSetup {
  readonly client: PartnerClientConfig;
  readonly payloadKeys: PartnerKey[];
  readonly currencies: Record<string, string>;
  readonly statusMapping: StatusMapping;
  readonly enabled: boolean;
  readonly pollIntervalSeconds: number;
  /** Agreed slippage of float swaps that carry none (ratio text), or null. */
  readonly defaultSlippage: string | null;
}

/**
 * Reads one provider's setup. Only a process that calls the partner passes `credentialsFrom` (its own
 * environment): then the stored `${ENV}` references are resolved into client.headers, and one naming an
 * unset variable is refused (UnresolvedCredentialError, naming the variable only). Without it the
 * client has no headers (e.g. the reconciler, which needs only the payload keys).
 */
export async function readProviderSetup(
  db: Db,
  providerId: string,
  credentialsFrom?: NodeJS.ProcessEnv,
): Promise<ProviderSetup | undefined> {
  const r = await db.query<{
    enabled: boolean;
    base_url: string;
    auth_headers: Record<string, string>;
    client_options: Record<string, unknown>;
    poll_interval_seconds: number;
    default_slippage: string | null;
    payload_keys:
      { keyId: string; curve: Curve; publicKey: string; validFrom: string; validTo: string | null }[] | null;
    currencies: Record<string, string> | null;
    statuses: [string, string][] | null;
    finals: string[];
  }>(
    `select p.enabled, p.base_url, p.auth_headers, p.client_options, p.poll_interval_seconds, p.default_slippage,
       (select jsonb_agg(jsonb_build_object('keyId', k.key_id, 'curve', k.curve, 'publicKey', k.public_key,
          'validFrom', k.valid_from, 'validTo', k.valid_to) order by k.valid_from, k.key_id)
          from platform.provider_payload_keys k where k.provider_id = p.id) as payload_keys,
       (select jsonb_object_agg(c.partner_currency_id, c.platform_currency_id)
          from platform.provider_currency_map c where c.provider_id = p.id) as currencies,
       (select jsonb_agg(jsonb_build_array(s.partner_status, s.internal_status))
          from platform.provider_status_map s where s.provider_id = p.id) as statuses,
       array(select f.status from platform.provider_final_statuses f where f.provider_id = p.id) as finals
     from platform.providers p where p.id = $1`,
    [providerId],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  return {
    client: parsePartnerClientConfig(
      {
        provider: providerId,
        baseUrl: row.base_url,
        ...(credentialsFrom
          ? { headers: resolveHeaders(providerId, row.auth_headers, credentialsFrom) }
          : {}),
        ...row.client_options,
      },
      providerId,
    ),
    payloadKeys: (row.payload_keys ?? []).map((k) => ({
      keyId: k.keyId,
      curve: k.curve,
      publicKey: k.publicKey.trim().startsWith('{')
        ? (JSON.parse(k.publicKey) as JsonWebKeyLike)
        : k.publicKey,
      // jsonb renders timestamptz as ISO text with an offset ("2026-01-01T00:00:00+00:00").
      validFrom: k.validFrom,
      ...(k.validTo ? { validTo: k.validTo } : {}),
    })),
    currencies: row.currencies ?? {},
    statusMapping: statusMappingFromEntries(row.statuses ?? [], row.finals),
    enabled: row.enabled,
    pollIntervalSeconds: row.poll_interval_seconds,
    defaultSlippage: row.default_slippage,
  };
}

type JsonWebKeyLike = Exclude<PartnerKey['publicKey'], string>;

/**
 * Checks at start that this process can resolve every enabled provider's credential references: each
 * one it cannot is said (provider, header, variable; never a value). Returns the messages.
 */
export async function checkCredentials(db: Db, logger: Logger, env: NodeJS.ProcessEnv = process.env) {
  const r = await db.query<{ id: string; auth_headers: Record<string, string> }>(
    'select id, auth_headers from platform.providers where enabled order by id',
  );
  const problems: string[] = [];
  for (const row of r.rows) {
    try {
      resolveHeaders(row.id, row.auth_headers, env);
    } catch (e) {
      problems.push((e as Error).message);
      logger.error(
        { provider: row.id, err: e },
        'its auth headers cannot be resolved: its partner calls will fail',
      );
    }
  }
  return problems;
}
