import { setTimeout as delay } from 'node:timers/promises';
import { parseRetryAfter } from '../partner/retry.ts';
import type { ExchangeRecord } from './requirement.ts';

/**
 * The thin HTTP layer of certification: unlike PartnerClient it keeps every raw answer (status, headers,
 * body text) as evidence and never retries, except after a 420/429, which it records and then waits
 * out (Retry-After, capped) as the platform would.
 */

export interface Exchange extends ExchangeRecord {
  /** The body parsed as JSON; undefined when it is not JSON. Amounts are judged on `text`, not here. */
  readonly json: unknown;
  readonly text: string;
}

export interface PartnerHttpOptions {
  readonly baseUrl: string;
  /** Auth headers of the registry entry: sent, never recorded. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Per call; longer than the response-time limit so a slow answer is measured, not cut. */
  readonly timeoutMs: number;
  /** Retries after a 420/429. Default 3. */
  readonly rateLimitRetries?: number;
  /** Longest Retry-After honoured. Default 10 s. */
  readonly maxRetryAfterMs?: number;
}

const EXCERPT_CHARS = 600;
const RECORDED_HEADERS = [
  'content-type',
  'retry-after',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];

export class PartnerHttp {
  /** Every exchange, 420/429 answers included, in order. */
  readonly log: Exchange[] = [];
  private readonly baseUrl: string;

  constructor(private readonly options: PartnerHttpOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  async call(
    method: 'GET' | 'POST',
    path: string,
    parts: { query?: Readonly<Record<string, string>>; body?: unknown } = {},
  ): Promise<Exchange> {
    const retries = this.options.rateLimitRetries ?? 3;
    for (let attempt = 0; ; attempt++) {
      const ex = await this.once(method, path, parts);
      this.log.push(ex);
      if ((ex.status !== 420 && ex.status !== 429) || attempt >= retries) return ex;
      const wait = parseRetryAfter(ex.responseHeaders['retry-after'], Date.now()) ?? 1000;
      await delay(Math.min(wait, this.options.maxRetryAfterMs ?? 10_000));
    }
  }

  private async once(
    method: 'GET' | 'POST',
    path: string,
    parts: { query?: Readonly<Record<string, string>>; body?: unknown },
  ): Promise<Exchange> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(parts.query ?? {})) url.searchParams.set(k, v);
    const target = url.pathname.slice(new URL(this.baseUrl).pathname.replace(/\/$/, '').length) + url.search;
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers };
    if (parts.body !== undefined) headers['content-type'] = 'application/json';
    const started = performance.now();
    const base = {
      method,
      target,
      ...(parts.body !== undefined ? { requestBody: parts.body } : {}),
    };
    try {
      const res = await fetch(url, {
        method,
        headers,
        body: parts.body === undefined ? undefined : JSON.stringify(parts.body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
        redirect: 'manual',
      });
      const text = await res.text();
      const ms = Math.round(performance.now() - started);
      const responseHeaders: Record<string, string> = {};
      for (const name of RECORDED_HEADERS) {
        const v = res.headers.get(name);
        if (v !== null) responseHeaders[name] = v;
      }
      let json: unknown;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      return {
        ...base,
        status: res.status,
        responseHeaders,
        responseExcerpt: text.length > EXCERPT_CHARS ? text.slice(0, EXCERPT_CHARS) + '…' : text,
        ms,
        json,
        text,
      };
    } catch (e) {
      const ms = Math.round(performance.now() - started);
      const err = e as Error & { cause?: { code?: string; message?: string } };
      const reason =
        err.name === 'TimeoutError'
          ? `no answer within ${this.options.timeoutMs} ms`
          : `no answer: ${err.cause?.code ?? err.cause?.message ?? err.message}`;
      return {
        ...base,
        responseHeaders: {},
        responseExcerpt: '',
        ms,
        json: undefined,
        text: '',
        error: reason,
      };
    }
  }
}

/** "HTTP 404" or the reason no answer came: for evidence lines. */
export function answerOf(ex: ExchangeRecord): string {
  return ex.status === undefined ? (ex.error ?? 'no answer') : `HTTP ${ex.status}`;
}

/** The JSON object of a 200 answer, or a reason it is not one. */
export function okObject(ex: Exchange): { body: Record<string, unknown> } | { problem: string } {
  if (ex.status !== 200) return { problem: answerOf(ex) };
  if (typeof ex.json !== 'object' || ex.json === null || Array.isArray(ex.json))
    return { problem: ex.text === '' ? 'an empty body' : 'a body that is not a JSON object' };
  return { body: ex.json as Record<string, unknown> };
}
