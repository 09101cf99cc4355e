import type { PartnerClientOptions } from './client.ts';
import type { RetryPolicy } from './retry.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';

/**
 * The per-provider part of the client options as it appears in configuration (YAML/JSON), checked
 * whole so an operator sees every mistake at once. Header values are secrets: never echoed.
 */
export type PartnerClientConfig = Pick<
  PartnerClientOptions,
  'provider' | 'baseUrl' | 'headers' | 'timeouts' | 'retry' | 'pageLimit' | 'maxPages'
>;

export class PartnerConfigError extends InputRefusedError {
  constructor(readonly problems: string[]) {
    super(`invalid partner configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'PartnerConfigError';
  }
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Set by the client itself; a configured value would break the request.
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'accept']);

export function parsePartnerClientConfig(value: unknown, where = 'partner'): PartnerClientConfig {
  const problems: string[] = [];
  const o = isObject(value) ? value : (problems.push(`${where}: must be a mapping`), {});
  const str = (k: string): string | undefined => {
    const v = o[k];
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
    problems.push(`${where}.${k}: must be a non-empty string`);
    return undefined;
  };
  const int = (obj: Record<string, unknown>, path: string, k: string, min: number): number | undefined => {
    const v = obj[k];
    if (v === undefined) return undefined;
    if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= 2 ** 31 - 1) return v;
    problems.push(`${path}.${k}: must be a whole number >= ${min}`);
    return undefined;
  };

  const provider = str('provider');
  const baseUrl = str('baseUrl');
  if (baseUrl !== undefined) {
    try {
      const u = new URL(baseUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:')
        problems.push(`${where}.baseUrl: must use http or https`);
      // A user:pass@ would be stored and shown wherever the URL is (the console's Operations page, logs).
      if (u.username !== '' || u.password !== '')
        problems.push(
          `${where}.baseUrl: must not carry credentials (user:pass@); send them in a header written as \${ENV_VAR}`,
        );
    } catch {
      problems.push(`${where}.baseUrl: must be a URL`);
    }
  }

  let headers: Record<string, string> | undefined;
  if (o.headers !== undefined) {
    if (!isObject(o.headers)) problems.push(`${where}.headers: must be a mapping of header name to value`);
    else {
      headers = {};
      for (const [name, v] of Object.entries(o.headers)) {
        if (!HEADER_NAME.test(name)) problems.push(`${where}.headers: "${name}" is not a header name`);
        else if (RESERVED_HEADERS.has(name.toLowerCase()))
          problems.push(`${where}.headers: ${name} is set by the client`);
        else if (typeof v !== 'string' || /[\r\n]/.test(v))
          problems.push(`${where}.headers.${name}: must be a one-line string`);
        else headers[name.toLowerCase()] = v;
      }
    }
  }

  let timeouts: PartnerClientConfig['timeouts'];
  if (o.timeouts !== undefined) {
    if (!isObject(o.timeouts)) problems.push(`${where}.timeouts: must be a mapping`);
    else {
      const readMs = int(o.timeouts, `${where}.timeouts`, 'readMs', 1);
      const swapMs = int(o.timeouts, `${where}.timeouts`, 'swapMs', 1);
      timeouts = { ...(readMs !== undefined ? { readMs } : {}), ...(swapMs !== undefined ? { swapMs } : {}) };
    }
  }

  let retry: { -readonly [K in keyof RetryPolicy]?: RetryPolicy[K] } | undefined;
  if (o.retry !== undefined) {
    if (!isObject(o.retry)) problems.push(`${where}.retry: must be a mapping`);
    else {
      retry = {};
      for (const [k, min] of [
        ['maxAttempts', 1],
        ['baseDelayMs', 0],
        ['maxDelayMs', 0],
        ['maxRetryAfterMs', 0],
      ] as const) {
        const v = int(o.retry, `${where}.retry`, k, min);
        if (v !== undefined) retry[k] = v;
      }
    }
  }

  const pageLimit = int(o, where, 'pageLimit', 1);
  const maxPages = int(o, where, 'maxPages', 1);
  const known = new Set(['provider', 'baseUrl', 'headers', 'timeouts', 'retry', 'pageLimit', 'maxPages']);
  for (const k of Object.keys(o)) if (!known.has(k)) problems.push(`${where}.${k}: unknown key`);
  if (problems.length) throw new PartnerConfigError(problems);
  return {
    provider: provider!,
    baseUrl: baseUrl!.replace(/\/+$/, ''),
    ...(headers ? { headers } : {}),
    ...(timeouts ? { timeouts } : {}),
    ...(retry ? { retry } : {}),
    ...(pageLimit !== undefined ? { pageLimit } : {}),
    ...(maxPages !== undefined ? { maxPages } : {}),
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
