import { Decimal, isDecimalText } from '../money/decimal.ts';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { platformCurrency } from '../money/currencies.ts';
import { parsePartnerClientConfig, PartnerConfigError, type PartnerClientConfig } from '../partner/config.ts';
import { parsePartnerKeys, parseTimestamp, type PartnerKey } from '../payload/keys.ts';
import {
  DEFAULT_FINAL_STATUSES,
  INTERNAL_STATUSES,
  buildStatusMapping,
  isInternalStatus,
  type InternalStatus,
  type StatusMapping,
} from '../swap/status.ts';
import { looksLikeApiKey, SHA256_HEX } from './api-keys.ts';

/**
 * The provider registry file (YAML, path in PROVIDERS_FILE): one entry per swap partner. It is
 * checked whole at start, every problem listed at once, and loaded into Postgres (src/providers/store.ts).
 * Webhook API keys appear only as SHA-256 digests; partner credentials (client.headers) may be written
 * as `${ENV_VAR}` references so they need not sit in the file in clear. Values are never echoed in
 * problems: only where they are and what is wrong.
 */

export const PROVIDER_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

export const DEFAULT_POLL_INTERVAL_SECONDS = 60;
export const DEFAULT_RATE_LIMIT: RateLimitConfig = { perSecond: 50, burst: 100 };

export interface RateLimitConfig {
  /** Tokens added per second. */
  readonly perSecond: number;
  /** Bucket size: the most requests accepted at once after a quiet period. */
  readonly burst: number;
}

export interface WebhookKeyDefinition {
  readonly keyId: string;
  readonly sha256: string;
  /** Set: the key no longer authenticates (a load never un-revokes a key). */
  readonly revokedAt?: string;
}

export interface ProviderDefinition {
  readonly id: string;
  readonly displayName: string;
  readonly enabled: boolean;
  /** Base URL, auth headers (secret), timeouts, retry, page sizes: as src/partner/config.ts parses them. */
  readonly client: PartnerClientConfig;
  readonly webhookKeys: readonly WebhookKeyDefinition[];
  readonly payloadKeys: readonly PartnerKey[];
  /** Partner currency id -> platform currency id. */
  readonly currencies: Readonly<Record<string, string>>;
  /** The effective mapping (identity defaults, then the file's entries). */
  readonly statusMapping: StatusMapping;
  readonly pollIntervalSeconds: number;
  readonly rateLimit: RateLimitConfig;
  /** Slippage agreed for float swaps that carry none (ratio 0 to 1), or null: a float output below its
   * signed estimate is then UNVERIFIABLE, never a MISMATCH. */
  readonly defaultSlippage: string | null;
  /** The webhook's networkFees: `extra` (default: recorded, never revenue) or `referral` (booked as such). */
  readonly webhookNetworkFees: 'extra' | 'referral';
}

export class ProvidersFileError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid providers file:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ProvidersFileError';
  }
}

const PROVIDER_KEYS = new Set([
  'id',
  'displayName',
  'enabled',
  'client',
  'webhookKeys',
  'payloadKeys',
  'currencies',
  'statusMap',
  'finalStatuses',
  'pollIntervalSeconds',
  'defaultSlippage',
  'webhookNetworkFees',
  'rateLimit',
]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Replaces `${NAME}` references in a header value from the environment; a missing one is a problem. */
function interpolate(value: string, env: NodeJS.ProcessEnv, where: string, problems: string[]): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const v = env[name];
    if (v === undefined || v === '') {
      problems.push(`${where}: environment variable ${name} is not set`);
      return '';
    }
    return v;
  });
}

