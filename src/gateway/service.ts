import type pg from 'pg';
import { checkAgainstCatalog, findPair, lastSync, readCurrencies, readPairs } from '../catalog/index.ts';
import { uuidv7 } from '../events/ids.ts';
import type { CreationFailureKind, QuoteTerms, SwapEvent, SwapRequest } from '../events/types.ts';
import type { Logger } from '../observability/log.ts';
import { OutboxWriteError, type DurablePublisher, type PublishPath } from '../outbox/outbox.ts';
import type { CreatedSwap } from '../partner/client.ts';
import {
  PartnerApiError,
  PartnerError,
  PartnerHttpError,
  PartnerNetworkError,
  PartnerRequestError,
  PartnerResponseError,
  RateLimitedError,
} from '../partner/errors.ts';
import type { QuoteResponse, SwapRequestFixed, SwapRequestFloat, TradeMethod } from '../partner/types.ts';
import type { ProviderPartner } from '../providers/clients.ts';
import {
  blockingFindings,
  quoteReceivedEvent,
  quoteRejectedEvent,
  quoteTerms,
  swapCreatedEvent,
  swapCreationFailedEvent,
  swapRequestedEvent,
  visibleStrings,
} from './events.ts';
import {
  claimIdempotency,
  completeIdempotency,
  idempotencyDecision,
  readIdempotency,
  releaseIdempotency,
  requestFingerprint,
  type IdempotencyDecision,
} from './idempotency.ts';
import { createdSwapAnswer, outcomeUnknownAnswer, type Answer } from './answers.ts';
import { recordCreatedSwap } from './created.ts';
import { quoteAmountToFinding } from './quote-check.ts';
import { outcomeFromOutbox } from './settle.ts';
import type { GatewayMetrics } from './metrics.ts';
import { readQuote, saveQuote } from './quotes.ts';
import {
  checkQuoteBody,
  checkQuoteForSwap,
  checkSlippage,
  checkSwapShape,
  type Refusal,
  type StoredQuote,
  type SwapBody,
} from './rules.ts';

export type { Answer } from './answers.ts';

export interface GatewayServiceDeps {
  readonly pool: pg.Pool;
  readonly partners: { get(providerId: string): Promise<ProviderPartner | undefined> };
  readonly publisher: Pick<DurablePublisher, 'publish' | 'publishWith'>;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  readonly now: () => Date;
  /** A fixed quote expiring sooner than this is refused for a swap. */
  readonly quoteMinValidityMs: number;
  /** An Idempotency-Key in progress longer than this has an unknown outcome. Default 2 minutes. */
  readonly idempotencyLeaseMs?: number;
}

export interface QuoteBody {
  readonly providerId: string;
  readonly from: string;
  readonly to: string;
  readonly amount: string;
  readonly tradeMethod?: TradeMethod;
}

function refusal(r: Refusal): Answer {
  return {
    status: r.status,
    reason: r.reason,
    body: {
      error: r.error,
      ...(r.messageKey ? { messageKey: r.messageKey } : {}),
      ...(r.additionalFields && Object.keys(r.additionalFields).length > 0
        ? { additionalFields: r.additionalFields }
        : {}),
    },
  };
}

/** How a partner failure is recorded and answered. */
interface PartnerFailure {
  readonly answer: Answer;
  readonly kind: CreationFailureKind;
  readonly httpStatus: number | null;
  readonly errorKey: string | null;
  readonly message: string;
  readonly additionalFields?: Readonly<Record<string, unknown>>;
}

/**
 * The gateway's answer to a partner failure: the partner's own key for documented refusals. Partner text
 * in it is made visible (visibleStrings): the answer is stored with the Idempotency-Key (jsonb).
 */
export function partnerFailure(e: PartnerError): PartnerFailure {
  return visibleStrings(rawPartnerFailure(e));
}

