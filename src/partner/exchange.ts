import { PartnerNetworkError, PartnerResponseError, partnerErrorFromResponse } from './errors.ts';
import { SpanKind, withSpan } from '../observability/tracing.ts';
import type { PartnerOperation } from './types.ts';

/** One HTTP exchange with a partner: the parsed 2xx JSON body, or a typed PartnerError. No retry here. */

/** Where and how a client talks to its partner. */
export interface ExchangeTarget {
  readonly provider: string;
  /** Without a trailing slash. */
  readonly baseUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly fetchImpl: typeof fetch;
  readonly maxBodyBytes: number | undefined;
  readonly maxErrorBodyChars: number | undefined;
  readonly now: Parameters<typeof partnerErrorFromResponse>[0]['now'];
}

export interface RequestParts {
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly swapId?: string;
  readonly signal?: AbortSignal | undefined;
}

// Codes meaning the request never left this machine, so no swap can exist.
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
  'ERR_INVALID_URL',
]);

/** One HTTP exchange, traced as a `partner <operation>` span (each retry is its own span). */
export function exchange(
  target: ExchangeTarget,
  op: PartnerOperation,
  method: 'GET' | 'POST',
  path: string,
  req: RequestParts,
  timeoutMs: number,
): Promise<unknown> {
  return withSpan(
    `partner ${op}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'swap_ledger.provider': target.provider,
        'swap_ledger.partner_operation': op,
        'http.request.method': method,
        'url.path': path,
      },
    },
    async () => {
      const url = new URL(target.baseUrl + path);
      for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = req.signal ? AbortSignal.any([timeout, req.signal]) : timeout;
      const headers: Record<string, string> = { accept: 'application/json', ...target.headers };
      if (req.body !== undefined) headers['content-type'] = 'application/json';
      let status: number;
      let responseHeaders: Headers;
      let text: string;
      let tooLarge: boolean;
      try {
        const res = await target.fetchImpl(url, {
          method,
          headers,
          body: req.body === undefined ? undefined : JSON.stringify(req.body),
          signal,
          redirect: 'error',
        });
        status = res.status;
        responseHeaders = res.headers;
        ({ text, tooLarge } = await readBody(res, target.maxBodyBytes ?? 8 * 1024 * 1024));
      } catch (e) {
        if (req.signal?.aborted) throw req.signal.reason ?? e; // the caller gave up: not a partner failure
        const timedOut = timeout.aborted;
        const code = errorCode(e);
        throw new PartnerNetworkError(
          target.provider,
          op,
          timedOut,
          timedOut || !NOT_SENT_CODES.has(code ?? ''),
          e,
        );
      }
      if (status < 200 || status > 299) {
        throw partnerErrorFromResponse({
          provider: target.provider,
          operation: op,
          status,
          headers: responseHeaders,
          bodyText: text,
          swapId: req.swapId,
          maxBodyChars: target.maxErrorBodyChars,
          now: target.now,
        });
      }
      if (tooLarge)
        throw new PartnerResponseError(
          target.provider,
          op,
          '',
          'body larger than the configured maximum',
          status,
        );
      try {
        return JSON.parse(text) as unknown;
      } catch (e) {
        const err = new PartnerResponseError(
          target.provider,
          op,
          '',
          `body is not JSON: ${(e as Error).message}`,
          status,
        );
        err.received = text.slice(0, target.maxErrorBodyChars ?? 500);
        throw err;
      }
    },
  );
}

async function readBody(res: Response, maxBytes: number): Promise<{ text: string; tooLarge: boolean }> {
  if (!res.body) return { text: '', tooLarge: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      chunks.push(value.subarray(0, value.byteLength - (size - maxBytes)));
      return { text: new TextDecoder().decode(Buffer.concat(chunks)), tooLarge: true };
    }
    chunks.push(value);
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks)), tooLarge: false };
}

function errorCode(e: unknown): string | undefined {
  for (let cur: unknown = e, depth = 0; cur && depth < 4; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
