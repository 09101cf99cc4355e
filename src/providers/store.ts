import type pg from 'pg';
import { inTransaction } from '../db/transaction.ts';
import { readProvidersFile } from './file.ts';
import type { Logger } from '../observability/log.ts';
import { parsePartnerClientConfig, type PartnerClientConfig } from '../partner/config.ts';
import { DEFAULT_FINAL_STATUSES, buildStatusMapping } from '../swap/status.ts';
import { generateApiKey, newKeyId } from './api-keys.ts';
import {
  DEFAULT_POLL_INTERVAL_SECONDS,
  DEFAULT_RATE_LIMIT,
  PROVIDER_ID,
  ProvidersFileError,
  type ProviderDefinition,
} from './file.ts';

/**
 * The provider registry in Postgres (schema `platform`, src/db/schema/platform.ts). The providers file
 * owns what it lists (replaced on every load) except webhook keys, which are only ever added or
 * revoked: `provider rotate-key` adds keys the file does not list, and no load un-revokes a key.
 * Providers absent from the file are left as they are.
 */

/** A pool or a client (inside the caller's transaction). */
export type Db = pg.Pool | pg.ClientBase;

function clientOptionsOf(client: PartnerClientConfig): Record<string, unknown> {
  const { provider: _p, baseUrl: _b, headers: _h, ...rest } = client;
  return rest;
}

async function replaceChildRows(
  client: pg.ClientBase,
  providerId: string,
  def: Pick<ProviderDefinition, 'payloadKeys' | 'currencies' | 'statusMapping'>,
): Promise<void> {
  for (const table of [
    'provider_payload_keys',
    'provider_currency_map',
    'provider_status_map',
    'provider_final_statuses',
  ])
    await client.query(`delete from platform.${table} where provider_id = $1`, [providerId]);
  const pk = def.payloadKeys;
  if (pk.length > 0)
    await client.query(
      `insert into platform.provider_payload_keys (provider_id, key_id, curve, public_key, valid_from, valid_to)
       select $1, * from unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[])`,
      [
        providerId,
        pk.map((k) => k.keyId),
        pk.map((k) => k.curve),
        pk.map((k) => (typeof k.publicKey === 'string' ? k.publicKey : JSON.stringify(k.publicKey))),
        pk.map((k) => k.validFrom),
        pk.map((k) => k.validTo ?? null),
      ],
    );
  const currencies = Object.entries(def.currencies);
  if (currencies.length > 0)
    await client.query(
      `insert into platform.provider_currency_map (provider_id, partner_currency_id, platform_currency_id)
       select $1, * from unnest($2::text[], $3::text[])`,
      [providerId, currencies.map(([p]) => p), currencies.map(([, q]) => q)],
    );
  const statuses = [...def.statusMapping.statuses];
  if (statuses.length > 0)
    await client.query(
      `insert into platform.provider_status_map (provider_id, partner_status, internal_status)
       select $1, * from unnest($2::text[], $3::text[])`,
      [providerId, statuses.map(([p]) => p), statuses.map(([, s]) => s)],
    );
  await client.query(
    `insert into platform.provider_final_statuses (provider_id, status) select $1, unnest($2::text[])`,
    [providerId, [...def.statusMapping.finals]],
  );
}

export interface LoadReport {
  readonly providerId: string;
  readonly keysAdded: number;
  readonly keysRevoked: number;
  readonly activeKeys: number;
}

/**
 * Upserts the file's providers in one transaction. A listed key id whose digest differs from the
 * stored one, or a digest another key already holds, is refused (ProvidersFileError) and nothing is
 * written.
 */
