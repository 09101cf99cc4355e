import {
  PartnerCursorLoopError,
  PartnerError,
  PartnerNetworkError,
  PartnerRequestError,
  PartnerResponseError,
  partnerRetryability,
} from './errors.ts';
import { resolveRetryPolicy, withRetry, type Random, type RetryPolicy, type Sleep } from './retry.ts';
import type {
  Currency,
  Page,
  Pair,
  PartnerOperation,
  QuoteRequest,
  QuoteResponse,
  SwapRequestFixed,
  SwapRequestFloat,
  SwapResponse,
  SwapStatus,
} from './types.ts';
import {
  validateCurrencyListResponse,
  validatePairListResponse,
  validateQuoteResponse,
  validateStatusResponse,
  validateSwapResponse,
  swapResponseFeeFindings,
} from './validate.ts';
import { type ValidationContext } from './checker.ts';
import { exchange, type ExchangeTarget, type RequestParts } from './exchange.ts';
import { checkSwapRequest, requireAmount, requireText } from './request-checks.ts';
import {
  inspectProviderSig,
  type PayloadInspector,
  type PayloadKeys,
  type SwapPayloadInspection,
} from './payload-inspection.ts';

/**
 * Typed client of one partner (one instance per provider) for the six operations of interface v2.
 *
 * Retries: reads (/currencies, /pairs, /quote, /status) are retried on network errors, 5xx and 420
 * (after its Retry-After) with capped exponential backoff and full jitter. POST /swap/fixed and
 * POST /swap/float are NEVER retried here: every call creates a new swap at the partner, so a blind
 * retry could create two swaps for one user request. The caller decides (it has the nonce and the
 * SwapRequested record); a PartnerNetworkError with outcomeUnknown tells it a swap may exist.
 */
export interface PartnerClientOptions {
  /** Platform's id of the provider; named in every error. */
  readonly provider: string;
  /** {base_url} of the partner, e.g. https://partner.example/api. */
  readonly baseUrl: string;
  /** Extra headers on every call: the interface does not say how partner endpoints authenticate. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeouts?: {
    /** Per attempt of a read. Default 10 s. */
    readonly readMs?: number;
    /** Of a swap creation (one attempt only). Default 30 s. */
    readonly swapMs?: number;
  };
  readonly retry?: Partial<RetryPolicy>;
  /** `limit` sent on list pages; not sent when undefined (the partner's default applies). */
  readonly pageLimit?: number;
  /** Guard against a partner that never ends its list. Default 10,000. */
  readonly maxPages?: number;
  /** Consecutive empty pages that still name a next cursor before the list is given up. Default 3. */
  readonly maxEmptyPages?: number;
  /** Largest body read. Default 8 MiB. */
  readonly maxBodyBytes?: number;
  /** Error bodies are kept truncated to this many characters. Default 500. */
  readonly maxErrorBodyChars?: number;
  /**
   * Decimals of a partner currency id (through the provider's currency map), where known: a quoted figure
   * with more decimal places than its currency has is refused. Undefined: the precision is not checked.
   */
  readonly currencyDecimals?: (partnerCurrencyId: string) => number | undefined;
  /** The provider's signing-key history (with validity windows) for the signed-payload check. */
  readonly payloadKeys: PayloadKeys;
  /** Replaces the signed-payload check (tests). */
  readonly inspectPayload?: PayloadInspector;
  readonly fetch?: typeof fetch;
  readonly sleep?: Sleep;
  readonly random?: Random;
  readonly now?: () => number;
  /** Called before each retry wait: for logs and metrics. */
  readonly onRetry?: (info: {
    operation: PartnerOperation;
    attempt: number;
    delayMs: number;
    error: unknown;
  }) => void;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

export interface ListOptions extends CallOptions {
  /** Overrides the client's pageLimit. */
  readonly limit?: number;
}

export interface SwapCallOptions extends CallOptions {
  /** The quote a fixed swap was made from: its amount echo is what the signed source amount is checked against. */
  readonly quote?: QuoteResponse;
}

/** A created swap: the partner's answer and what the signed payload says about it. */
export interface CreatedSwap {
  readonly swap: SwapResponse;
  /** Decoded payload, signature verdict and findings; problems are reported here, never thrown. */
  readonly payload: SwapPayloadInspection;
}

const DEFAULT_READ_TIMEOUT_MS = 10_000;
const DEFAULT_SWAP_TIMEOUT_MS = 30_000;

