import { checkAgainstCatalog, findPair } from '../catalog/index.ts';
import { uuidv7 } from '../events/ids.ts';
import type { SwapRequest } from '../events/types.ts';
import { OutboxWriteError } from '../outbox/outbox.ts';
import type { CreatedSwap } from '../partner/client.ts';
import { PartnerError } from '../partner/errors.ts';
import type { SwapRequestFixed, SwapRequestFloat } from '../partner/types.ts';
import type { ProviderPartner } from '../providers/clients.ts';
import {
  createdSwapAnswer,
  idempotentAnswer,
  outcomeUnknownAnswer,
  partnerFailure,
  partnerOutcome,
  refusal,
  type Answer,
} from './answers.ts';
import { recordCreatedSwap } from './created.ts';
import { blockingFindings, swapCreatedEvent, swapCreationFailedEvent, swapRequestedEvent } from './events.ts';
import {
  claimIdempotency,
  completeIdempotency,
  idempotencyDecision,
  readIdempotency,
  releaseIdempotency,
  requestFingerprint,
} from './idempotency.ts';
import { quoteAmountToFinding } from './quote-check.ts';
import { askQuote } from './quote-flow.ts';
import { readQuote } from './quotes.ts';
import { recordEvents } from './record.ts';
import {
  checkQuoteForSwap,
  checkSlippage,
  checkSwapShape,
  type StoredQuote,
  type SwapBody,
} from './rules.ts';
import type { GatewayServiceDeps } from './deps.ts';
import { outcomeFromOutbox } from './settle.ts';

/**
 * POST /v1/swaps: the Idempotency-Key (with its lease), the rules that need no partner, the partner's quote
 * when the wallet sent none (every swap has a quote), SwapRequested before the partner call, then SwapCreated
 * (with created_swaps, in one transaction) or SwapCreationFailed.
 */
export class SwapFlow {
  constructor(private readonly deps: GatewayServiceDeps) {}

  /** POST /v1/swaps; `provider` resolves the provider or answers its refusal. */
  async createSwap(
    body: SwapBody,
    idempotencyKey: string,
    provider: (providerId: string) => Promise<ProviderPartner | Answer>,
  ): Promise<Answer> {
    const { pool } = this.deps;
    const shape = checkSwapShape(body);
    if (shape) return refusal(shape);
    const p = await provider(body.providerId);
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
    const named = body.quoteRef ? await readQuote(pool, body.quoteRef) : undefined;
    const nowMs = this.deps.now().getTime();
    const ruled =
      checkQuoteForSwap(body, named, nowMs, this.deps.quoteMinValidityMs) ??
      checkSlippage(body.slippage, named);
    if (ruled) return refusal(ruled);
    const from = body.from ?? named!.from;
    const to = body.to ?? named!.to;
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

    // Every swap has a quote (the interface's step 2), so its fees have a contract: a float swap the wallet
    // sent without one is quoted here, recorded like any other, and judged against it.
    let quote = named;
    if (!quote) {
      const asked = await askQuote(this.deps, p, {
        providerId: body.providerId,
        from,
        to,
        amount: body.amount!,
        tradeMethod: 'float',
      });
      if ('status' in asked) return asked;
      const slippage = checkSlippage(body.slippage, asked);
      if (slippage) return refusal(slippage);
      quote = asked;
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
      quoteRef: quote.quoteRef,
      quoteId: quote.quoteId,
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
      this.deps.logger.error({ err: e, requestId }, 'swap request could not be recorded');
      return refusal({
        status: 503,
        reason: 'not_recorded',
        error: 'the request could not be recorded; nothing was sent to the partner; retry later',
      });
    }

    const answer = await this.callPartner(p, body, request, requestId, quote);
    try {
      await completeIdempotency(pool, idempotencyKey, requestId, answer.status, answer.body);
    } catch (e) {
      // The outcome is recorded (Postgres or Kafka): the wallet gets it; a retry of the key after its
      // lease settles from the record (or `requests resolve`).
      this.deps.logger.error({ err: e, requestId }, 'the idempotency key could not be completed');
    }
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
      await recordEvents(
        this.deps,
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
      logger.warn({ provider: providerId, requestId, kind: f.kind, err: e }, 'swap not created');
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
    // The partner holds the swap already: a failed write is retried within a bound, then Kafka takes it.
    try {
      await this.deps.publisher.publishWithKept(
        [event],
        // The time as the event records it (strict ISO-8601 UTC), never the partner's text as sent.
        (client) =>
          recordCreatedSwap(client, { swapId: swap.swapId, providerId, createdAt: event.payload.createdAt }),
        'swap created: queued with its created_swaps row',
        this.deps.recordRetryMs ?? 20_000,
      );
    } catch (e) {
      // Last resort: the whole event in the log, so an operator can append it by hand.
      logger.fatal({ err: e, events: [event] }, 'SwapCreated could not be recorded');
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
}