export async function loadProviders(
  pool: pg.Pool,
  defs: readonly ProviderDefinition[],
): Promise<LoadReport[]> {
  return inTransaction(pool, async (client) => {
    // One loader at a time: two processes starting at once load the same file one after the other.
    await client.query(`select pg_advisory_xact_lock(hashtext('swap-ledger:providers:load'))`);
    const digests = defs.flatMap((d) => d.webhookKeys.map((k) => k.sha256));
    const stored = await client.query<{ provider_id: string; key_id: string; sha256: string }>(
      `select provider_id, key_id, sha256 from platform.provider_api_keys
       where sha256 = any($1::text[]) or provider_id = any($2::text[])`,
      [digests, defs.map((d) => d.id)],
    );
    const problems: string[] = [];
    for (const def of defs)
      for (const k of def.webhookKeys)
        for (const row of stored.rows) {
          const sameKey = row.provider_id === def.id && row.key_id === k.keyId;
          if (sameKey && row.sha256 !== k.sha256)
            problems.push(
              `${def.id}.webhookKeys ${k.keyId}: stored with a different digest; give a new key a new keyId`,
            );
          if (!sameKey && row.sha256 === k.sha256)
            problems.push(
              `${def.id}.webhookKeys ${k.keyId}: the same digest is already stored as ${row.provider_id}/${row.key_id}`,
            );
        }
    if (problems.length > 0) throw new ProvidersFileError(problems);

    const reports: LoadReport[] = [];
    for (const def of defs) {
      await client.query(
        `insert into platform.providers as p (id, display_name, enabled, base_url, auth_headers, client_options,
           poll_interval_seconds, rate_limit_per_second, rate_limit_burst, default_slippage,
           webhook_network_fees, managed_by)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'file')
         on conflict (id) do update set display_name = excluded.display_name, enabled = excluded.enabled,
           base_url = excluded.base_url, auth_headers = excluded.auth_headers,
           client_options = excluded.client_options, poll_interval_seconds = excluded.poll_interval_seconds,
           rate_limit_per_second = excluded.rate_limit_per_second, rate_limit_burst = excluded.rate_limit_burst,
           default_slippage = excluded.default_slippage, webhook_network_fees = excluded.webhook_network_fees,
           managed_by = 'file', updated_at = now()`,
        [
          def.id,
          def.displayName,
          def.enabled,
          def.client.baseUrl,
          // As written: `${ENV}` references stay references; each process resolves them (./secrets.ts).
          JSON.stringify(def.headerTemplates),
          JSON.stringify(clientOptionsOf(def.client)),
          def.pollIntervalSeconds,
          def.rateLimit.perSecond,
          def.rateLimit.burst,
          def.defaultSlippage,
          def.webhookNetworkFees,
        ],
      );
      let keysAdded = 0;
      let keysRevoked = 0;
      for (const k of def.webhookKeys) {
        const added = await client.query(
          `insert into platform.provider_api_keys (provider_id, key_id, sha256, revoked_at)
           values ($1, $2, $3, $4) on conflict (provider_id, key_id) do nothing`,
          [def.id, k.keyId, k.sha256, k.revokedAt ?? null],
        );
        keysAdded += added.rowCount ?? 0;
        if (k.revokedAt && added.rowCount === 0) {
          const revoked = await client.query(
            `update platform.provider_api_keys set revoked_at = $3
             where provider_id = $1 and key_id = $2 and revoked_at is null`,
            [def.id, k.keyId, k.revokedAt],
          );
          keysRevoked += revoked.rowCount ?? 0;
        }
      }
      await replaceChildRows(client, def.id, def);
      const active = await client.query<{ n: number }>(
        `select count(*)::int as n from platform.provider_api_keys where provider_id = $1 and revoked_at is null`,
        [def.id],
      );
      reports.push({ providerId: def.id, keysAdded, keysRevoked, activeKeys: active.rows[0]!.n });
    }
    return reports;
  });
}

export class ProviderRegistryError extends Error {
  override name = 'ProviderRegistryError';
}

export interface IssuedKey {
  readonly providerId: string;
  readonly keyId: string;
  /** In clear: print once, never store. */
  readonly key: string;
  /** What the providers file may list for it. */
  readonly sha256: string;
}

