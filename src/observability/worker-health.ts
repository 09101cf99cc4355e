/**
 * A worker's health as its metrics listener's /readyz says it (src/observability/listener.ts): what
 * `up` waits for before it calls a worker ready, and what the console shows per worker.
 */

/** A worker and the base URL of its metrics listener (http://host:port, no path). */
export interface WorkerEndpoint {
  readonly name: string;
  readonly url: string;
}

export type WorkerHealth =
  | { readonly state: 'ready' }
  /** The listener answered, not 200: the failing checks of the /readyz body, or its status. */
  | { readonly state: 'not ready'; readonly reason: string }
  /** Nothing answered (not started, crashed, wrong port) within the timeout. */
  | { readonly state: 'unreachable'; readonly reason: string };

const MAX_REASON = 500;

/** The failing checks of a /readyz body (`{status, checks: [{name, ok, detail}]}`), else its text. */
function notReadyReason(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { checks?: { name?: unknown; ok?: unknown; detail?: unknown }[] };
    const failed = (parsed.checks ?? []).filter((c) => c.ok !== true);
    if (failed.length > 0)
      return failed
        .map((c) => `${String(c.name)}: ${String(c.detail ?? 'failed')}`)
        .join('; ')
        .slice(0, MAX_REASON);
  } catch {
    // Not the listener's JSON: say what came back.
  }
  const text = body.trim().slice(0, MAX_REASON);
  return text ? `HTTP ${status}: ${text}` : `HTTP ${status}`;
}

/** One GET /readyz; never throws. */
export async function readWorkerHealth(baseUrl: string, timeoutMs = 3000): Promise<WorkerHealth> {
  let res: Response;
  try {
    res = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    const reason =
      err.name === 'TimeoutError'
        ? `no answer within ${timeoutMs} ms`
        : (err.cause?.code ?? err.cause?.message ?? err.message);
    return { state: 'unreachable', reason: `${baseUrl}/readyz: ${reason}` };
  }
  const body = await res.text().catch(() => '');
  return res.status === 200
    ? { state: 'ready' }
    : { state: 'not ready', reason: notReadyReason(res.status, body) };
}

/** `name=http://host:port,…` (the console's CONSOLE_WORKER_HEALTH, which `up` writes). */
export function parseWorkerEndpoints(raw: string): WorkerEndpoint[] {
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return list.map((item) => {
    const eq = item.indexOf('=');
    const name = item.slice(0, eq).trim();
    const url = item.slice(eq + 1).trim();
    if (eq <= 0 || !/^[a-z][a-z0-9-]{0,40}$/.test(name))
      throw new Error(`"${item}" is not name=http://host:port (name: lower-case letters, digits, -)`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error(`"${item}": ${url} is not a URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new Error(`"${item}": the URL must use http: or https:`);
    return { name, url: url.replace(/\/+$/, '') };
  });
}

export function formatWorkerEndpoints(endpoints: readonly WorkerEndpoint[]): string {
  return endpoints.map((e) => `${e.name}=${e.url}`).join(',');
}
