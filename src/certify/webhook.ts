import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { mapStatus, type StatusMapping } from '../swap/status.ts';
import { apiKeyDigest } from '../providers/api-keys.ts';
import type { CertifyContext } from './context.ts';
import { decimalProblem } from './quote.ts';
import { fail, show, warn, type ExchangeRecord, type Problem } from './requirement.ts';

/**
 * Webhook requirements (with --webhook): certification listens where the platform would and judges what
 * the partner pushes to POST /webhook/{swapId}/status: the key, providerId, amount, a mappable status.
 * It answers as the platform does (401, 404, 422, or 200 queued). The key is never recorded.
 */

export interface WebhookPush {
  readonly swapId: string;
  readonly keyMatches: boolean;
  readonly keyPresent: boolean;
  readonly body: unknown;
  readonly exchange: ExchangeRecord;
}

export function keyMatches(key: string | undefined, digests: readonly string[]): boolean {
  if (!key) return false;
  const digest = apiKeyDigest(key);
  let hit = false;
  for (const d of digests) {
    const want = Buffer.from(d, 'hex');
    if (want.length === digest.length && timingSafeEqual(want, digest)) hit = true;
  }
  return hit;
}

/** The body rules of a StatusWebhookRequest, by requirement. */
export function webhookBodyProblems(
  body: unknown,
  providerId: string,
  mapping: StatusMapping,
): { providerId: Problem[]; amount: Problem[]; status: Problem[] } {
  const out = { providerId: [] as Problem[], amount: [] as Problem[], status: [] as Problem[] };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const p = fail('body', 'a JSON StatusWebhookRequest', show(body));
    return { providerId: [p], amount: [p], status: [p] };
  }
  const o = body as Record<string, unknown>;
  if (o.providerId !== providerId)
    out.providerId.push(fail('providerId', show(providerId), show(o.providerId)));
  const amount = decimalProblem(o, 'amount');
  if (amount) out.amount.push(amount);
  for (const k of ['providerFees', 'networkFees']) {
    const p = decimalProblem(o, k, false);
    if (p) out.amount.push(p);
  }
  if (typeof o.providerStatus !== 'string')
    out.status.push(fail('providerStatus', 'a string', show(o.providerStatus)));
  else if (!mapStatus(mapping, o.providerStatus))
    out.status.push(fail('providerStatus', 'one the status map knows', show(o.providerStatus)));
  return out;
}

const PATH = /^\/webhook\/([^/]+)\/status$/;

export class WebhookListener {
  readonly pushes: WebhookPush[] = [];
  url = '';
  private readonly server: Server;

  constructor(
    private readonly providerId: string,
    private readonly digests: readonly string[],
    private readonly mapping: StatusMapping,
    private readonly knownSwap: (swapId: string) => boolean,
  ) {
    this.server = createServer((req, res) => {
      void this.receive(req).then(({ status, body }) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    });
  }

  async listen(host: string, port: number): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve());
    });
    const { port: bound } = this.server.address() as AddressInfo;
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
    return this.url;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async receive(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const started = performance.now();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size <= 64 * 1024) chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    const path = new URL(req.url ?? '/', 'http://listener').pathname;
    const m = req.method === 'POST' ? PATH.exec(path) : null;
    const rawKey = req.headers['x-api-key'];
    const key = typeof rawKey === 'string' ? rawKey : undefined;
    const matches = keyMatches(key, this.digests);
    let answer: { status: number; body: unknown };
    const swapId = m ? decodeURIComponent(m[1]!) : '';
    if (!m) answer = { status: 404, body: { error: `no route ${req.method} ${path}` } };
    else if (!matches || (body as { providerId?: unknown })?.providerId !== this.providerId)
      answer = { status: 401, body: { error: 'unauthorized' } };
    else if (!this.knownSwap(swapId))
      answer = { status: 404, body: { error: 'no such swap', transactionId: swapId } };
    else {
      const problems = webhookBodyProblems(body, this.providerId, this.mapping);
      answer = [...problems.amount, ...problems.status].length
        ? { status: 422, body: { error: 'status update refused' } }
        : { status: 200, body: { message: 'queued' } };
    }
    if (m)
      this.pushes.push({
        swapId,
        keyPresent: key !== undefined,
        keyMatches: matches,
        body,
        exchange: {
          method: 'POST',
          target: path,
          requestBody: body,
          status: answer.status,
          responseHeaders: {},
          responseExcerpt: JSON.stringify(answer.body),
          ms: Math.round(performance.now() - started),
        },
      });
    return answer;
  }
}