export class PartnerClient {
  readonly provider: string;
  private readonly target: ExchangeTarget;
  private readonly readTimeoutMs: number;
  private readonly swapTimeoutMs: number;
  private readonly policy: RetryPolicy;
  private readonly inspect: PayloadInspector;

  constructor(private readonly options: PartnerClientOptions) {
    if (!options.provider) throw new TypeError('PartnerClient: provider is required');
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`PartnerClient ${options.provider}: baseUrl "${options.baseUrl}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`PartnerClient ${options.provider}: baseUrl must be http or https`);
    }
    this.provider = options.provider;
    this.target = {
      provider: options.provider,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: { ...options.headers },
      fetchImpl: options.fetch ?? fetch,
      maxBodyBytes: options.maxBodyBytes,
      maxErrorBodyChars: options.maxErrorBodyChars,
      now: options.now,
    };
    this.readTimeoutMs = positive(options.timeouts?.readMs ?? DEFAULT_READ_TIMEOUT_MS, 'timeouts.readMs');
    this.swapTimeoutMs = positive(options.timeouts?.swapMs ?? DEFAULT_SWAP_TIMEOUT_MS, 'timeouts.swapMs');
    this.policy = resolveRetryPolicy(options.retry);
    this.inspect = options.inspectPayload ?? inspectProviderSig;
    if (options.pageLimit !== undefined) checkLimit(options.pageLimit, 'pageLimit');
  }

  /** Every page of GET /currencies, following next_cursor until null; a repeated cursor is an error. */
  currencyPages(opts: ListOptions = {}): AsyncGenerator<Page<Currency>> {
    return this.pages('currencies', '/currencies', opts, (body, ctx) => {
      const r = validateCurrencyListResponse(body, ctx);
      return { items: r.currencies, nextCursor: r.next_cursor };
    });
  }

  /** Every currency of every page. */
  async *currencies(opts: ListOptions = {}): AsyncGenerator<Currency> {
    for await (const page of this.currencyPages(opts)) yield* page.items;
  }

  pairPages(opts: ListOptions = {}): AsyncGenerator<Page<Pair>> {
    return this.pages('pairs', '/pairs', opts, (body, ctx) => {
      const r = validatePairListResponse(body, ctx);
      return { items: r.pairs, nextCursor: r.next_cursor };
    });
  }

  async *pairs(opts: ListOptions = {}): AsyncGenerator<Pair> {
    for await (const page of this.pairPages(opts)) yield* page.items;
  }

  /** POST /quote. `amount` is always sent (the schema requires it, fixed quotes included). */
  async quote(request: QuoteRequest, opts: CallOptions = {}): Promise<QuoteResponse> {
    const op = 'quote';
    requireText(this.provider, op, request as unknown as Record<string, unknown>, ['from', 'to']);
    requireAmount(this.provider, op, 'amount', request.amount);
    if (
      request.tradeMethod !== undefined &&
      request.tradeMethod !== 'fixed' &&
      request.tradeMethod !== 'float'
    ) {
      throw new PartnerRequestError(this.provider, op, 'tradeMethod', 'must be "fixed" or "float"');
    }
    const body = await this.read(op, 'POST', '/quote', { body: request, signal: opts.signal });
    const decimals = this.options.currencyDecimals;
    return validateQuoteResponse(body, this.ctx(op), request, {
      from: decimals?.(request.from),
      to: decimals?.(request.to),
    });
  }

  /** POST /swap/fixed. Never retried: each call creates a new swap (see the class comment). */
  async createFixedSwap(request: SwapRequestFixed, opts: SwapCallOptions = {}): Promise<CreatedSwap> {
    const op = 'swap-fixed';
    requireText(this.provider, op, request as unknown as Record<string, unknown>, ['quoteId']);
    checkSwapRequest(this.provider, op, request);
    return this.createSwap(op, '/swap/fixed', request, opts);
  }

  /** POST /swap/float. Never retried: each call creates a new swap (see the class comment). */
  async createFloatSwap(request: SwapRequestFloat, opts: SwapCallOptions = {}): Promise<CreatedSwap> {
    const op = 'swap-float';
    requireAmount(this.provider, op, 'amount', request.amount);
    checkSwapRequest(this.provider, op, request);
    return this.createSwap(op, '/swap/float', request, opts);
  }

  /** GET /status. A 404 is a SwapNotFoundError; the status string itself is never refused here. */
  async status(swapId: string, opts: CallOptions = {}): Promise<SwapStatus> {
    const op = 'status';
    if (typeof swapId !== 'string' || swapId.trim() === '') {
      throw new PartnerRequestError(this.provider, op, 'swapId', 'must be a non-empty string');
    }
    requireText(this.provider, op, { swapId }, ['swapId']);
    const body = await this.read(op, 'GET', '/status', { query: { swapId }, swapId, signal: opts.signal });
    return validateStatusResponse(body, this.ctx(op));
  }

  private async createSwap(
    op: 'swap-fixed' | 'swap-float',
    path: string,
    request: SwapRequestFixed | SwapRequestFloat,
    opts: SwapCallOptions,
  ): Promise<CreatedSwap> {
    // One attempt only: a retry would create a second swap.
    const body = await exchange(
      this.target,
      op,
      'POST',
      path,
      { body: request, signal: opts.signal },
      this.swapTimeoutMs,
    );
    let swap: SwapResponse;
    try {
      swap = validateSwapResponse(body, this.ctx(op));
    } catch (e) {
      if (e instanceof PartnerResponseError) e.received = body;
      throw e;
    }
    let payload: SwapPayloadInspection;
    try {
      payload = await this.inspect({
        tradeMethod: op === 'swap-fixed' ? 'fixed' : 'float',
        request,
        response: swap,
        quote: opts.quote,
        keys: this.options.payloadKeys,
      });
    } catch (e) {
      // The swap exists at the partner whatever its payload says: never lose it to a checker failure.
      payload = {
        signatureValid: false,
        findings: [{ check: 'payload.inspection', outcome: 'unverifiable', detail: (e as Error).message }],
      };
    }
    const feeFindings = swapResponseFeeFindings(body);
    if (feeFindings.length > 0) payload = { ...payload, findings: [...payload.findings, ...feeFindings] };
    return { swap, payload };
  }

  private async *pages<T>(
    op: 'currencies' | 'pairs',
    path: string,
    opts: ListOptions,
    parse: (body: unknown, ctx: ValidationContext) => Page<T>,
  ): AsyncGenerator<Page<T>> {
    const limit = opts.limit ?? this.options.pageLimit;
    if (limit !== undefined) checkLimit(limit, 'limit');
    const maxPages = this.options.maxPages ?? 10_000;
    const maxEmpty = this.options.maxEmptyPages ?? 3;
    const seen = new Set<string>();
    let cursor: string | undefined;
    let empty = 0;
    for (let n = 1; ; n++) {
      const query: Record<string, string> = {};
      if (limit !== undefined) query.limit = String(limit);
      if (cursor !== undefined) query.cursor = cursor;
      const page = parse(await this.read(op, 'GET', path, { query, signal: opts.signal }), this.ctx(op));
      if (page.nextCursor !== null) {
        if (seen.has(page.nextCursor))
          throw new PartnerCursorLoopError(this.provider, op, page.nextCursor, n);
        if (n >= maxPages) {
          throw new PartnerResponseError(
            this.provider,
            op,
            'next_cursor',
            `still not null after ${maxPages} pages`,
          );
        }
        seen.add(page.nextCursor);
        // Fresh cursors on empty pages never repeat, so the loop check above cannot stop them.
        empty = page.items.length === 0 ? empty + 1 : 0;
        if (empty >= maxEmpty) {
          throw new PartnerResponseError(
            this.provider,
            op,
            'next_cursor',
            `${empty} consecutive empty pages still name a next cursor (page ${n}); list given up`,
          );
        }
      }
      yield page;
      if (page.nextCursor === null) return;
      cursor = page.nextCursor;
    }
  }

  /** A read, retried per the policy. */
  private read(
    op: PartnerOperation,
    method: 'GET' | 'POST',
    path: string,
    req: RequestParts,
  ): Promise<unknown> {
    return withRetry(() => exchange(this.target, op, method, path, req, this.readTimeoutMs), {
      policy: this.policy,
      classify: partnerRetryability,
      sleep: this.options.sleep,
      random: this.options.random,
      signal: req.signal,
      onRetry: (info) => this.options.onRetry?.({ operation: op, ...info }),
    });
  }

  private ctx(operation: PartnerOperation): ValidationContext {
    return { provider: this.provider, operation };
  }
}

export function isPartnerError(e: unknown): e is PartnerError {
  return e instanceof PartnerError;
}

function positive(n: number, name: string): number {
  if (!Number.isFinite(n) || n <= 0) throw new RangeError(`PartnerClient: ${name} must be above 0`);
  return n;
}

function checkLimit(n: number, name: string): void {
  if (!Number.isInteger(n) || n < 1 || n > 2 ** 31 - 1)
    throw new RangeError(`PartnerClient: ${name} must be an int32 >= 1`);
}