function rawPartnerFailure(e: PartnerError): PartnerFailure {
  const base = { httpStatus: e.httpStatus ?? null, message: e.message };
  if (e instanceof PartnerApiError) {
    const status =
      e.httpStatus !== undefined && e.httpStatus >= 400 && e.httpStatus < 500 ? e.httpStatus : 502;
    return {
      ...base,
      kind: 'partner_error',
      errorKey: e.messageKey,
      additionalFields: e.additionalFields,
      answer: {
        status,
        reason: `partner:${e.kind}`,
        body: {
          error: e.partnerMessage || `the partner refused: ${e.messageKey}`,
          messageKey: e.messageKey,
          ...(Object.keys(e.additionalFields).length > 0 ? { additionalFields: e.additionalFields } : {}),
        },
      },
    };
  }
  if (e instanceof RateLimitedError) {
    const seconds = Math.max(1, Math.ceil((e.retryAfterMs ?? 1000) / 1000));
    return {
      ...base,
      kind: 'partner_error',
      errorKey: null,
      answer: {
        status: 503,
        reason: 'partner:rate_limited',
        headers: { 'retry-after': String(seconds) },
        body: { error: 'the partner is rate limiting this platform; retry later' },
      },
    };
  }
  if (e instanceof PartnerNetworkError) {
    return {
      ...base,
      kind: e.outcomeUnknown ? 'outcome_unknown' : 'partner_error',
      errorKey: null,
      answer: e.outcomeUnknown
        ? {
            status: 504,
            reason: 'partner:outcome_unknown',
            body: { error: 'the partner did not answer in time; whether it acted on the request is unknown' },
          }
        : { status: 502, reason: 'partner:unreachable', body: { error: 'the partner could not be reached' } },
    };
  }
  if (e instanceof PartnerResponseError) {
    const received = e.received as { swapId?: unknown } | undefined;
    const swapId = typeof received?.swapId === 'string' ? received.swapId : undefined;
    return {
      ...base,
      kind: 'invalid_response',
      errorKey: null,
      message: `${e.message}${swapId ? ` (the answer named swap ${swapId})` : ''}`,
      answer: {
        status: 502,
        reason: 'partner:invalid_response',
        body: {
          error: `the partner answered outside the interface (${e.field || 'body'}: ${e.reason})`,
          ...(swapId ? { swapId } : {}),
        },
      },
    };
  }
  if (e instanceof PartnerRequestError) {
    return {
      ...base,
      kind: 'partner_error',
      errorKey: null,
      answer: { status: 400, reason: 'invalid_body', body: { error: `invalid ${e.field}: ${e.reason}` } },
    };
  }
  const status = e instanceof PartnerHttpError ? e.status : undefined;
  return {
    ...base,
    kind: 'partner_error',
    errorKey: null,
    answer: {
      status: 502,
      reason: 'partner:http_error',
      body: { error: `the partner failed${status ? ` (HTTP ${status})` : ''}` },
    },
  };
}

function partnerOutcome(e: unknown): string {
  if (e instanceof PartnerApiError) return e.kind;
  if (e instanceof RateLimitedError) return 'rate-limited';
  if (e instanceof PartnerNetworkError) return e.outcomeUnknown ? 'outcome-unknown' : 'unreachable';
  if (e instanceof PartnerResponseError) return 'invalid-response';
  if (e instanceof PartnerError) return 'error';
  return 'exception';
}

/**
 * The gateway's logic, without HTTP: list the catalog, quote, create swaps. Every refusal before a
 * partner call stores nothing; every partner answer is recorded as an event (QuoteReceived,
 * QuoteRejected, SwapRequested before the swap call, then SwapCreated or SwapCreationFailed).
 */
export class GatewayService {
  constructor(private readonly deps: GatewayServiceDeps) {}

  private async provider(providerId: string): Promise<ProviderPartner | Answer> {
    const partner = await this.deps.partners.get(providerId);
    if (!partner)
      return refusal({ status: 404, reason: 'unknown_provider', error: `no provider ${providerId}` });
    if (!partner.setup.enabled)
      return refusal({
        status: 403,
        reason: 'provider_disabled',
        error: `provider ${providerId} is disabled`,
      });
    return partner;
  }

  async currencies(providerId: string, includeDisabled: boolean): Promise<Answer> {
    const p = await this.provider(providerId);
    if ('status' in p) return p;
    const [currencies, sync] = await Promise.all([
      readCurrencies(this.deps.pool, providerId, { includeDisabled }),
      lastSync(this.deps.pool, providerId),
    ]);
    return {
      status: 200,
      body: {
        providerId,
        syncedAt: sync?.finishedAt ?? null,
        currencies: currencies.map((c) => ({
          id: c.id,
          type: c.type,
          ...(c.chainId !== null ? { chainId: c.chainId } : { blockchain: c.blockchain }),
          ...(c.contract !== null ? { contract: c.contract } : {}),
          platformId: p.setup.currencies[c.id] ?? null,
          enabled: c.enabled,
        })),
      },
    };
  }

  async pairs(
    providerId: string,
    filter: { from?: string | undefined; to?: string | undefined; includeDisabled: boolean },
  ): Promise<Answer> {
    const p = await this.provider(providerId);
    if ('status' in p) return p;
    const [pairs, sync] = await Promise.all([
      readPairs(this.deps.pool, providerId, filter),
      lastSync(this.deps.pool, providerId),
    ]);
    return {
      status: 200,
      body: {
        providerId,
        syncedAt: sync?.finishedAt ?? null,
        pairs: pairs.map((x) => ({
          from: x.from,
          to: x.to,
          tradeMethods: x.tradeMethods,
          minAmount: x.minAmount,
          maxAmount: x.maxAmount,
          enabled: x.enabled,
        })),
      },
    };
  }