export async function startWebhookListener(ctx: CertifyContext): Promise<WebhookListener | undefined> {
  const where = ctx.options.webhook;
  if (!where) return undefined;
  const listener = new WebhookListener(
    ctx.target.providerId,
    ctx.target.webhookKeyDigests,
    ctx.target.statusMapping,
    (id) => ctx.swaps.some((s) => s.swapId === id),
  );
  const url = await listener.listen(where.host, where.port);
  ctx.options.onListening?.(url);
  return listener;
}

// Each step declares the requirements it judges, in the report's order: the declarations look alike by design.
// Each step declares the requirements it judges, in the report's order: the declarations look alike by design.
export async function certifyWebhooks(
  ctx: CertifyContext,
  listener: WebhookListener | undefined,
): Promise<void> {
  const rReceived = ctx.requirement(
    'webhook.received',
    'webhook',
    'the partner pushes status changes to POST /webhook/{swapId}/status',
  );
  const rKey = ctx.requirement('webhook.key', 'webhook', 'x-api-key is a registered webhook key');
  const rProvider = ctx.requirement('webhook.provider-id', 'webhook', "providerId is the provider's id");
  const rAmount = ctx.requirement(
    'webhook.amount',
    'webhook',
    'amount present as a decimal string (fees too when sent)',
  );
  const rStatus = ctx.requirement('webhook.status', 'webhook', 'providerStatus is one the status map knows');
  const all = [rReceived, rKey, rProvider, rAmount, rStatus];
  if (!listener) {
    for (const r of all) r.skip('needs --webhook');
    return;
  }
  const deadline = Date.now() + (ctx.options.webhookWaitMs ?? 30_000);
  const pushedFor = () => new Set(listener.pushes.map((p) => p.swapId));
  while (Date.now() < deadline && ctx.swaps.some((s) => !pushedFor().has(s.swapId)) && ctx.swaps.length > 0)
    await delay(200);
  if (ctx.swaps.length === 0 && listener.pushes.length === 0)
    await delay(Math.min(1000, Math.max(0, deadline - Date.now())));

  const pushes = listener.pushes;
  if (pushes.length === 0) {
    rReceived.problem(
      warn(
        'pushes',
        `at least one within ${Math.round((ctx.options.webhookWaitMs ?? 30_000) / 1000)} s at ${listener.url}`,
        'none',
      ),
    );
    for (const r of all.slice(1)) r.skip('no push received');
    return;
  }
  const known = pushes.filter((p) => ctx.swaps.some((s) => s.swapId === p.swapId));
  rReceived.judge(
    pushes
      .filter((p) => !known.includes(p))
      .map((p) => warn(`push for ${p.swapId}`, 'a swap created by this run', 'unknown swapId')),
    `${pushes.length} push(es) for ${pushedFor().size} swap(s)`,
    pushes[0]!.exchange,
  );
  if (ctx.target.webhookKeyDigests.length === 0) rKey.skip('the registry entry lists no webhook key');
  for (const p of pushes) {
    const label = `push for ${p.swapId}`;
    if (ctx.target.webhookKeyDigests.length > 0)
      rKey.judge(
        p.keyMatches
          ? []
          : [
              fail(
                `${label}: x-api-key`,
                'a key whose SHA-256 is listed in webhookKeys',
                p.keyPresent ? 'a key not listed' : 'absent',
              ),
            ],
        `${label}: key registered`,
        p.exchange,
      );
    const problems = webhookBodyProblems(p.body, ctx.target.providerId, ctx.target.statusMapping);
    const tag = (ps: Problem[]) => ps.map((x) => ({ ...x, what: `${label}: ${x.what}` }));
    rProvider.judge(tag(problems.providerId), `${label}: providerId`, p.exchange);
    rAmount.judge(
      tag(problems.amount),
      `${label}: amount ${show((p.body as { amount?: unknown })?.amount)}`,
      p.exchange,
    );
    rStatus.judge(
      tag(problems.status),
      `${label}: ${show((p.body as { providerStatus?: unknown })?.providerStatus)}`,
      p.exchange,
    );
  }
}
