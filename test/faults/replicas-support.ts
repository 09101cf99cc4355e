import { createServer, request as httpRequest, type Server } from 'node:http';
import type { EventCodec } from '../../src/events/index.ts';
import { readWholeTopic } from './rig.ts';

// The several-instances scenario's instruments (replicas.faults.spec.ts): a timing proxy and a topic reader.

/** A proxy in front of the simulator that times every GET /status (its swap, when it left, when it came back). */
export async function statusProxy(target: string) {
  const calls: { swapId: string; start: number; end: number }[] = [];
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const swapId =
      req.method === 'GET' && url.pathname.endsWith('/status') ? url.searchParams.get('swapId') : null;
    const start = performance.now();
    const out = httpRequest(
      {
        host: to.hostname,
        port: to.port,
        path: `${to.pathname.replace(/\/$/, '')}${req.url}`,
        method: req.method,
        headers: { ...req.headers, host: to.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('end', () => {
          if (swapId) calls.push({ swapId, start, end: performance.now() });
        });
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}${to.pathname}`,
    calls,
    close: () => new Promise((r) => server.close(r)),
  };
}

/** Pairs of GET /status of one swap whose times overlap (two pollers at once). */
export function overlapping(calls: readonly { swapId: string; start: number; end: number }[]): number {
  const bySwap = new Map<string, { start: number; end: number }[]>();
  for (const c of calls) bySwap.set(c.swapId, [...(bySwap.get(c.swapId) ?? []), c]);
  let n = 0;
  for (const list of bySwap.values()) {
    list.sort((a, b) => a.start - b.start);
    for (let i = 1; i < list.length; i++) if (list[i]!.start < list[i - 1]!.end) n++;
  }
  return n;
}

/** Every message of the topic to its end offsets: the count, each webhook report's amount and each event id, counted. */
export async function readTopic(topic: string, codec: EventCodec) {
  const amounts = new Map<string, number>();
  const ids = new Map<string, number>();
  /** ChainTransactionObserved per looked-up transaction (swap, role, txid). */
  const observed = new Map<string, number>();
  const events = await readWholeTopic(topic, codec, (e) => {
    ids.set(e.eventId, (ids.get(e.eventId) ?? 0) + 1);
    if (e.eventType === 'ChainTransactionObserved') {
      const p = e.payload as { role: string; txid: string };
      const k = `${e.swapId}/${p.role}/${p.txid}`;
      observed.set(k, (observed.get(k) ?? 0) + 1);
    }
    if (e.eventType === 'StatusReported' && e.source === 'webhook' && e.providerId.includes('.load.')) {
      const amount = (e.payload as { amount: string }).amount;
      amounts.set(amount, (amounts.get(amount) ?? 0) + 1);
    }
  });
  return { events, amounts, ids, observed };
}

/**
 * An EVM node that has never seen any transaction (JSON-RPC: null for each, a fixed tip): each watched payout
 * is observed `not_found` once, and observed again only if a look changes something, which nothing does.
 */
export async function emptyEvmNode() {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const parsed = JSON.parse(body || '{}') as
        { id?: number; method?: string } | { id?: number; method?: string }[];
      const answer = (c: { id?: number; method?: string }) => ({
        jsonrpc: '2.0',
        id: c.id ?? null,
        result: c.method === 'eth_blockNumber' ? '0x100' : c.method === 'eth_chainId' ? '0x7a69' : null,
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}
