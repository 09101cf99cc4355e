import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { toAtomicUnits } from '../../money/atomic.ts';
import type { PartnerKey } from '../../payload/index.ts';
import { Decimal, formatDecimal, isDecimalText, parseDecimal } from '../../money/decimal.ts';
import {
  MESSAGE_KEY_STATUS,
  RATE_LIMITED_STATUS,
  isDocumentedMessageKey,
  type DecimalText,
  type PartnerOperation,
  type StatusWebhookRequest,
  type TradeMethod,
} from '../types.ts';
import {
  DEFAULT_CURRENCIES,
  DEFAULT_PAIRS,
  wireCurrency,
  wirePair,
  type SimCurrency,
  type SimPair,
} from './catalog.ts';
import {
  isFinalStatusFault,
  isPayloadFault,
  type CallFault,
  type FinalStatusFault,
  type InjectOptions,
  type MalformedVariant,
  type SwapFault,
} from './faults.ts';
import {
  PayloadSigner,
  toPaddedBase64url,
  type SimulatorCurve,
  type SimulatorPublicKey,
  type SwapPayloadFields,
} from './signer.ts';

/**
 * A partner of interface v2 over real HTTP (node:http), for tests and for humans (`swap-ledger sim`).
 * Everything is in memory; every answer can be replaced by an injected fault.
 */

/** What a status string means to the simulator: which fields it fills and whether progression stops. */
export type StatusLike =
  'PENDING' | 'ON_HOLD' | 'PROCESSING' | 'FINISHED' | 'REFUNDED' | 'EXPIRED' | 'UNKNOWN';
/**
 * A status to report: a string (the interface's own names behave as such; any other string behaves as
 * PROCESSING), or a partner-specific string with the behaviour of a known one: `{status:'success', like:'FINISHED'}`.
 */
export type StatusStep = string | { readonly status: string; readonly like: StatusLike };

const FINAL_LIKE: ReadonlySet<StatusLike> = new Set(['FINISHED', 'REFUNDED', 'EXPIRED']);
const KNOWN_LIKE: ReadonlySet<string> = new Set([
  'PENDING',
  'ON_HOLD',
  'PROCESSING',
  'FINISHED',
  'REFUNDED',
  'EXPIRED',
  'UNKNOWN',
]);

/** Paths the random progression picks from; one uses partner-specific strings. */
export const DEFAULT_RANDOM_PATHS: readonly (readonly StatusStep[])[] = [
  ['PENDING', 'FINISHED'],
  ['PENDING', 'EXCHANGING', 'SENDING', 'FINISHED'],
  ['PENDING', 'ON_HOLD', 'FINISHED'],
  ['PENDING', 'ON_HOLD', 'REFUNDED'],
  ['PENDING', 'REFUNDED'],
  ['PENDING', 'EXPIRED'],
];

export interface PartnerSimulatorOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0 (any free port; see `port` of the result). */
  readonly port?: number;
  /** providerId sent in webhooks. Default 'simulator'. */
  readonly providerId?: string;
  /** Curve of a generated signing key. Default secp256k1. */
  readonly curve?: SimulatorCurve;
  /** A fixed signing key (PEM); otherwise one is generated. */
  readonly privateKeyPem?: string;
  readonly currencies?: readonly SimCurrency[];
  readonly pairs?: readonly SimPair[];
  /** Page size when the call gives no `limit`. Default 50. */
  readonly defaultPageSize?: number;
  /** Larger limits are clamped. Default 200. */
  readonly maxPageSize?: number;
  /** Quote validity. Default 10 minutes. */
  readonly quoteTtlMs?: number;
  /** Ratios of the gross output. Defaults 0.005 and 0.0025. */
  readonly fees?: { readonly providerRate?: DecimalText; readonly referralRate?: DecimalText };
  /** Final amount of a float swap relative to its estimate, as a ratio ('-0.01' is 1% less). Default '0'. */
  readonly floatDrift?: DecimalText;
  /** Name of the signature field. Default 'signature'. */
  readonly signatureField?: 'signature' | 'payload_signature' | 'both';
  /** Calls without these exact headers get 401 (a ServerError body). */
  readonly requiredHeaders?: Readonly<Record<string, string>>;
  /** Partner currency ids refused with CURRENCY_REGION_RESTRICTED_ERROR. */
  readonly restrictedCurrencies?: readonly string[];
  /** Source currency ids whose swaps get NO_DEPOSIT_WALLET_ERROR. */
  readonly noDepositWallet?: readonly string[];
  readonly progression?: {
    /** 'manual' (default): only advance() moves a swap; 'poll': each GET /status moves it one step first. */
    readonly advanceOn?: 'manual' | 'poll' | { readonly everyMs: number };
    /** Steps from creation on; the first is the status at creation. Default ['PENDING', 'FINISHED']. */
    readonly script?: readonly StatusStep[] | ((swap: SimSwapView) => readonly StatusStep[]);
    /** Pick each swap's script at random (seeded) from these paths (true: DEFAULT_RANDOM_PATHS). */
    readonly random?: boolean | readonly (readonly StatusStep[])[];
    readonly seed?: number;
  };
  /** How not-yet-known status fields are reported: '' (default) or left out. */
  readonly unknownFields?: 'empty' | 'absent';
  /** Status webhooks to {url}/webhook/{swapId}/status with x-api-key. */
  readonly webhook?: {
    readonly url: string;
    readonly apiKey: string;
    /** Push on every status change. Default true. */
    readonly autoPush?: boolean;
    readonly timeoutMs?: number;
  };
  readonly now?: () => Date;
  /** One line per call, for the CLI. */
  readonly log?: (line: string) => void;
}

/** Fields advance() may set; null clears a field. */
export interface StatusOverrides {
  readonly amount?: DecimalText | null;
  readonly payinTransactionId?: string | null;
  readonly payoutTransactionId?: string | null;
  readonly providerFees?: DecimalText;
  readonly referralFees?: DecimalText;
  readonly payoutNetworkFees?: DecimalText;
}

