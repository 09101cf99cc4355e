import { Decimal, isDecimalText } from '../money/decimal.ts';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { PartnerClientConfig } from '../partner/config.ts';
import type { PartnerKey } from '../payload/keys.ts';
import type { StatusMapping } from '../swap/status.ts';
import { WEBHOOK_NETWORK_FEES, type WebhookNetworkFees } from '../swap/report.ts';
import {
  isObject,
  parseClientSection,
  parseCurrencies,
  parseDisplayAndEnabled,
  parsePayloadKeys,
  parsePollInterval,
  parseRateLimit,
  parseStatusSections,
  parseWebhookKeys,
  type RateLimitConfig,
  type WebhookKeyDefinition,
} from './file-sections.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';
import { parseStatementLayout, type StatementLayout } from '../monthend/layout.ts';

export {
  DEFAULT_POLL_INTERVAL_SECONDS,
  DEFAULT_RATE_LIMIT,
  type RateLimitConfig,
  type WebhookKeyDefinition,
} from './file-sections.ts';

/**
 * The provider registry file (YAML, path in PROVIDERS_FILE): one entry per swap partner. It is
 * checked whole at start, every problem listed at once, and loaded into Postgres (src/providers/store.ts).
 * Webhook API keys appear only as SHA-256 digests; partner credentials (client.headers) are written as
 * `${ENV_VAR}` references so they never sit in the file or the database in clear: they are checked against
 * this process's environment here, stored as references, and resolved by each process (./secrets.ts). A
 * value with no reference is refused unless the file says `allowLiteralSecrets: true` (then each load warns);
 * a baseUrl with credentials (user:pass@) is refused.
 * Values are never echoed in problems: only where they are and what is wrong.
 */

export const PROVIDER_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export interface ProviderDefinition {
  readonly id: string;
  readonly displayName: string;
  readonly enabled: boolean;
  /** Base URL, auth headers (resolved: secret), timeouts, retry, page sizes: as src/partner/config.ts parses them. */
  readonly client: PartnerClientConfig;
  /** Header values as written, `${ENV}` references unresolved (lower-case names): what the registry stores. */
  readonly headerTemplates: Readonly<Record<string, string>>;
  /** Headers whose value is written in clear (no reference), accepted only under allowLiteralSecrets: warned of. */
  readonly literalHeaders: readonly string[];
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
  /**
   * How the webhook's networkFees is read: `evidence` (default: against the referral fee the partner committed
   * to, by the reconciler), or an override: `referral` (booked as such) or `extra` (recorded, never revenue).
   */
  readonly webhookNetworkFees: WebhookNetworkFees;
  /** How the partner's monthly statement is laid out (src/monthend/layout.ts); absent: the default layout. */
  readonly statementLayout?: StatementLayout;
}

export class ProvidersFileError extends InputRefusedError {
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
  'statementLayout',
]);

/** One provider entry: each section parsed by its own parser (./file-sections.ts). */
function parseProvider(
  raw: unknown,
  where: string,
  env: NodeJS.ProcessEnv,
  problems: string[],
  allowLiteralSecrets: boolean,
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

  const { displayName, enabled } = parseDisplayAndEnabled(raw, id, where, problems);
  const client = parseClientSection(raw.client, id, where, env, problems, allowLiteralSecrets);
  const webhookKeys = parseWebhookKeys(raw.webhookKeys, where, problems);
  const payloadKeys: PartnerKey[] = parsePayloadKeys(raw.payloadKeys, where, problems);
  const currencies = parseCurrencies(raw.currencies, where, problems);
  const statusMapping: StatusMapping | undefined = parseStatusSections(raw, where, problems, before);
  const pollIntervalSeconds = parsePollInterval(raw.pollIntervalSeconds, where, problems);
  const rateLimit: RateLimitConfig = parseRateLimit(raw.rateLimit, where, problems);

  let defaultSlippage: string | null = null;
  if (raw.defaultSlippage !== undefined && raw.defaultSlippage !== null) {
    const v = raw.defaultSlippage;
    if (isDecimalText(v) && !v.startsWith('-') && new Decimal(v).lte(1)) defaultSlippage = v;
    else problems.push(`${where}.defaultSlippage: must be a ratio from 0 to 1 written as a string ("0.01")`);
  }
  let webhookNetworkFees: WebhookNetworkFees = 'evidence';
  if (raw.webhookNetworkFees !== undefined) {
    const v = WEBHOOK_NETWORK_FEES.find((m) => m === raw.webhookNetworkFees);
    if (v) webhookNetworkFees = v;
    else problems.push(`${where}.webhookNetworkFees: must be "evidence", "referral" or "extra"`);
  }
  const statementLayout = parseStatementLayout(raw.statementLayout, where, problems);
  if (problems.length > before || id === undefined || client === undefined || statusMapping === undefined)
    return undefined;
  const clientConfig: PartnerClientConfig = client.client;
  return {
    defaultSlippage,
    webhookNetworkFees,
    id,
    displayName,
    enabled,
    client: clientConfig,
    headerTemplates: client.headerTemplates,
    literalHeaders: client.literalHeaders,
    webhookKeys,
    payloadKeys,
    currencies,
    statusMapping,
    pollIntervalSeconds,
    rateLimit,
    ...(statementLayout ? { statementLayout } : {}),
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
  for (const k of Object.keys(doc))
    if (k !== 'providers' && k !== 'allowLiteralSecrets') problems.push(`${source}: ${k}: unknown key`);
  // The explicit opt-in to header values in clear (a test bench, a demo); every load then warns of each.
  const allowLiteralSecrets = doc.allowLiteralSecrets === true;
  if (doc.allowLiteralSecrets !== undefined && typeof doc.allowLiteralSecrets !== 'boolean')
    problems.push(`${source}: allowLiteralSecrets: must be true or false`);
  const out: ProviderDefinition[] = [];
  doc.providers.forEach((raw: unknown, i) => {
    const def = parseProvider(raw, `providers[${i}]`, env, problems, allowLiteralSecrets);
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