  /** POST /v1/quotes. */
  async quote(body: QuoteBody): Promise<Answer> {
    const { pool, metrics, logger } = this.deps;
    const bounds = checkQuoteBody(body);
    if (bounds) return refusal(bounds);
    const p = await this.provider(body.providerId);
    if ('status' in p) return p;
    const pair = await findPair(pool, body.providerId, body.from, body.to);
    const refused = checkAgainstCatalog(pair, body);
    if (refused) return refusal({ ...refused, reason: `catalog:${refused.messageKey ?? 'trade_method'}` });

    const quoteRef = uuidv7();
    const common = { providerId: body.providerId, now: this.deps.now() };
    let q: QuoteResponse;
    try {
      q = await p.client.quote({
        from: body.from,
        to: body.to,
        amount: body.amount,
        ...(body.tradeMethod ? { tradeMethod: body.tradeMethod } : {}),
      });
      metrics.partnerCalls.inc({ provider: body.providerId, operation: 'quote', outcome: 'ok' });
    } catch (e) {
      metrics.partnerCalls.inc({ provider: body.providerId, operation: 'quote', outcome: partnerOutcome(e) });
      if (!(e instanceof PartnerError)) throw e;
      const f = partnerFailure(e);
      await this.record(
        [
          quoteRejectedEvent(common, {
            quoteRef,
            tradeMethod: body.tradeMethod ?? 'unknown',
            from: body.from,
            to: body.to,
            amount: body.amount,
            httpStatus: f.httpStatus,
            errorKey: f.errorKey,
            message: f.message,
            additionalFields: f.additionalFields,
          }),
        ],
        'QuoteRejected',
      );
      logger.info(
        { provider: body.providerId, quoteRef, partnerError: f.message },
        'quote refused by the partner',
      );
      return { ...f.answer, body: { ...f.answer.body, quoteRef } };
    }
    const terms = quoteTerms(quoteRef, body, q);
    await saveQuote(pool, body.providerId, terms, q);
    await this.record([quoteReceivedEvent(common, terms)], 'QuoteReceived');
    return { status: 200, body: quoteAnswer(body.providerId, terms) };
  }

  /** POST /v1/swaps. */
  async createSwap(body: SwapBody, idempotencyKey: string): Promise<Answer> {
    const { pool } = this.deps;
    const shape = checkSwapShape(body);
    if (shape) return refusal(shape);
    const p = await this.provider(body.providerId);
    if ('status' in p) return p;

    const fingerprint = requestFingerprint(body.providerId, body as unknown as Record<string, unknown>);
    const earlier = idempotencyDecision(
      await readIdempotency(pool, idempotencyKey),
      fingerprint,
      this.lease(),
    );
    if (earlier.kind === 'lease_expired') return this.settleExpired(idempotencyKey, earlier);
    if (earlier.kind !== 'new') return idempotentAnswer(earlier);

    // Rules that need no partner: refused here, nothing stored (the key stays free).
    const quote = body.quoteRef ? await readQuote(pool, body.quoteRef) : undefined;
    const nowMs = this.deps.now().getTime();
    const ruled =
      checkQuoteForSwap(body, quote, nowMs, this.deps.quoteMinValidityMs) ??
      checkSlippage(body.slippage, quote);
    if (ruled) return refusal(ruled);
    const from = body.from ?? quote!.from;
    const to = body.to ?? quote!.to;
    if (body.tradeMethod === 'float') {
      const pair = await findPair(pool, body.providerId, from, to);
      const refused = checkAgainstCatalog(pair, { from, to, amount: body.amount!, tradeMethod: 'float' });
      if (refused) return refusal({ ...refused, reason: `catalog:${refused.messageKey ?? 'trade_method'}` });
    }
    const payloadFrom = p.setup.currencies[from];
    const payloadTo = p.setup.currencies[to];
    if (!payloadFrom || !payloadTo) {
      return refusal({
        status: 422,
        reason: 'currency_unmapped',
        error: `provider ${body.providerId} has no platform currency id for ${!payloadFrom ? from : to}`,
      });
    }

    const requestId = uuidv7(nowMs);
    if (
      !(await claimIdempotency(pool, {
        key: idempotencyKey,
        providerId: body.providerId,
        fingerprint,
        requestId,
      }))
    ) {
      // Another request took the key between the read and the claim.
      return idempotentAnswer(
        idempotencyDecision(await readIdempotency(pool, idempotencyKey), fingerprint, this.lease()),
      );
    }
    const request: SwapRequest = {
      tradeMethod: body.tradeMethod,
      quoteRef: body.quoteRef ?? null,
      quoteId: quote?.quoteId ?? null,
      amountFrom: body.amount ?? null,
      currencyFrom: from,
      currencyTo: to,
      payloadCurrencyFrom: payloadFrom,
      payloadCurrencyTo: payloadTo,
      payoutAddress: body.payoutAddress,
      payoutAddressExtraId: body.payoutAddressExtraId ?? null,
      refundAddress: body.refundAddress,
      refundAddressExtraId: body.refundAddressExtraId ?? null,
      nonce: body.nonce,
      slippage: body.slippage ?? null,
    };
    const common = () => ({ providerId: body.providerId, now: this.deps.now() });
    try {
      await this.deps.publisher.publish([swapRequestedEvent(common(), requestId, idempotencyKey, request)]);
    } catch (e) {
      if (!(e instanceof OutboxWriteError)) throw e;
      // Not recorded, so the partner is not called: the key is given back for a retry.
      await releaseIdempotency(pool, idempotencyKey, requestId).catch(() => undefined);
      this.deps.logger.error(
        { err: { message: e.message }, requestId },
        'swap request could not be recorded',
      );
      return refusal({
        status: 503,
        reason: 'not_recorded',
        error: 'the request could not be recorded; nothing was sent to the partner; retry later',
      });
    }

    const answer = await this.callPartner(p, body, request, requestId, quote);
    await completeIdempotency(pool, idempotencyKey, requestId, answer.status, answer.body);
    return answer;
  }