function parseProvider(
  raw: unknown,
  where: string,
  env: NodeJS.ProcessEnv,
  problems: string[],
): ProviderDefinition | undefined {
  if (!isObject(raw)) {
    problems.push(`${where}: must be a mapping`);
    return undefined;
  }
  const before = problems.length;
  const id = typeof raw.id === 'string' && PROVIDER_ID.test(raw.id) ? raw.id : undefined;
  if (id === undefined)
    problems.push(`${where}.id: must be lower-case letters, digits, '.', '_' or '-' (at most 64)`);
  else where = `${where} (${id})`;
  for (const k of Object.keys(raw)) if (!PROVIDER_KEYS.has(k)) problems.push(`${where}.${k}: unknown key`);

  let displayName = id ?? '';
  if (raw.displayName !== undefined) {
    if (typeof raw.displayName === 'string' && raw.displayName.trim() !== '')
      displayName = raw.displayName.trim();
    else problems.push(`${where}.displayName: must be a non-empty string`);
  }
  let enabled = true;
  if (raw.enabled !== undefined) {
    if (typeof raw.enabled === 'boolean') enabled = raw.enabled;
    else problems.push(`${where}.enabled: must be true or false`);
  }

  // The partner client section: parsed by the partner client's own parser, header references resolved.
  let client: PartnerClientConfig | undefined;
  if (!isObject(raw.client)) problems.push(`${where}.client: must be a mapping with at least baseUrl`);
  else {
    const section: Record<string, unknown> = { ...raw.client, provider: id ?? 'unknown' };
    if (isObject(raw.client.headers)) {
      const headers: Record<string, unknown> = {};
      for (const [name, v] of Object.entries(raw.client.headers))
        headers[name] =
          typeof v === 'string' ? interpolate(v, env, `${where}.client.headers.${name}`, problems) : v;
      section.headers = headers;
    }
    try {
      client = parsePartnerClientConfig(section, `${where}.client`);
    } catch (e) {
      if (!(e instanceof PartnerConfigError)) throw e;
      problems.push(...e.problems);
    }
  }

  const webhookKeys: WebhookKeyDefinition[] = [];
  if (raw.webhookKeys !== undefined) {
    if (!Array.isArray(raw.webhookKeys)) problems.push(`${where}.webhookKeys: must be a list`);
    else {
      const seen = new Set<string>();
      raw.webhookKeys.forEach((k: unknown, i) => {
        const at = `${where}.webhookKeys[${i}]`;
        if (!isObject(k)) return void problems.push(`${at}: must be a mapping with keyId and sha256`);
        for (const name of Object.keys(k))
          if (!['keyId', 'sha256', 'revokedAt'].includes(name)) problems.push(`${at}.${name}: unknown key`);
        const keyId = typeof k.keyId === 'string' && KEY_ID.test(k.keyId) ? k.keyId : undefined;
        if (keyId === undefined) problems.push(`${at}.keyId: must be 1-64 letters, digits, '.', '_' or '-'`);
        else if (seen.has(keyId)) problems.push(`${at}.keyId: ${keyId} appears twice`);
        else seen.add(keyId);
        let sha256: string | undefined;
        if (typeof k.sha256 === 'string' && looksLikeApiKey(k.sha256.trim()))
          problems.push(
            `${at}.sha256: holds an API key in clear; the file takes its SHA-256 digest only (see provider rotate-key)`,
          );
        else if (typeof k.sha256 === 'string' && SHA256_HEX.test(k.sha256.trim().toLowerCase()))
          sha256 = k.sha256.trim().toLowerCase();
        else problems.push(`${at}.sha256: must be a quoted string of 64 hex digits (a SHA-256 digest)`);
        let revokedAt: string | undefined;
        if (k.revokedAt !== undefined) {
          if (typeof k.revokedAt === 'string' && parseTimestamp(k.revokedAt) !== undefined)
            revokedAt = k.revokedAt;
          else problems.push(`${at}.revokedAt: must be an ISO-8601 timestamp with an offset`);
        }
        if (keyId && sha256) webhookKeys.push({ keyId, sha256, ...(revokedAt ? { revokedAt } : {}) });
      });
    }
  }

  const payloadKeys: PartnerKey[] = [];
  if (raw.payloadKeys !== undefined) {
    if (!Array.isArray(raw.payloadKeys)) problems.push(`${where}.payloadKeys: must be a list`);
    else {
      const seen = new Set<string>();
      raw.payloadKeys.forEach((entry: unknown, i) => {
        try {
          const [key] = parsePartnerKeys([entry]);
          if (seen.has(key!.keyId))
            problems.push(`${where}.payloadKeys[${i}]: keyId ${key!.keyId} appears twice`);
          seen.add(key!.keyId);
          payloadKeys.push(key!);
        } catch (e) {
          problems.push(
            `${where}.payloadKeys[${i}]: ${(e as Error).message.replace(/^partner key #0:? ?/, '')}`,
          );
        }
      });
    }
  }

  const currencies: Record<string, string> = {};
  if (raw.currencies !== undefined) {
    if (!isObject(raw.currencies))
      problems.push(`${where}.currencies: must be a mapping of partner currency id to platform currency id`);
    else
      for (const [partnerId, platformId] of Object.entries(raw.currencies)) {
        if (partnerId.trim() === '') problems.push(`${where}.currencies: a partner currency id is empty`);
        else if (typeof platformId !== 'string' || platformCurrency(platformId) === undefined)
          problems.push(
            `${where}.currencies.${partnerId}: ${JSON.stringify(platformId)} is not a platform currency id`,
          );
        else currencies[partnerId] = platformId;
      }
  }

  let finalStatuses: readonly InternalStatus[] = DEFAULT_FINAL_STATUSES;
  if (raw.finalStatuses !== undefined) {
    if (!Array.isArray(raw.finalStatuses) || raw.finalStatuses.length === 0)
      problems.push(`${where}.finalStatuses: must be a non-empty list of internal statuses`);
    else {
      const bad = raw.finalStatuses.filter((s) => !isInternalStatus(s));
      if (bad.length > 0)
        problems.push(
          `${where}.finalStatuses: ${bad.map((s) => JSON.stringify(s)).join(', ')} not among ${INTERNAL_STATUSES.join(', ')}`,
        );
      else finalStatuses = [...new Set(raw.finalStatuses as InternalStatus[])];
    }
  }

  let statusMapping: StatusMapping | undefined;
  const overrides: Record<string, string | null> = {};
  if (raw.statusMap !== undefined && !isObject(raw.statusMap))
    problems.push(`${where}.statusMap: must be a mapping of partner status to internal status (or null)`);
  else if (raw.statusMap !== undefined) {
    for (const [partner, internal] of Object.entries(raw.statusMap)) {
      if (internal === null || isInternalStatus(internal)) overrides[partner] = internal;
      else
        problems.push(
          `${where}.statusMap.${partner}: must be one of ${INTERNAL_STATUSES.join(', ')} or null, got ${JSON.stringify(internal)}`,
        );
    }
  }
  if (problems.length === before) statusMapping = buildStatusMapping(overrides, finalStatuses);

  let pollIntervalSeconds = DEFAULT_POLL_INTERVAL_SECONDS;
  if (raw.pollIntervalSeconds !== undefined) {
    const v = raw.pollIntervalSeconds;
    if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 86_400) pollIntervalSeconds = v;
    else problems.push(`${where}.pollIntervalSeconds: must be a whole number of seconds from 1 to 86400`);
  }

  let rateLimit = DEFAULT_RATE_LIMIT;
  if (raw.rateLimit !== undefined) {
    const r = raw.rateLimit;
    const whole = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 1_000_000;
    if (!isObject(r)) problems.push(`${where}.rateLimit: must be a mapping with perSecond and burst`);
    else {
      for (const k of Object.keys(r))
        if (k !== 'perSecond' && k !== 'burst') problems.push(`${where}.rateLimit.${k}: unknown key`);
      const perSecond = r.perSecond ?? DEFAULT_RATE_LIMIT.perSecond;
      const burst =
        r.burst ?? (whole(perSecond) ? Math.max(DEFAULT_RATE_LIMIT.burst, perSecond as number) : 1);
      if (!whole(perSecond))
        problems.push(`${where}.rateLimit.perSecond: must be a whole number from 1 to 1000000`);
      if (!whole(burst)) problems.push(`${where}.rateLimit.burst: must be a whole number from 1 to 1000000`);
      if (whole(perSecond) && whole(burst))
        rateLimit = { perSecond: perSecond as number, burst: burst as number };
    }
  }

  let defaultSlippage: string | null = null;
  if (raw.defaultSlippage !== undefined && raw.defaultSlippage !== null) {
    const v = raw.defaultSlippage;
    if (isDecimalText(v) && !v.startsWith('-') && new Decimal(v).lte(1)) defaultSlippage = v;
    else problems.push(`${where}.defaultSlippage: must be a ratio from 0 to 1 written as a string ("0.01")`);
  }
  let webhookNetworkFees: 'extra' | 'referral' = 'extra';
  if (raw.webhookNetworkFees !== undefined) {
    if (raw.webhookNetworkFees === 'extra' || raw.webhookNetworkFees === 'referral')
      webhookNetworkFees = raw.webhookNetworkFees;
    else problems.push(`${where}.webhookNetworkFees: must be "extra" or "referral"`);
  }
  if (problems.length > before || id === undefined || client === undefined || statusMapping === undefined)
    return undefined;
  return {
    defaultSlippage,
    webhookNetworkFees,
    id,
    displayName,
    enabled,
    client,
    webhookKeys,
    payloadKeys,
    currencies,
    statusMapping,
    pollIntervalSeconds,
    rateLimit,
  };
}