async function issueKey(client: pg.ClientBase, providerId: string): Promise<IssuedKey> {
  const { key, sha256 } = generateApiKey();
  const keyId = newKeyId();
  await client.query(
    `insert into platform.provider_api_keys (provider_id, key_id, sha256) values ($1, $2, $3)`,
    [providerId, keyId, sha256],
  );
  return { providerId, keyId, key, sha256 };
}

/** Creates a provider with default mappings and limits, and its first webhook key. */
export async function addProvider(
  pool: pg.Pool,
  input: { id: string; baseUrl: string; displayName?: string; enabled?: boolean },
): Promise<IssuedKey> {
  if (!PROVIDER_ID.test(input.id))
    throw new ProviderRegistryError(
      `provider id must be lower-case letters, digits, '.', '_' or '-' (at most 64)`,
    );
  const client = parsePartnerClientConfig({ provider: input.id, baseUrl: input.baseUrl }, 'provider');
  return inTransaction(pool, async (tx) => {
    const inserted = await tx.query(
      `insert into platform.providers (id, display_name, enabled, base_url, poll_interval_seconds,
         rate_limit_per_second, rate_limit_burst, managed_by)
       values ($1, $2, $3, $4, $5, $6, $7, 'cli') on conflict (id) do nothing`,
      [
        input.id,
        input.displayName ?? input.id,
        input.enabled ?? true,
        client.baseUrl,
        DEFAULT_POLL_INTERVAL_SECONDS,
        DEFAULT_RATE_LIMIT.perSecond,
        DEFAULT_RATE_LIMIT.burst,
      ],
    );
    if (inserted.rowCount === 0) throw new ProviderRegistryError(`provider ${input.id} already exists`);
    await replaceChildRows(tx, input.id, {
      payloadKeys: [],
      currencies: {},
      statusMapping: buildStatusMapping({}, DEFAULT_FINAL_STATUSES),
    });
    return issueKey(tx, input.id);
  });
}

/** Adds a webhook key; the older ones stay valid unless `revokeOld`. */
export async function rotateKey(
  pool: pg.Pool,
  providerId: string,
  options: { revokeOld?: boolean } = {},
): Promise<IssuedKey & { revokedKeyIds: string[] }> {
  return inTransaction(pool, async (tx) => {
    const found = await tx.query(`select 1 from platform.providers where id = $1 for update`, [providerId]);
    if (found.rowCount === 0) throw new ProviderRegistryError(`no provider ${providerId}`);
    let revokedKeyIds: string[] = [];
    if (options.revokeOld) {
      const r = await tx.query<{ key_id: string }>(
        `update platform.provider_api_keys set revoked_at = now()
         where provider_id = $1 and revoked_at is null returning key_id`,
        [providerId],
      );
      revokedKeyIds = r.rows.map((row) => row.key_id).sort();
    }
    return { ...(await issueKey(tx, providerId)), revokedKeyIds };
  });
}

/** Revokes one key (a leaked key is revoked at once, without waiting for a rotation). */
export async function revokeKey(pool: pg.Pool, providerId: string, keyId: string): Promise<boolean> {
  const r = await pool.query(
    `update platform.provider_api_keys set revoked_at = now()
     where provider_id = $1 and key_id = $2 and revoked_at is null`,
    [providerId, keyId],
  );
  return (r.rowCount ?? 0) > 0;
}

/** Loads PROVIDERS_FILE when one is configured: the webhook, gateway and poller do it at start. */
export async function loadProvidersFileIfSet(
  pool: pg.Pool,
  file: string,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  if (!file) return;
  const defs = readProvidersFile(file, env);
  for (const d of defs)
    if (d.literalHeaders.length > 0)
      logger.warn(
        { file, provider: d.id, headers: d.literalHeaders },
        'providers file: header values written in clear (allowLiteralSecrets); they are stored in the registry as written',
      );
  const reports = await loadProviders(pool, defs);
  logger.info({ file, providers: reports.map((r) => r.providerId) }, 'providers file loaded');
}