  private lease() {
    return { nowMs: this.deps.now().getTime(), leaseMs: this.deps.idempotencyLeaseMs ?? 120_000 };
  }

  /** A key in progress beyond its lease: the recorded outcome (then the key is completed), else 409. */
  private async settleExpired(
    key: string,
    d: { readonly requestId: string; readonly ageMs: number },
  ): Promise<Answer> {
    const recorded = await outcomeFromOutbox(this.deps.pool, d.requestId);
    if (recorded) {
      await completeIdempotency(this.deps.pool, key, d.requestId, recorded.status, recorded.body);
      return { ...recorded, headers: { ...recorded.headers, 'idempotent-replayed': 'true' } };
    }
    this.deps.logger.warn(
      { requestId: d.requestId, ageMs: d.ageMs },
      'swap request without an outcome beyond its lease',
    );
    return outcomeUnknownAnswer(
      d.requestId,
      `in progress for ${Math.round(d.ageMs / 1000)} s, beyond the ${Math.round((this.deps.idempotencyLeaseMs ?? 120_000) / 1000)} s lease, and nothing was recorded after the partner call`,
    );
  }

  private async callPartner(
    p: ProviderPartner,
    body: SwapBody,
    request: SwapRequest,
    requestId: string,
    quote: StoredQuote | undefined,
  ): Promise<Answer> {
    const { metrics, logger } = this.deps;
    const providerId = body.providerId;
    const common = () => ({ providerId, now: this.deps.now() });
    const wire = {
      refundAddress: request.refundAddress,
      payoutAddress: request.payoutAddress,
      ...(request.refundAddressExtraId !== null
        ? { refundAddressExtraId: request.refundAddressExtraId }
        : {}),
      ...(request.payoutAddressExtraId !== null
        ? { payoutAddressExtraId: request.payoutAddressExtraId }
        : {}),
      currencyFrom: request.currencyFrom,
      currencyTo: request.currencyTo,
      payloadCurrencyFrom: request.payloadCurrencyFrom,
      payloadCurrencyTo: request.payloadCurrencyTo,
      nonce: request.nonce,
      ...(request.slippage !== null ? { slippage: request.slippage } : {}),
    };
    const operation = body.tradeMethod === 'fixed' ? 'swap-fixed' : 'swap-float';
    let created: CreatedSwap;
    try {
      created =
        body.tradeMethod === 'fixed'
          ? await p.client.createFixedSwap({ ...wire, quoteId: quote!.quoteId! } satisfies SwapRequestFixed, {
              // The signed source amount is checked against what the platform asked the quote for, even
              // when the partner's quote has no `amount` echo (an echo, if any, was checked equal to it).
              quote: { ...quote!.response, amount: quote!.terms.amountFrom ?? quote!.response.amount },
            })
          : await p.client.createFloatSwap({ ...wire, amount: body.amount! } satisfies SwapRequestFloat);
      metrics.partnerCalls.inc({ provider: providerId, operation, outcome: 'ok' });
    } catch (e) {
      metrics.partnerCalls.inc({ provider: providerId, operation, outcome: partnerOutcome(e) });
      if (!(e instanceof PartnerError)) throw e;
      const f = partnerFailure(e);
      await this.record(
        [
          swapCreationFailedEvent(common(), requestId, {
            kind: f.kind,
            httpStatus: f.httpStatus,
            errorKey: f.errorKey,
            message: f.message,
          }),
        ],
        'SwapCreationFailed',
      );
      logger.warn(
        { provider: providerId, requestId, kind: f.kind, partnerError: f.message },
        'swap not created',
      );
      return { ...f.answer, body: { ...f.answer.body, requestId } };
    }

    const { swap, payload } = created;
    const event = swapCreatedEvent(common(), {
      requestId,
      request,
      quote: quote ? quote.terms : null,
      response: swap,
      inspection: payload,
    });
    if (body.tradeMethod === 'fixed' && quote)
      event.payload.findings.push(
        quoteAmountToFinding(event.payload.signedAmountToWallet, quote.terms, request.payloadCurrencyTo),
      );
    // Durable before visible: created_swaps (which the webhook and poller read) and the SwapCreated outbox
    // row commit together, before any Kafka send; a crash after the commit leaves the relay to send it.
    try {
      await this.deps.publisher.publishWith(
        [event],
        (client) => recordCreatedSwap(client, { swapId: swap.swapId, providerId, createdAt: swap.createdAt }),
        'swap created: queued with its created_swaps row',
      );
    } catch (e) {
      // Last resort: the whole event in the log, so an operator can append it by hand.
      logger.fatal(
        { err: { message: (e as Error).message }, events: [event] },
        'SwapCreated could not be recorded',
      );
      throw e;
    }

    const answer = createdSwapAnswer(providerId, swap.swapId, event.payload);
    if (answer.status !== 201) {
      metrics.payloadRejections.inc({ provider: providerId });
      logger.error(
        {
          provider: providerId,
          requestId,
          swapId: swap.swapId,
          signatureValid: payload.signatureValid,
          problems: blockingFindings(payload),
        },
        'created swap withheld: its signed payload does not match',
      );
    }
    return answer;
  }