interface StatusFields {
  amount: DecimalText | undefined;
  payinTransactionId: string | undefined;
  payoutTransactionId: string | undefined;
  providerFees: DecimalText;
  referralFees: DecimalText;
  payoutNetworkFees: DecimalText;
}

export interface SimSwapView {
  readonly swapId: string;
  readonly tradeMethod: TradeMethod;
  readonly quoteId: string | undefined;
  readonly request: Readonly<Record<string, unknown>>;
  /** The 200 body as sent. */
  readonly response: Readonly<Record<string, unknown>>;
  readonly createdAt: string;
  readonly currencyFrom: string;
  readonly currencyTo: string;
  /** Source amount (quote's or request's). */
  readonly amountFrom: DecimalText;
  /** Quoted or estimated output sent to the user. */
  readonly amountTo: DecimalText;
  readonly creationFees: {
    readonly providerFees: DecimalText;
    readonly referralFees: DecimalText;
    readonly payoutNetworkFees: DecimalText;
  };
  readonly signed: {
    readonly payload: string;
    readonly signature: string;
    /** As signed, faults included. */
    readonly fields: SwapPayloadFields;
  };
  readonly faults: readonly SwapFault[];
  readonly status: string;
  readonly like: StatusLike;
  readonly final: boolean;
  /** What GET /status answers now. */
  readonly report: Readonly<Record<string, unknown>>;
  readonly history: readonly { readonly status: string; readonly at: string }[];
}

export interface SimCall {
  readonly operation: PartnerOperation;
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  /** The fault applied, if any. */
  readonly fault?: CallFault;
  /** HTTP status answered; undefined when the connection was dropped. */
  status?: number;
}

export interface WebhookDelivery {
  readonly swapId: string;
  readonly url: string;
  readonly body: StatusWebhookRequest;
  readonly status?: number;
  readonly responseBody?: string;
  readonly error?: string;
}

export interface PartnerSimulator {
  readonly url: string;
  readonly port: number;
  readonly providerId: string;
  readonly publicKey: SimulatorPublicKey;
  readonly signer: PayloadSigner;
  /** The simulator's key as a platform key-registry entry (valid from 2000 on unless told). */
  partnerKey(keyId?: string, validFrom?: string): PartnerKey;
  close(): Promise<void>;
  /** The next matching call(s) of `operation` answer with `fault`. */
  injectFault(operation: PartnerOperation, fault: CallFault, options?: InjectOptions): void;
  /**
   * Swap faults: for the next created swap(s) (default one), or final-status faults for an existing swap.
   * Payload faults need a swap not yet created.
   */
  injectSwapFaults(
    faults: readonly SwapFault[],
    target?: { readonly swapId: string } | { readonly nextSwaps: number },
  ): void;
  clearFaults(): void;
  /** Sets a swap's status (any string, even after a final one: partners misbehave) and pushes a webhook. */
  advance(
    swapId: string,
    status: StatusStep,
    fields?: StatusOverrides,
    options?: { readonly notify?: boolean },
  ): SimSwapView;
  /** Moves a swap one step along its script (no-op once final or at the end); pushes a webhook on change. */
  step(swapId: string): SimSwapView;
  swaps(): SimSwapView[];
  swap(swapId: string): SimSwapView | undefined;
  calls(operation?: PartnerOperation): SimCall[];
  /** Sends the status webhook now; resolves with the platform's answer (never rejects). */
  pushWebhook(swapId: string, overrides?: Partial<StatusWebhookRequest>): Promise<WebhookDelivery>;
  webhookDeliveries(): WebhookDelivery[];
  /** Waits for webhook pushes under way. */
  settled(): Promise<void>;
  setCurrencies(currencies: readonly SimCurrency[]): void;
  setPairs(pairs: readonly SimPair[]): void;
}

interface Quote {
  readonly quoteId: string;
  readonly pair: SimPair;
  readonly tradeMethod: TradeMethod;
  readonly amount: Decimal;
  readonly priced: Priced;
  readonly expiresAt: number;
}

interface Priced {
  readonly amountTo: Decimal;
  readonly providerFees: Decimal;
  readonly referralFees: Decimal;
  readonly payoutNetworkFees: Decimal;
}

interface SwapState {
  readonly swapId: string;
  readonly tradeMethod: TradeMethod;
  readonly quoteId: string | undefined;
  readonly request: Record<string, unknown>;
  response: Record<string, unknown>;
  readonly createdAt: string;
  readonly from: SimCurrency;
  readonly to: SimCurrency;
  readonly amountFrom: Decimal;
  readonly priced: Priced;
  signed: { payload: string; signature: string; fields: SwapPayloadFields };
  readonly faults: Set<SwapFault>;
  script: readonly StatusStep[];
  step: number;
  status: string;
  like: StatusLike;
  fields: StatusFields;
  readonly history: { status: string; at: string }[];
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Raw text instead of JSON. */
  raw?: { text: string; contentType: string };
}

/** Thrown by handlers to answer with an error. */
class Answer extends Error {
  constructor(readonly reply: Reply) {
    super(`HTTP ${reply.status}`);
  }
}

function apiError(
  status: number,
  messageKey: string,
  message: string,
  additionalFields?: Record<string, unknown>,
): Answer {
  return new Answer({
    status,
    body: { messageKey, message, ...(additionalFields ? { additionalFields } : {}) },
  });
}

const ROUTES: Readonly<Record<string, readonly [string, PartnerOperation]>> = {
  '/currencies': ['GET', 'currencies'],
  '/pairs': ['GET', 'pairs'],
  '/quote': ['POST', 'quote'],
  '/swap/fixed': ['POST', 'swap-fixed'],
  '/swap/float': ['POST', 'swap-float'],
  '/status': ['GET', 'status'],
};

const NONCE_HEX = /^[0-9a-fA-F]{64}$/;

