import { checkAgainstCatalog, findPair } from '../catalog/index.ts';
import { uuidv7 } from '../events/ids.ts';
import { PartnerError } from '../partner/errors.ts';
import type { QuoteResponse } from '../partner/types.ts';
import type { ProviderPartner } from '../providers/clients.ts';
import { partnerFailure, partnerOutcome, quoteAnswer, refusal, type Answer } from './answers.ts';
import { quoteReceivedEvent, quoteRejectedEvent, quoteTerms } from './events.ts';
import { saveQuote } from './quotes.ts';
import { recordEvents } from './record.ts';
import type { StoredQuote } from './rules.ts';
import type { GatewayServiceDeps, QuoteBody } from './deps.ts';

/**
 * POST /v1/quotes once the provider is known: the catalog check, the partner's quote, and its record
 * (QuoteReceived, or QuoteRejected with the partner's refusal).
 */
export async function quoteFlow(
  deps: GatewayServiceDeps,
  p: ProviderPartner,
  body: QuoteBody,
): Promise<Answer> {
  const pair = await findPair(deps.pool, body.providerId, body.from, body.to);
  const refused = checkAgainstCatalog(pair, body);
  if (refused) return refusal({ ...refused, reason: `catalog:${refused.messageKey ?? 'trade_method'}` });
  const quote = await askQuote(deps, p, body);
  if ('status' in quote) return quote;
  return { status: 200, body: quoteAnswer(body.providerId, quote.terms) };
}

/**
 * The partner's quote, recorded like any other (platform.gateway_quotes and QuoteReceived), or the answer
 * to give when the partner refused it (recorded as QuoteRejected). The wallet's POST /v1/quotes and a swap
 * the wallet made without one (every swap has a quote: the interface's step 2) both come here.
 */
export async function askQuote(
  deps: GatewayServiceDeps,
  p: ProviderPartner,
  body: QuoteBody,
): Promise<StoredQuote | Answer> {
  const { pool, metrics, logger } = deps;
  const quoteRef = uuidv7();
  const common = { providerId: body.providerId, now: deps.now() };
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
    await recordEvents(
      deps,
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
    logger.info({ provider: body.providerId, quoteRef, err: e }, 'quote refused by the partner');
    return { ...f.answer, body: { ...f.answer.body, quoteRef } };
  }
  const terms = quoteTerms(quoteRef, body, q);
  await saveQuote(pool, body.providerId, terms, q);
  await recordEvents(deps, [quoteReceivedEvent(common, terms)], 'QuoteReceived');
  return {
    quoteRef,
    providerId: body.providerId,
    quoteId: terms.quoteId,
    tradeMethod: q.tradeMethod,
    from: body.from,
    to: body.to,
    expiry: terms.expiry,
    minSlippage: terms.minSlippage,
    maxSlippage: terms.maxSlippage,
    terms,
    response: q,
  };
}