  /** Records events; a failure of both Kafka and the outbox is logged with the events, then thrown. */
  private async record(events: SwapEvent[], what: string): Promise<PublishPath> {
    try {
      return await this.deps.publisher.publish(events);
    } catch (e) {
      // Last resort: the whole event in the log, so an operator can append it by hand.
      this.deps.logger.fatal(
        { err: { message: (e as Error).message }, events },
        `${what} could not be recorded`,
      );
      throw e;
    }
  }
}

function quoteAnswer(providerId: string, t: QuoteTerms): Record<string, unknown> {
  return {
    quoteRef: t.quoteRef,
    providerId,
    quoteId: t.quoteId,
    tradeMethod: t.tradeMethod,
    from: t.currencyFrom,
    to: t.currencyTo,
    amount: t.amountFrom,
    amountTo: t.amountTo,
    providerFees: t.providerFees,
    referralFees: t.referralFees,
    payoutNetworkFees: t.payoutNetworkFees,
    expiry: t.expiry,
    defaultSlippage: t.defaultSlippage,
    minSlippage: t.minSlippage,
    maxSlippage: t.maxSlippage,
  };
}

function idempotentAnswer(d: IdempotencyDecision): Answer {
  switch (d.kind) {
    case 'new': // the key was claimed and given back meanwhile: the caller may simply retry
      return {
        status: 409,
        reason: 'idempotency_in_progress',
        headers: { 'retry-after': '1' },
        body: { error: 'a request with this Idempotency-Key was in progress; retry' },
      };
    case 'mismatch':
      return refusal({
        status: 422,
        reason: 'idempotency_mismatch',
        error: 'this Idempotency-Key was used for another request; use a new key for a new request',
      });
    case 'lease_expired': // settled by settleExpired before this is reached
      return outcomeUnknownAnswer(d.requestId, 'in progress beyond its lease');
    case 'in_progress':
      return {
        status: 409,
        reason: 'idempotency_in_progress',
        headers: { 'retry-after': '1' },
        body: { error: 'a request with this Idempotency-Key is in progress', requestId: d.requestId },
      };
    case 'replay':
      return {
        status: d.status,
        headers: { 'idempotent-replayed': 'true' },
        body: (d.body ?? {}) as Record<string, unknown>,
      };
  }
}
