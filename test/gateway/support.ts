import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { migratePlatform } from '../../src/db/migrate.ts';
import { startGateway, type RunningGateway } from '../../src/gateway/run.ts';
import { startWebhook, type RunningWebhook } from '../../src/ingest/webhook/run.ts';
import { createLogger, type Logger } from '../../src/observability/log.ts';
import {
  startPartnerSimulator,
  type PartnerSimulator,
  type PartnerSimulatorOptions,
} from '../../src/simulator/index.ts';
import { startPoller, type RunningPoller } from '../../src/poller/run.ts';
import { generateApiKey } from '../../src/providers/api-keys.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { freshProjection, testStack, uniqueName } from '../support/context.ts';
import { freePort } from '../support/private-kafka.ts';

/**
 * The whole platform side on the real stack for one test file: a partner simulator (real HTTP) that
 * pushes its webhooks to a real webhook server, the gateway, the poller (ticked by the test), a
 * projector into a fresh schema, all on one events topic. The provider is loaded from a providers file
 * with the simulator's signing key.
 */
export interface Platform {
  readonly sim: PartnerSimulator;
  readonly providerId: string;
  readonly walletKey: string;
  readonly gateway: RunningGateway;
  readonly webhook: RunningWebhook;
  readonly poller: RunningPoller;
  /** Undefined until startProjector() when the platform was started without one. */
  readonly projector: RunningProjector | undefined;
  startProjector(): Promise<void>;
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly topic: string;
  /** Milliseconds added to the gateway's and the poller's clock (to age quotes, to make swaps due). */
  readonly clock: { offsetMs: number };
  stop(): Promise<void>;
}

