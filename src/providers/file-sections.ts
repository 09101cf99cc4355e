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
import { referencedVariables, resolveReferences } from './secrets.ts';

/**
 * One parser per section of a provider entry in the providers file (src/providers/file.ts). Each adds
 * its problems to `problems` (never a value that may be secret) and returns what it could read.
 */

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

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function parseDisplayAndEnabled(
  raw: Record<string, unknown>,
  id: string | undefined,
  where: string,
  problems: string[],
): { displayName: string; enabled: boolean } {
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
  return { displayName, enabled };
}

/**
 * The partner client section, parsed by the partner client's own parser with header references resolved
 * from `env` (so a missing variable is reported at load). `headerTemplates` are the header values as
 * written (lower-case names): what the registry stores.
 */
export function parseClientSection(
  raw: unknown,
  id: string | undefined,
  where: string,
  env: NodeJS.ProcessEnv,
  problems: string[],
  allowLiteralSecrets = false,
):
  | { client: PartnerClientConfig; headerTemplates: Record<string, string>; literalHeaders: string[] }
  | undefined {
  if (!isObject(raw)) {
    problems.push(`${where}.client: must be a mapping with at least baseUrl`);
    return undefined;
  }
  const section: Record<string, unknown> = { ...raw, provider: id ?? 'unknown' };
  const headerTemplates: Record<string, string> = {};
  const literalHeaders: string[] = [];
  if (isObject(raw.headers)) {
    const headers: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(raw.headers)) {
      if (typeof v !== 'string') {
        headers[name] = v;
        continue;
      }
      // A value with no ${ENV_VAR} in it is the secret itself, in this file and in the registry's table.
      if (referencedVariables(v).length === 0) {
        if (allowLiteralSecrets) literalHeaders.push(name.toLowerCase());
        else
          problems.push(
            `${where}.client.headers.${name}: a value written in clear; write it as \${ENV_VAR} (kept out of this file and the database), or set allowLiteralSecrets: true at the top of the file`,
          );
      }
      const { value, missing } = resolveReferences(v, env);
      for (const variable of missing)
        problems.push(`${where}.client.headers.${name}: environment variable ${variable} is not set`);
      headers[name] = value;
      headerTemplates[name.toLowerCase()] = v;
    }
    section.headers = headers;
  }
  try {
    return {
      client: parsePartnerClientConfig(section, `${where}.client`),
      headerTemplates,
      literalHeaders,
    };
  } catch (e) {
    if (!(e instanceof PartnerConfigError)) throw e;
    problems.push(...e.problems);
    return undefined;
  }
}

export function parseWebhookKeys(raw: unknown, where: string, problems: string[]): WebhookKeyDefinition[] {
  const webhookKeys: WebhookKeyDefinition[] = [];
  if (raw === undefined) return webhookKeys;
  if (!Array.isArray(raw)) {
    problems.push(`${where}.webhookKeys: must be a list`);
    return webhookKeys;
  }
  const seen = new Set<string>();
  raw.forEach((k: unknown, i) => {
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
  return webhookKeys;
}

export function parsePayloadKeys(raw: unknown, where: string, problems: string[]): PartnerKey[] {
  const payloadKeys: PartnerKey[] = [];
  if (raw === undefined) return payloadKeys;
  if (!Array.isArray(raw)) {
    problems.push(`${where}.payloadKeys: must be a list`);
    return payloadKeys;
  }
  const seen = new Set<string>();
  raw.forEach((entry: unknown, i) => {
    try {
      const [key] = parsePartnerKeys([entry]);
      if (seen.has(key!.keyId))
        problems.push(`${where}.payloadKeys[${i}]: keyId ${key!.keyId} appears twice`);
      seen.add(key!.keyId);
      payloadKeys.push(key!);
    } catch (e) {
      problems.push(`${where}.payloadKeys[${i}]: ${(e as Error).message.replace(/^partner key #0:? ?/, '')}`);
    }
  });
  return payloadKeys;
}

export function parseCurrencies(raw: unknown, where: string, problems: string[]): Record<string, string> {
  const currencies: Record<string, string> = {};
  if (raw === undefined) return currencies;
  if (!isObject(raw)) {
    problems.push(`${where}.currencies: must be a mapping of partner currency id to platform currency id`);
    return currencies;
  }
  for (const [partnerId, platformId] of Object.entries(raw)) {
    if (partnerId.trim() === '') problems.push(`${where}.currencies: a partner currency id is empty`);
    else if (typeof platformId !== 'string' || platformCurrency(platformId) === undefined)
      problems.push(
        `${where}.currencies.${partnerId}: ${JSON.stringify(platformId)} is not a platform currency id`,
      );
    else currencies[partnerId] = platformId;
  }
  return currencies;
}

/** finalStatuses and statusMap; the mapping is built only when the whole entry had no problem so far. */
export function parseStatusSections(
  raw: Record<string, unknown>,
  where: string,
  problems: string[],
  problemsBefore: number,
): StatusMapping | undefined {
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
  return problems.length === problemsBefore ? buildStatusMapping(overrides, finalStatuses) : undefined;
}

export function parsePollInterval(raw: unknown, where: string, problems: string[]): number {
  if (raw === undefined) return DEFAULT_POLL_INTERVAL_SECONDS;
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 1 && raw <= 86_400) return raw;
  problems.push(`${where}.pollIntervalSeconds: must be a whole number of seconds from 1 to 86400`);
  return DEFAULT_POLL_INTERVAL_SECONDS;
}

export function parseRateLimit(r: unknown, where: string, problems: string[]): RateLimitConfig {
  if (r === undefined) return DEFAULT_RATE_LIMIT;
  const whole = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 1_000_000;
  if (!isObject(r)) {
    problems.push(`${where}.rateLimit: must be a mapping with perSecond and burst`);
    return DEFAULT_RATE_LIMIT;
  }
  for (const k of Object.keys(r))
    if (k !== 'perSecond' && k !== 'burst') problems.push(`${where}.rateLimit.${k}: unknown key`);
  const perSecond = r.perSecond ?? DEFAULT_RATE_LIMIT.perSecond;
  const burst = r.burst ?? (whole(perSecond) ? Math.max(DEFAULT_RATE_LIMIT.burst, perSecond as number) : 1);
  if (!whole(perSecond))
    problems.push(`${where}.rateLimit.perSecond: must be a whole number from 1 to 1000000`);
  if (!whole(burst)) problems.push(`${where}.rateLimit.burst: must be a whole number from 1 to 1000000`);
  if (whole(perSecond) && whole(burst)) return { perSecond: perSecond as number, burst: burst as number };
  return DEFAULT_RATE_LIMIT;
}