export async function startPartnerSimulator(
  options: PartnerSimulatorOptions = {},
): Promise<PartnerSimulator> {
  const sim = new Simulator(options);
  await sim.listen();
  return sim;
}

class Simulator implements PartnerSimulator {
  readonly providerId: string;
  readonly signer: PayloadSigner;
  url = '';
  port = 0;
  private currencies: SimCurrency[];
  private pairs: SimPair[];
  private readonly quotes = new Map<string, Quote>();
  private readonly swapStates = new Map<string, SwapState>();
  private callFaults: {
    operation: PartnerOperation;
    fault: CallFault;
    remaining: number;
    swapId?: string;
  }[] = [];
  private nextSwapFaults: SwapFault[][] = [];
  private readonly callLog: SimCall[] = [];
  private readonly deliveries: WebhookDelivery[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  private readonly closing = new AbortController();
  private readonly server = createServer((req, res) => void this.handle(req, res));
  private ticker: NodeJS.Timeout | undefined;
  private readonly random: () => number;
  private readonly now: () => Date;
  private readonly providerRate: Decimal;
  private readonly referralRate: Decimal;
  private readonly floatDrift: Decimal;

  constructor(private readonly options: PartnerSimulatorOptions) {
    this.providerId = options.providerId ?? 'simulator';
    this.signer = options.privateKeyPem
      ? PayloadSigner.fromPem(options.privateKeyPem)
      : PayloadSigner.generate(options.curve ?? 'secp256k1');
    this.currencies = [...(options.currencies ?? DEFAULT_CURRENCIES)];
    this.pairs = [...(options.pairs ?? DEFAULT_PAIRS)];
    this.random = mulberry32(options.progression?.seed ?? Math.floor(Math.random() * 2 ** 31));
    this.now = options.now ?? (() => new Date());
    this.providerRate = parseDecimal(options.fees?.providerRate ?? '0.005');
    this.referralRate = parseDecimal(options.fees?.referralRate ?? '0.0025');
    this.floatDrift = parseDecimal(options.floatDrift ?? '0');
    if (options.webhook) new URL(options.webhook.url); // fail at start, not at the first push
  }

  get publicKey(): SimulatorPublicKey {
    return this.signer.publicKey;
  }

  partnerKey(
    keyId = `${this.providerId}-${this.signer.curve}`,
    validFrom = '2000-01-01T00:00:00Z',
  ): PartnerKey {
    return { keyId, curve: this.signer.curve, publicKey: this.signer.publicKey.hex, validFrom };
  }

  async listen(): Promise<void> {
    const host = this.options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port ?? 0, host, () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${this.port}`;
    const every = this.options.progression?.advanceOn;
    if (typeof every === 'object') {
      this.ticker = setInterval(() => this.tick(), every.everyMs);
      this.ticker.unref();
    }
  }

  async close(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    this.closing.abort();
    await this.settled();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  injectFault(operation: PartnerOperation, fault: CallFault, options: InjectOptions = {}): void {
    const times = options.times ?? 1;
    if (!(times >= 1)) throw new RangeError('times must be >= 1');
    this.callFaults.push({
      operation,
      fault,
      remaining: times,
      ...(options.swapId ? { swapId: options.swapId } : {}),
    });
  }

  injectSwapFaults(
    faults: readonly SwapFault[],
    target: { swapId: string } | { nextSwaps: number } = { nextSwaps: 1 },
  ): void {
    for (const f of faults)
      if (!isPayloadFault(f) && !isFinalStatusFault(f)) throw new Error(`unknown swap fault "${f}"`);
    if ('swapId' in target) {
      const swap = this.mustSwap(target.swapId);
      const late = faults.filter(isPayloadFault);
      if (late.length)
        throw new Error(`payload faults apply at creation; swap ${swap.swapId} exists: ${late.join(', ')}`);
      for (const f of faults) swap.faults.add(f);
      if (FINAL_LIKE.has(swap.like)) this.applyFinalFaults(swap);
      return;
    }
    for (let i = 0; i < target.nextSwaps; i++) {
      this.nextSwapFaults[i] = [...(this.nextSwapFaults[i] ?? []), ...faults];
    }
  }

  clearFaults(): void {
    this.callFaults = [];
    this.nextSwapFaults = [];
  }

  advance(
    swapId: string,
    status: StatusStep,
    fields?: StatusOverrides,
    options: { notify?: boolean } = {},
  ): SimSwapView {
    const swap = this.mustSwap(swapId);
    this.setStatus(swap, status, fields);
    if (options.notify ?? true) this.autoPush(swap);
    return this.view(swap);
  }

  step(swapId: string): SimSwapView {
    const swap = this.mustSwap(swapId);
    if (this.stepForward(swap)) this.autoPush(swap);
    return this.view(swap);
  }

  swaps(): SimSwapView[] {
    return [...this.swapStates.values()].map((s) => this.view(s));
  }

  swap(swapId: string): SimSwapView | undefined {
    const s = this.swapStates.get(swapId);
    return s && this.view(s);
  }

  calls(operation?: PartnerOperation): SimCall[] {
    return this.callLog.filter((c) => operation === undefined || c.operation === operation);
  }

  webhookDeliveries(): WebhookDelivery[] {
    return [...this.deliveries];
  }

  async settled(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  setCurrencies(currencies: readonly SimCurrency[]): void {
    this.currencies = [...currencies];
  }

  setPairs(pairs: readonly SimPair[]): void {
    this.pairs = [...pairs];
  }

  async pushWebhook(swapId: string, overrides: Partial<StatusWebhookRequest> = {}): Promise<WebhookDelivery> {
    const hook = this.options.webhook;
    if (!hook) throw new Error('simulator started without a webhook URL');
    const swap = this.mustSwap(swapId);
    const body = { ...this.webhookBody(swap), ...overrides } as StatusWebhookRequest;
    const url = `${hook.url.replace(/\/+$/, '')}/webhook/${encodeURIComponent(swapId)}/status`;
    let delivery: WebhookDelivery;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': hook.apiKey },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(hook.timeoutMs ?? 5_000),
      });
      delivery = { swapId, url, body, status: res.status, responseBody: await res.text() };
    } catch (e) {
      delivery = { swapId, url, body, error: (e as Error).message };
    }
    this.deliveries.push(delivery);
    this.options.log?.(`webhook ${swapId} ${body.providerStatus} -> ${delivery.status ?? delivery.error}`);
    return delivery;
  }

  // ---- HTTP ----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const route = ROUTES[url.pathname];
    if (!route) return send(res, { status: 404, body: { message: `no route ${url.pathname}` } });
    const [method, operation] = route;
    if (req.method !== method)
      return send(res, { status: 405, body: { code: 405, message: `use ${method}` } });
    let body: unknown;
    try {
      body = await readJson(req);
    } catch (e) {
      return send(res, {
        status: 400,
        body: { messageKey: 'INVALID_REQUEST_ERROR', message: (e as Error).message },
      });
    }
    const query = Object.fromEntries(url.searchParams);
    // Auth first, so a refused call does not use up an injected fault.
    const unauthorized = Object.entries(this.options.requiredHeaders ?? {}).some(
      ([name, value]) => req.headers[name.toLowerCase()] !== value,
    );
    const fault = unauthorized ? undefined : this.takeFault(operation, query.swapId);
    const call: SimCall = {
      operation,
      method,
      path: url.pathname,
      query,
      headers: { ...req.headers },
      body,
      ...(fault ? { fault } : {}),
    };
    this.callLog.push(call);
    let reply: Reply | 'dropped';
    try {
      reply = unauthorized
        ? { status: 401, body: { code: 401, message: 'unauthorized' } }
        : await this.answer(operation, query, body, fault);
    } catch (e) {
      // A misconfigured fault must answer, not crash the process that hosts the simulator.
      reply = { status: 500, body: { code: 500, message: `simulator: ${(e as Error).message}` } };
    }
    if (reply === 'dropped') {
      req.socket.destroy();
      this.options.log?.(`${method} ${url.pathname} -> dropped`);
      return;
    }
    call.status = reply.status;
    this.options.log?.(
      `${method} ${url.pathname}${url.search} -> ${reply.status}${fault ? ` (fault ${fault.kind})` : ''}`,
    );
    if (!res.destroyed) send(res, reply);
  }

  private async answer(
    operation: PartnerOperation,
    query: Record<string, string>,
    body: unknown,
    fault: CallFault | undefined,
  ): Promise<Reply | 'dropped'> {
    if (fault) {
      const early = this.faultReply(fault, operation);
      if (early) return early;
      if (fault.kind === 'slow') {
        try {
          await delay(fault.delayMs, undefined, { signal: this.closing.signal });
        } catch {
          return 'dropped';
        }
      }
      if (fault.kind === 'drop-connection' && operation !== 'swap-fixed' && operation !== 'swap-float')
        return 'dropped';
    }
    let reply: Reply;
    try {
      reply = { status: 200, body: this.route(operation, query, body, fault) };
    } catch (e) {
      if (e instanceof Answer) return e.reply;
      return { status: 500, body: { code: 500, message: (e as Error).message } };
    }
    if (fault?.kind === 'drop-connection') return 'dropped'; // the swap exists; its creator never hears of it
    if (fault?.kind === 'malformed-body')
      return malformed(reply, operation, fault.variant, fault.field, fault.value);
    return reply;
  }

  private faultReply(fault: CallFault, operation: PartnerOperation): Reply | undefined {
    switch (fault.kind) {
      case 'error-key': {
        const status =
          fault.status ??
          (isDocumentedMessageKey(fault.messageKey) ? MESSAGE_KEY_STATUS[fault.messageKey] : 400);
        let fields = fault.additionalFields;
        if (!fields && fault.messageKey.startsWith('FROM_CURRENCY_M')) {
          fields = { minRequiredAmount: '0.001', maxRequiredAmount: '10' };
        }
        return {
          status,
          body: {
            messageKey: fault.messageKey,
            message: fault.message ?? `simulated ${fault.messageKey} on ${operation}`,
            ...(fields ? { additionalFields: fields } : {}),
          },
        };
      }
      case 'rate-limited': {
        const headers: Record<string, string> = {
          'x-ratelimit-limit': String(fault.limit ?? 100),
          'x-ratelimit-remaining': String(fault.remaining ?? 0),
          'x-ratelimit-reset': String(fault.reset ?? Math.ceil(this.now().getTime() / 1000) + 1),
        };
        if (fault.retryAfter !== null) headers['retry-after'] = fault.retryAfter ?? '0';
        return {
          status: RATE_LIMITED_STATUS,
          headers,
          body: { code: RATE_LIMITED_STATUS, message: 'rate limit exceeded' },
        };
      }
      case 'server-error': {
        const status = fault.status ?? 500;
        if (fault.body === 'text')
          return { status, body: null, raw: { text: 'Internal Server Error', contentType: 'text/plain' } };
        if (fault.body === 'empty')
          return { status, body: null, raw: { text: '', contentType: 'text/plain' } };
        return { status, body: { code: status, message: 'simulated server error' } };
      }
      case 'http-status':
        return {
          status: fault.status,
          body: null,
          raw: { text: fault.body, contentType: fault.contentType ?? 'application/json' },
        };
      default:
        return undefined;
    }
  }

  private takeFault(operation: PartnerOperation, swapId: string | undefined): CallFault | undefined {
    const i = this.callFaults.findIndex(
      (f) => f.operation === operation && (f.swapId === undefined || f.swapId === swapId),
    );
    if (i < 0) return undefined;
    const entry = this.callFaults[i]!;
    if (--entry.remaining <= 0) this.callFaults.splice(i, 1);
    return entry.fault;
  }

  private route(
    operation: PartnerOperation,
    query: Record<string, string>,
    body: unknown,
    fault: CallFault | undefined,
  ): unknown {
    switch (operation) {
      case 'currencies':
        return this.list(this.currencies.map(wireCurrency), 'currencies', query, fault);
      case 'pairs':
        return this.list(this.pairs.map(wirePair), 'pairs', query, fault);
      case 'quote':
        return this.quote(requestObject(body));
      case 'swap-fixed':
        return this.createSwap('fixed', requestObject(body));
      case 'swap-float':
        return this.createSwap('float', requestObject(body));
      case 'status':
        return this.status(query);
    }
  }

  // ---- lists ----

  private list(
    items: unknown[],
    key: string,
    query: Record<string, string>,
    fault: CallFault | undefined,
  ): unknown {
    let limit = this.options.defaultPageSize ?? 50;
    if (query.limit !== undefined) {
      if (!/^\d{1,9}$/.test(query.limit) || query.limit === '0') {
        throw apiError(400, 'INVALID_REQUEST_ERROR', 'limit must be a positive integer');
      }
      limit = Math.min(Number.parseInt(query.limit, 10), this.options.maxPageSize ?? 200);
    }
    let offset = 0;
    if (query.cursor !== undefined) {
      const decoded = Buffer.from(query.cursor, 'base64url').toString('utf8');
      const m = /^o:(\d{1,9})$/.exec(decoded);
      if (!m) throw apiError(400, 'INVALID_CURSOR_ERROR', 'unknown cursor');
      offset = Number.parseInt(m[1]!, 10);
    }
    const end = offset + limit;
    let next: string | null = end < items.length ? Buffer.from(`o:${end}`).toString('base64url') : null;
    if (fault?.kind === 'repeat-cursor' && query.cursor !== undefined) next = query.cursor;
    return { [key]: items.slice(offset, end), next_cursor: next };
  }

  // ---- quotes and swaps ----

  private quote(body: Record<string, unknown>): unknown {
    const from = text(body, 'from');
    const to = text(body, 'to');
    const amount = amountOf(body, 'amount');
    const pair = this.pairs.find((p) => p.from === from && p.to === to);
    const fromC = this.currency(from);
    const toC = this.currency(to);
    if (!pair || !fromC || !toC)
      throw apiError(404, 'SWAP_PAIR_NOT_FOUND_ERROR', `pair ${from}/${to} is not available`);
    this.checkRegion(from, to);
    this.checkLimits(pair, amount);
    const asked = body.tradeMethod;
    let tradeMethod: TradeMethod;
    if (asked === 'fixed' || asked === 'float') {
      if (!pair.tradeMethod.includes(asked))
        throw apiError(400, 'TRADE_METHOD_NOT_SUPPORTED_ERROR', `${asked} is not offered for ${from}/${to}`);
      tradeMethod = asked;
    } else {
      tradeMethod = pair.tradeMethod.includes('fixed') ? 'fixed' : 'float';
    }
    const priced = this.price(pair, fromC, toC, amount);
    const quoteId = `q-${randomUUID()}`;
    const expiresAt = this.now().getTime() + (this.options.quoteTtlMs ?? 600_000);
    this.quotes.set(quoteId, { quoteId, pair, tradeMethod, amount, priced, expiresAt });
    return {
      ...(tradeMethod === 'fixed' ? { quoteId } : {}),
      amount: formatDecimal(amount),
      amountTo: formatDecimal(priced.amountTo),
      providerFees: formatDecimal(priced.providerFees),
      referralFees: formatDecimal(priced.referralFees),
      payoutNetworkFees: formatDecimal(priced.payoutNetworkFees),
      tradeMethod,
      expiry: offsetTimestamp(new Date(expiresAt)),
      defaultSlippage: '0.02',
      minSlippage: '0.005',
      maxSlippage: '0.1',
      minAmountFrom: pair.minSwapAmount,
      maxAmountFrom: pair.maxSwapAmount,
    };
  }

  private createSwap(tradeMethod: TradeMethod, body: Record<string, unknown>): unknown {
    const refundAddress = text(body, 'refundAddress');
    const payoutAddress = text(body, 'payoutAddress');
    const currencyFrom = text(body, 'currencyFrom');
    const currencyTo = text(body, 'currencyTo');
    const payloadCurrencyFrom = text(body, 'payloadCurrencyFrom');
    const payloadCurrencyTo = text(body, 'payloadCurrencyTo');
    const nonce = text(body, 'nonce');
    if (!NONCE_HEX.test(nonce)) throw apiError(400, 'INVALID_REQUEST_ERROR', 'nonce must be 64 hex digits');
    const from = this.currency(currencyFrom);
    if (!from) throw apiError(404, 'CURRENCY_FROM_NOT_FOUND_ERROR', `currency ${currencyFrom} not found`);
    const to = this.currency(currencyTo);
    if (!to) throw apiError(404, 'CURRENCY_TO_NOT_FOUND_ERROR', `currency ${currencyTo} not found`);
    let quoteId: string | undefined;
    let amountFrom: Decimal;
    let priced: Priced;
    if (tradeMethod === 'fixed') {
      quoteId = text(body, 'quoteId');
      const quote = this.quotes.get(quoteId);
      if (!quote || quote.tradeMethod !== 'fixed' || quote.expiresAt <= this.now().getTime()) {
        throw apiError(404, 'SWAP_QUOTE_NOT_FOUND_ERROR', `quote ${quoteId} not found or expired`);
      }
      if (quote.pair.from !== currencyFrom || quote.pair.to !== currencyTo) {
        throw apiError(
          400,
          'QUOTE_CURRENCY_MISMATCH_ERROR',
          `quote ${quoteId} is for ${quote.pair.from}/${quote.pair.to}`,
        );
      }
      amountFrom = quote.amount;
      priced = quote.priced;
    } else {
      amountFrom = amountOf(body, 'amount');
      const pair = this.pairs.find((p) => p.from === currencyFrom && p.to === currencyTo);
      if (!pair)
        throw apiError(
          404,
          'SWAP_PAIR_NOT_FOUND_ERROR',
          `pair ${currencyFrom}/${currencyTo} is not available`,
        );
      if (!pair.tradeMethod.includes('float'))
        throw apiError(400, 'TRADE_METHOD_NOT_SUPPORTED_ERROR', 'float is not offered');
      this.checkLimits(pair, amountFrom);
      priced = this.price(pair, from, to, amountFrom);
    }
    this.checkRegion(currencyFrom, currencyTo);
    if (this.options.noDepositWallet?.includes(currencyFrom)) {
      throw apiError(400, 'NO_DEPOSIT_WALLET_ERROR', `no deposit wallet for ${currencyFrom}`);
    }

    const faults = new Set<SwapFault>(this.nextSwapFaults.shift() ?? []);
    const swapId = randomUUID();
    const payinAddress = address(from);
    const createdAt = this.now().toISOString();
    const nonceBytes = new Uint8Array(Buffer.from(nonce, 'hex'));
    const atomicFrom = atomic(amountFrom, from);
    const atomicTo = atomic(priced.amountTo.plus(priced.payoutNetworkFees), to);
    const fields: SwapPayloadFields = {
      payin_address: faults.has('wrong-payin-address') ? address(from) : payinAddress,
      refund_address: faults.has('wrong-refund-address') ? `${refundAddress}x` : refundAddress,
      refund_extra_id: optionalText(body, 'refundAddressExtraId'),
      payout_address: faults.has('wrong-payout-address') ? address(to) : payoutAddress,
      payout_extra_id: optionalText(body, 'payoutAddressExtraId'),
      currency_from: faults.has('wrong-currency-from')
        ? otherId(payloadCurrencyFrom, payloadCurrencyTo)
        : payloadCurrencyFrom,
      currency_to: faults.has('wrong-currency-to')
        ? otherId(payloadCurrencyTo, payloadCurrencyFrom)
        : payloadCurrencyTo,
      amount_to_provider: faults.has('wrong-source-amount') ? atomicFrom + atomicFrom / 10n + 1n : atomicFrom,
      amount_to_wallet: faults.has('wrong-destination-amount') ? atomicTo + atomicTo / 10n + 1n : atomicTo,
      device_transaction_id_ng: faults.has('wrong-nonce') ? new Uint8Array(randomBytes(32)) : nonceBytes,
    };
    const signed = this.signer.signSwapPayload(fields);
    if (faults.has('invalid-signature')) signed.signature = corrupt(signed.signature);
    const sigField = this.options.signatureField ?? 'signature';
    const providerSig: Record<string, string> = { payload: signed.payload };
    if (sigField !== 'payload_signature') providerSig.signature = signed.signature;
    if (sigField !== 'signature') providerSig.payload_signature = signed.signature;
    const response = {
      swapId,
      payinAddress,
      createdAt,
      providerFees: formatDecimal(priced.providerFees),
      referralFees: formatDecimal(priced.referralFees),
      payoutNetworkFees: formatDecimal(priced.payoutNetworkFees),
      providerSig,
    };
    const state: SwapState = {
      swapId,
      tradeMethod,
      quoteId,
      request: { ...body },
      response,
      createdAt,
      from,
      to,
      amountFrom,
      priced,
      signed: { ...signed, fields },
      faults,
      script: [],
      step: 0,
      status: '',
      like: 'PENDING',
      fields: {
        amount: undefined,
        payinTransactionId: undefined,
        payoutTransactionId: undefined,
        providerFees: response.providerFees,
        referralFees: response.referralFees,
        payoutNetworkFees: response.payoutNetworkFees,
      },
      history: [],
    };
    this.swapStates.set(swapId, state);
    state.script = this.scriptFor(state);
    this.setStatus(state, state.script[0] ?? 'PENDING');
    return response;
  }

  private status(query: Record<string, string>): unknown {
    const swapId = query.swapId;
    if (!swapId) throw apiError(400, 'INVALID_REQUEST_ERROR', 'swapId is required');
    const swap = this.swapStates.get(swapId);
    if (!swap) throw new Answer({ status: 404, body: { message: `transaction ${swapId} not found` } });
    if (this.options.progression?.advanceOn === 'poll' && this.stepForward(swap)) this.autoPush(swap);
    return this.report(swap);
  }

  // ---- status progression ----

  private scriptFor(swap: SwapState): readonly StatusStep[] {
    const p = this.options.progression;
    if (p?.random) {
      const paths = p.random === true ? DEFAULT_RANDOM_PATHS : p.random;
      return paths[Math.floor(this.random() * paths.length)] ?? ['PENDING'];
    }
    if (typeof p?.script === 'function') return p.script(this.view(swap));
    return p?.script ?? ['PENDING', 'FINISHED'];
  }

  private stepForward(swap: SwapState): boolean {
    if (FINAL_LIKE.has(swap.like) || swap.step + 1 >= swap.script.length) return false;
    swap.step++;
    this.setStatus(swap, swap.script[swap.step]!);
    return true;
  }

  private tick(): void {
    for (const swap of this.swapStates.values()) if (this.stepForward(swap)) this.autoPush(swap);
  }

  private setStatus(swap: SwapState, step: StatusStep, overrides?: StatusOverrides): void {
    const status = typeof step === 'string' ? step : step.status;
    const like: StatusLike =
      typeof step === 'string' ? (KNOWN_LIKE.has(step) ? (step as StatusLike) : 'PROCESSING') : step.like;
    swap.status = status;
    swap.like = like;
    swap.history.push({ status, at: this.now().toISOString() });
    const f = swap.fields;
    const evm = isEvm(swap.to);
    if (like !== 'PENDING' && like !== 'UNKNOWN' && like !== 'EXPIRED')
      f.payinTransactionId ??= txHash(isEvm(swap.from));
    if (like === 'FINISHED') {
      f.payoutTransactionId ??= txHash(evm);
      const estimate = swap.priced.amountTo;
      const final = swap.tradeMethod === 'float' ? estimate.times(this.floatDrift.plus(1)) : estimate;
      f.amount = formatDecimal(roundDown(final, swap.to.decimals));
    } else if (like === 'REFUNDED') {
      // The refund goes back in the source coin: no payout hash (the reconciler's REFUNDED rule).
      f.amount = '0';
    } else if (like === 'EXPIRED') {
      f.amount = '0';
    }
    if (FINAL_LIKE.has(like)) this.applyFinalFaults(swap);
    if (overrides) {
      for (const [k, v] of Object.entries(overrides) as [keyof StatusFields, string | null | undefined][]) {
        if (v === undefined) continue;
        (f as unknown as Record<string, string | undefined>)[k] = v === null ? undefined : v;
      }
    }
  }

  private applyFinalFaults(swap: SwapState): void {
    const f = swap.fields;
    const unit = new Decimal(1).div(new Decimal(10).pow(swap.to.decimals));
    for (const fault of swap.faults) {
      if (!isFinalStatusFault(fault)) continue;
      switch (fault satisfies FinalStatusFault) {
        case 'final-amount-below-signed':
          f.amount = formatDecimal(roundDown(swap.priced.amountTo.div(2), swap.to.decimals));
          break;
        case 'fees-differ-from-creation':
          f.providerFees = formatDecimal(swap.priced.providerFees.times(2).plus(unit));
          break;
        case 'missing-payin-hash':
          f.payinTransactionId = undefined;
          break;
        case 'missing-payout-hash':
          f.payoutTransactionId = undefined;
          break;
        case 'missing-final-amount':
          f.amount = undefined;
          break;
      }
    }
  }

  private report(swap: SwapState): Record<string, unknown> {
    const f = swap.fields;
    const absent = this.options.unknownFields === 'absent';
    const known = (v: string | undefined) => (v === undefined ? (absent ? undefined : '') : v);
    const out: Record<string, unknown> = {};
    if (swap.quoteId) out.quoteId = swap.quoteId;
    out.status = swap.status;
    for (const [k, v] of [
      ['amount', known(f.amount)],
      ['payinTransactionId', known(f.payinTransactionId)],
      ['payoutTransactionId', known(f.payoutTransactionId)],
    ] as const) {
      if (v !== undefined) out[k] = v;
    }
    out.providerFees = f.providerFees;
    out.referralFees = f.referralFees;
    out.payoutNetworkFees = f.payoutNetworkFees;
    return out;
  }

  // ---- webhooks ----

  private webhookBody(swap: SwapState): StatusWebhookRequest {
    const f = swap.fields;
    const body: Record<string, string> = { providerId: this.providerId, providerStatus: swap.status };
    // amount is required; before the final amount is known the estimate is sent. A missing-final-amount fault leaves it out.
    const amount =
      f.amount ??
      (swap.faults.has('missing-final-amount') && FINAL_LIKE.has(swap.like)
        ? undefined
        : formatDecimal(swap.priced.amountTo));
    if (amount !== undefined) body.amount = amount;
    body.providerFees = f.providerFees;
    body.networkFees = f.referralFees; // "Referral or extra fee" per the interface
    if (f.payinTransactionId) body.payinTransactionId = f.payinTransactionId;
    if (f.payoutTransactionId) body.transactionHash = f.payoutTransactionId;
    return body as unknown as StatusWebhookRequest;
  }

  private autoPush(swap: SwapState): void {
    if (!this.options.webhook || this.options.webhook.autoPush === false || this.closing.signal.aborted)
      return;
    const p = this.pushWebhook(swap.swapId).finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  // ---- helpers ----

  private currency(id: string): SimCurrency | undefined {
    return this.currencies.find((c) => c.id === id);
  }

  private mustSwap(swapId: string): SwapState {
    const s = this.swapStates.get(swapId);
    if (!s) throw new Error(`simulator has no swap ${swapId}`);
    return s;
  }

  private checkRegion(from: string, to: string): void {
    const restricted = this.options.restrictedCurrencies ?? [];
    const hit = [from, to].find((c) => restricted.includes(c));
    if (hit)
      throw apiError(451, 'CURRENCY_REGION_RESTRICTED_ERROR', `${hit} is not available in your region`);
  }

  private checkLimits(pair: SimPair, amount: Decimal): void {
    const limits = { minRequiredAmount: pair.minSwapAmount, maxRequiredAmount: pair.maxSwapAmount };
    if (amount.lt(parseDecimal(pair.minSwapAmount))) {
      throw apiError(400, 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR', `amount below ${pair.minSwapAmount}`, limits);
    }
    if (amount.gt(parseDecimal(pair.maxSwapAmount))) {
      throw apiError(400, 'FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR', `amount above ${pair.maxSwapAmount}`, limits);
    }
  }

  private price(pair: SimPair, from: SimCurrency, to: SimCurrency, amount: Decimal): Priced {
    try {
      toAtomicUnits(amount, from.decimals);
    } catch {
      throw apiError(400, 'AMOUNT_PRECISION_ERROR', `${from.id} has ${from.decimals} decimals`);
    }
    const gross = amount.times(parseDecimal(pair.rate));
    const providerFees = roundDown(gross.times(this.providerRate), to.decimals);
    const referralFees = roundDown(gross.times(this.referralRate), to.decimals);
    const payoutNetworkFees = parseDecimal(to.networkFee ?? '0');
    const amountTo = roundDown(
      gross.minus(providerFees).minus(referralFees).minus(payoutNetworkFees),
      to.decimals,
    );
    if (!amountTo.gt(0)) {
      throw apiError(400, 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR', 'amount does not cover the fees', {
        minRequiredAmount: pair.minSwapAmount,
        maxRequiredAmount: pair.maxSwapAmount,
      });
    }
    return { amountTo, providerFees, referralFees, payoutNetworkFees };
  }

  private view(s: SwapState): SimSwapView {
    return {
      swapId: s.swapId,
      tradeMethod: s.tradeMethod,
      quoteId: s.quoteId,
      request: { ...s.request },
      response: structuredClone(s.response),
      createdAt: s.createdAt,
      currencyFrom: s.from.id,
      currencyTo: s.to.id,
      amountFrom: formatDecimal(s.amountFrom),
      amountTo: formatDecimal(s.priced.amountTo),
      creationFees: {
        providerFees: formatDecimal(s.priced.providerFees),
        referralFees: formatDecimal(s.priced.referralFees),
        payoutNetworkFees: formatDecimal(s.priced.payoutNetworkFees),
      },
      signed: { payload: s.signed.payload, signature: s.signed.signature, fields: { ...s.signed.fields } },
      faults: [...s.faults],
      status: s.status,
      like: s.like,
      final: FINAL_LIKE.has(s.like),
      report: this.report(s),
      history: s.history.map((h) => ({ ...h })),
    };
  }
}

// ---- free helpers ----

function send(res: ServerResponse, reply: Reply): void {
  const text = reply.raw ? reply.raw.text : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    'content-type': reply.raw ? reply.raw.contentType : 'application/json',
    'content-length': Buffer.byteLength(text),
    ...reply.headers,
  });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 1024 * 1024) throw new Error('body too large');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error('body is not JSON');
  }
}

function requestObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw apiError(400, 'INVALID_REQUEST_ERROR', 'body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

function text(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  if (typeof v !== 'string' || v.trim() === '')
    throw apiError(400, 'INVALID_REQUEST_ERROR', `${key} is required`);
  return v;
}

function optionalText(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  return typeof v === 'string' ? v : '';
}

function amountOf(body: Record<string, unknown>, key: string): Decimal {
  const v = body[key];
  if (!isDecimalText(v) || !parseDecimal(v).gt(0)) {
    throw apiError(400, 'INVALID_REQUEST_ERROR', `${key} must be a positive decimal string`);
  }
  return parseDecimal(v);
}

function roundDown(d: Decimal, decimals: number): Decimal {
  return d.toDecimalPlaces(decimals, Decimal.ROUND_DOWN);
}

function atomic(amount: Decimal, currency: SimCurrency): bigint {
  return toAtomicUnits(roundDown(amount, currency.decimals), currency.decimals);
}

function isEvm(c: SimCurrency): boolean {
  return c.chainId !== undefined || c.blockchain === 'ethereum';
}

function address(c: SimCurrency): string {
  if (isEvm(c)) return '0x' + randomBytes(20).toString('hex');
  if (c.blockchain === 'bitcoin') return 'bc1q' + randomBytes(19).toString('hex').slice(0, 38);
  return `sim${c.id}` + randomBytes(16).toString('hex');
}

function txHash(evm: boolean): string {
  return (evm ? '0x' : '') + randomBytes(32).toString('hex');
}

function otherId(id: string, other: string): string {
  return other !== id ? other : `${id}X`;
}

/** Flips one byte of R: still 64 bytes of base64url, no longer a valid signature. */
function corrupt(signature: string): string {
  const bytes = Buffer.from(signature, 'base64url');
  bytes[5] = bytes[5]! ^ 0x5a;
  return toPaddedBase64url(bytes);
}

/** `<date>T<time>+0000`: the interface's expiry shape, which Date.parse does not read everywhere. */
export function offsetTimestamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, '+0000');
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DEFAULT_MALFORMED_FIELD: Readonly<Record<PartnerOperation, Partial<Record<MalformedVariant, string>>>> =
  {
    currencies: { 'drop-field': 'next_cursor', 'set-field': 'currencies.0.type' },
    pairs: {
      'drop-field': 'pairs.0.minSwapAmount',
      'number-for-decimal': 'pairs.0.minSwapAmount',
      'set-field': 'pairs.0.tradeMethod',
    },
    quote: { 'drop-field': 'amountTo', 'number-for-decimal': 'amountTo', 'set-field': 'expiry' },
    'swap-fixed': {
      'drop-field': 'providerSig',
      'number-for-decimal': 'providerFees',
      'set-field': 'createdAt',
    },
    'swap-float': {
      'drop-field': 'providerSig',
      'number-for-decimal': 'providerFees',
      'set-field': 'createdAt',
    },
    status: { 'drop-field': 'status', 'number-for-decimal': 'providerFees', 'set-field': 'amount' },
  };

const NUMBER_MARK = '\u0000number:';

function malformed(
  reply: Reply,
  op: PartnerOperation,
  variant: MalformedVariant,
  field?: string,
  value?: unknown,
): Reply {
  const json = JSON.stringify(reply.body);
  switch (variant) {
    case 'not-json':
      return {
        status: 200,
        body: null,
        raw: { text: '<html><body>upstream error</body></html>', contentType: 'text/html' },
      };
    case 'truncated-json':
      return {
        status: 200,
        body: null,
        raw: { text: json.slice(0, Math.floor(json.length / 2)), contentType: 'application/json' },
      };
    case 'empty-body':
      return { status: 200, body: null, raw: { text: '', contentType: 'application/json' } };
  }
  const target = field ?? DEFAULT_MALFORMED_FIELD[op][variant];
  if (!target) throw new Error(`malformed-body ${variant} on ${op} needs a field`);
  const path = target.split('.');
  const body = structuredClone(reply.body) as Record<string, unknown>;
  const parent = path
    .slice(0, -1)
    .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], body) as
    Record<string, unknown> | undefined;
  const last = path[path.length - 1]!;
  if (parent && typeof parent === 'object') {
    if (variant === 'drop-field') delete parent[last];
    else if (variant === 'set-field') parent[last] = value ?? 'not-a-valid-value';
    else if (isDecimalText(parent[last])) parent[last] = NUMBER_MARK + parent[last];
  }
  // A bare number in the JSON text without going through JS number: the decimal digits are written as they are.
  const out = JSON.stringify(body).replace(/"\\u0000number:([^"]*)"/g, '$1');
  return { status: 200, body: null, raw: { text: out, contentType: 'application/json' } };
}