export async function startPlatform(options: {
  label: string;
  topic: string;
  kafkaBrokers?: string;
  sendTimeoutMs?: number;
  sim?: PartnerSimulatorOptions;
  logger?: Logger;
  /** false: no projector until startProjector() (a test that stops Kafka starts it after). */
  projector?: boolean;
  /** The partner's base URL the gateway is given (a proxy in front of the simulator's). */
  partnerUrl?: (simulatorUrl: string) => Promise<string>;
  /** The provider entry's override of how the webhook's networkFees is read; none: by evidence. */
  webhookNetworkFees?: 'referral' | 'extra';
}): Promise<Platform> {
  const stack = testStack();
  const logger =
    options.logger ?? createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'fatal', name: options.label });
  const providerId = uniqueName(options.label);
  const hookKey = generateApiKey();
  const wallet = generateApiKey();
  const webhookPort = await freePort();
  await migratePlatform(stack.databaseUrl);
  const projection = await freshProjection(options.label.replace(/[^a-z0-9]/g, '_'));
  const sim = await startPartnerSimulator({
    providerId,
    webhook: { url: `http://127.0.0.1:${webhookPort}`, apiKey: hookKey.key },
    ...options.sim,
  });
  const key = sim.partnerKey();
  const partnerUrl = options.partnerUrl ? await options.partnerUrl(sim.url) : sim.url;
  const file = join(mkdtempSync(join(tmpdir(), 'gateway-providers-')), 'providers.yaml');
  writeFileSync(
    file,
    [
      'providers:',
      `  - id: ${providerId}`,
      `    client: { baseUrl: "${partnerUrl}", timeouts: { readMs: 5000, swapMs: 5000 }, retry: { maxAttempts: 2, baseDelayMs: 50 } }`,
      `    webhookKeys: [{ keyId: k1, sha256: "${hookKey.sha256}" }]`,
      `    payloadKeys: [{ keyId: ${key.keyId}, curve: ${key.curve}, publicKey: "${String(key.publicKey)}", validFrom: "${key.validFrom}" }]`,
      '    currencies: { btc: BTC, eth: ETH, ltc: LTC, xrp: XRP, usdt: USDT, sol: SOL, bat: BAT, pol: POL }',
      '    statusMap: { EXCHANGING: PENDING, SENDING: PENDING }',
      // The simulator's webhooks carry the referral fee in networkFees ("referral or extra fee"): read by
      // evidence, the default, unless the test overrides it.
      ...(options.webhookNetworkFees ? [`    webhookNetworkFees: ${options.webhookNetworkFees}`] : []),
      '    pollIntervalSeconds: 1',
      '    rateLimit: { perSecond: 1000, burst: 1000 }',
      '',
    ].join('\n'),
  );
  const brokers = (options.kafkaBrokers ?? stack.kafkaBrokers).split(',');
  const base = {
    DATABASE_URL: stack.databaseUrl,
    KAFKA_BROKERS: brokers,
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    EVENTS_TOPIC: options.topic,
    DLQ_TOPIC: `${options.topic}.dlq`,
    KAFKA_CLIENT_ID: `t-${options.label}`,
    KAFKA_SEND_TIMEOUT_MS: options.sendTimeoutMs ?? 10_000,
    PROJECTION_SCHEMA: projection.schema,
    PROVIDERS_FILE: file,
    PROVIDER_REFRESH_MS: 60_000,
  };
  const stops: (() => Promise<unknown>)[] = [() => sim.close(), () => projection.pool.end()];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    let projector: RunningProjector | undefined;
    const startTheProjector = async () => {
      if (projector) return;
      projector = await startProjector(base, logger);
      stops.push(() => projector!.stop());
    };
    if (options.projector !== false) await startTheProjector();
    const webhook = await startWebhook(
      { ...base, WEBHOOK_HOST: '127.0.0.1', WEBHOOK_PORT: webhookPort, WEBHOOK_BODY_LIMIT_BYTES: 4096 },
      logger,
    );
    stops.push(() => webhook.stop());
    const clock = { offsetMs: 0 };
    const gateway = await startGateway(
      {
        ...base,
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_PORT: 0,
        GATEWAY_API_KEY_DIGESTS: [wallet.sha256],
        GATEWAY_QUOTE_MIN_VALIDITY_MS: 2000,
        GATEWAY_IDEMPOTENCY_LEASE_MS: 3000,
        OUTBOX_RELAY_INTERVAL_MS: 250,
        OUTBOX_RELAY_BATCH: 100,
      },
      logger,
      { now: () => new Date(Date.now() + clock.offsetMs) },
    );
    stops.push(() => gateway.stop());
    const poller = await startPoller(
      {
        ...base,
        POLL_CRON: '* * * * * *',
        POLL_PROVIDERS: [providerId],
        POLL_CONCURRENCY: 4,
        POLL_RATE_PER_SECOND: 100,
        POLL_RATE_BURST: 100,
        POLL_BACKOFF_BASE_MS: 1000,
        POLL_BACKOFF_MAX_MS: 5000,
        POLL_CONFIRM_WINDOW_HOURS: 1,
        POLL_CLOSED_GRACE_HOURS: 168,
        CATALOG_SYNC_CRON: 'off',
      },
      logger,
      { schedule: false, now: () => Date.now() + clock.offsetMs },
    );
    stops.push(() => poller.stop());
    return {
      sim,
      providerId,
      walletKey: wallet.key,
      gateway,
      webhook,
      poller,
      get projector() {
        return projector;
      },
      startProjector: startTheProjector,
      pool: projection.pool,
      schema: projection.schema,
      topic: options.topic,
      clock,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

export interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** One real HTTP call to the gateway. */
export async function api(
  p: Pick<Platform, 'gateway' | 'walletKey'>,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiAnswer> {
  const res = await fetch(`${p.gateway.url}${path}`, {
    method,
    headers: {
      'x-api-key': p.walletKey,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    headers: res.headers,
  };
}

export const nonce = () => randomBytes(32).toString('hex');
export const idempotencyKey = () => `idem-${randomBytes(8).toString('hex')}`;

export const ADDRESSES = {
  payoutAddress: '0xb794f5ea0ba39494ce839613fffba74279579268',
  refundAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
};

/** Polls `check` until it returns a value (not undefined), or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface SwapRow {
  swap_id: string;
  status: string;
  final: boolean;
  amount_to: string | null;
  provider_fees: string | null;
  referral_fees: string | null;
  payout_network_fees: string | null;
  payin_transaction_id: string | null;
  payout_transaction_id: string | null;
  signature_valid: boolean;
  request_id: string;
  quote_ref: string | null;
  webhook_network_fees: string | null;
}

export async function swapRow(pool: pg.Pool, swapId: string): Promise<SwapRow | undefined> {
  const r = await pool.query<SwapRow>(
    `select swap_id, status, final, amount_to, provider_fees, referral_fees, payout_network_fees,
       payin_transaction_id, payout_transaction_id, signature_valid, request_id, quote_ref, webhook_network_fees
       from swaps where swap_id = $1`,
    [swapId],
  );
  return r.rows[0];
}

/** The journal of one swap's StatusReported events, in log order. */
export async function statusJournal(pool: pg.Pool, swapId: string) {
  const r = await pool.query<{
    outcome: string;
    source: string;
    status: string;
    changes: Record<string, [unknown, unknown]> | null;
    reason: string | null;
  }>(
    `select outcome, source, payload->>'status' as status, changes, reason from event_journal
     where swap_id = $1 and event_type = 'StatusReported' order by "offset"`,
    [swapId],
  );
  return r.rows;
}

/** A quote then a swap through the gateway's real HTTP API; the partner's swapId (201, or 502 with one). */
export async function createSwapViaGateway(
  p: Platform,
  method: 'fixed' | 'float',
  options: { slippage?: string; amount?: string } = {},
): Promise<string> {
  const amount = options.amount ?? '0.1';
  const q = await api(p, 'POST', '/v1/quotes', {
    providerId: p.providerId,
    from: 'btc',
    to: 'eth',
    amount,
    ...(method === 'float' ? { tradeMethod: 'float' } : {}),
  });
  if (q.status !== 200) throw new Error(`quote: ${q.status} ${JSON.stringify(q.body)}`);
  const body =
    method === 'fixed'
      ? { tradeMethod: 'fixed', quoteRef: q.body.quoteRef }
      : { tradeMethod: 'float', from: 'btc', to: 'eth', amount, quoteRef: q.body.quoteRef };
  const s = await api(
    p,
    'POST',
    '/v1/swaps',
    {
      providerId: p.providerId,
      ...ADDRESSES,
      nonce: nonce(),
      ...(options.slippage !== undefined ? { slippage: options.slippage } : {}),
      ...body,
    },
    { 'idempotency-key': idempotencyKey() },
  );
  if (s.status !== 201 && s.status !== 502) throw new Error(`swap: ${s.status} ${JSON.stringify(s.body)}`);
  return s.body.swapId as string;
}