/** Checks a providers file's text; throws ProvidersFileError listing every problem. */
export function parseProvidersFile(
  text: string,
  options: { source?: string; env?: NodeJS.ProcessEnv } = {},
): ProviderDefinition[] {
  const source = options.source ?? 'providers file';
  const env = options.env ?? process.env;
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new ProvidersFileError([`${source}: not valid YAML (${(e as Error).message.split('\n')[0]})`]);
  }
  if (!isObject(doc) || !Array.isArray(doc.providers))
    throw new ProvidersFileError([`${source}: must be a mapping with a list "providers"`]);
  const problems: string[] = [];
  for (const k of Object.keys(doc)) if (k !== 'providers') problems.push(`${source}: ${k}: unknown key`);
  const out: ProviderDefinition[] = [];
  doc.providers.forEach((raw: unknown, i) => {
    const def = parseProvider(raw, `providers[${i}]`, env, problems);
    if (def) out.push(def);
  });
  // Across providers: ids unique; a digest names one key of one provider (a key alone finds its provider).
  const ids = new Map<string, number>();
  const digests = new Map<string, string>();
  doc.providers.forEach((raw: unknown, i) => {
    const id = isObject(raw) ? raw.id : undefined;
    if (typeof id !== 'string') return;
    if (ids.has(id)) problems.push(`providers[${i}].id: ${id} is also providers[${ids.get(id)}]`);
    else ids.set(id, i);
  });
  for (const def of out)
    for (const k of def.webhookKeys) {
      const other = digests.get(k.sha256);
      if (other !== undefined)
        problems.push(`${def.id}.webhookKeys ${k.keyId}: the same digest is also listed as ${other}`);
      else digests.set(k.sha256, `${def.id}/${k.keyId}`);
    }
  if (problems.length > 0) throw new ProvidersFileError(problems);
  return out;
}

export function readProvidersFile(path: string, env: NodeJS.ProcessEnv = process.env): ProviderDefinition[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ProvidersFileError([
      `${path}: cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    ]);
  }
  return parseProvidersFile(text, { source: path, env });
}
