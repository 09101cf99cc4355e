import { ChainSourceError } from './lookup.ts';

/**
 * The one HTTP fetch of the chain clients (Esplora's GETs, the EVM client's JSON-RPC transport): it refuses a
 * redirect (a source's URL is configured whole; a redirect could send a request carrying its API key to
 * another host, or an answer from one) and reads at most `maxBytes` of a body (a source that streams without
 * end must not exhaust the watcher's memory). Both are source errors: looked up again later, counted.
 */
export function boundedFetch(sourceName: string, maxBytes: number) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, { ...init, redirect: 'manual' });
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => undefined);
      throw new ChainSourceError(`${sourceName}: answered a redirect (${res.status}): refused`);
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw new ChainSourceError(
        `${sourceName}: an answer of ${declared} bytes, over ${maxBytes} bytes: refused`,
      );
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (res.body) {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > maxBytes) {
          await reader.cancel().catch(() => undefined);
          throw new ChainSourceError(`${sourceName}: an answer over ${maxBytes} bytes: refused`);
        }
        chunks.push(value);
      }
    }
    return new Response(res.status === 204 || res.status === 205 ? null : Buffer.concat(chunks), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

/** The source error an error carries in its causes (viem wraps what its transport's fetch threw), if any. */
export function sourceErrorIn(e: unknown): ChainSourceError | undefined {
  for (let c: unknown = e, depth = 0; c && depth < 8; c = (c as { cause?: unknown }).cause, depth++)
    if (c instanceof ChainSourceError) return c;
  return undefined;
}
