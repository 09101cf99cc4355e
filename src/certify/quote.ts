import { randomUUID } from 'node:crypto';
import { currencyDecimals } from '../money/currencies.ts';
import { Decimal, formatDecimal, isDecimalText, parseDecimal } from '../money/decimal.ts';
import type { Pair, TradeMethod } from '../partner/types.ts';
import { validatePair } from '../partner/validate.ts';
import { parsePartnerTimestamp } from '../partner/checker.ts';
import type { CertifyContext, PairChoice, QuoteSeen } from './context.ts';
import { answerOf, okObject, type Exchange } from './http.ts';
import { fail, show, warn, type Problem, type Requirement } from './requirement.ts';

/** Quote requirements: fixed and float quotes, expiry, amount limits with their keys, unknown pair. */

/** A decimal string of the interface: a JSON string, plain decimal text, not negative. */
export function decimalProblem(
  body: Record<string, unknown>,
  key: string,
  required = true,
): Problem | undefined {
  const v = body[key];
  if (v === undefined || v === null) return required ? fail(key, 'a decimal string', 'absent') : undefined;
  if (typeof v === 'number') return fail(key, 'a decimal string', `the JSON number ${String(v)}`);
  if (!isDecimalText(v)) return fail(key, 'a decimal string', show(v));
  if (parseDecimal(v).isNegative() && !parseDecimal(v).isZero()) return fail(key, 'not negative', show(v));
  return undefined;
}

const FEE_KEYS = ['providerFees', 'referralFees', 'payoutNetworkFees'] as const;

/**
 * QuoteResponse rules (expiry is judged apart). Certification requires only what interface v2 defines: the
 * response's `tradeMethod` is required and is `fixed` or `float`, and a fixed quote carries a `quoteId`. The
 * interface's QuoteRequest has no `tradeMethod`, so the method the platform asked for (`asked`, sent as an
 * extension) binds the partner to nothing: a quote that answers another method is a WARN, and it is judged
 * by the method it answered.
 */
export function quoteBodyProblems(
  body: Record<string, unknown>,
  asked: TradeMethod,
  requestedAmount: string,
): Problem[] {
  const out: Problem[] = [];
  const answered = body.tradeMethod;
  if (answered !== 'fixed' && answered !== 'float')
    out.push(fail('tradeMethod', '"fixed" or "float"', show(answered)));
  else if (answered !== asked)
    out.push(
      warn(
        'tradeMethod',
        `${show(asked)} as asked (QuoteRequest defines no tradeMethod: not required)`,
        show(answered),
      ),
    );
  const method = answered === 'fixed' || answered === 'float' ? answered : asked;
  if (method === 'fixed' && (typeof body.quoteId !== 'string' || body.quoteId.trim() === ''))
    out.push(fail('quoteId', 'a non-empty string on a fixed quote', show(body.quoteId)));
  for (const k of ['amountTo', ...FEE_KEYS]) {
    const p = decimalProblem(body, k);
    if (p) out.push(p);
  }
  const echo = decimalProblem(body, 'amount', false);
  if (echo) out.push(echo);
  else if (
    body.amount !== undefined &&
    body.amount !== null &&
    !parseDecimal(body.amount).eq(parseDecimal(requestedAmount))
  )
    out.push(fail('amount (echo)', show(requestedAmount), show(body.amount)));
  for (const k of ['defaultSlippage', 'minSlippage', 'maxSlippage']) {
    const p = decimalProblem(body, k, false);
    if (p) out.push(p);
    else if (body[k] !== undefined && body[k] !== null && parseDecimal(body[k]).gt(1))
      out.push(fail(k, 'a ratio from 0 to 1', show(body[k])));
  }
  return out;
}

/** The documented expiry shape: `<date>T<time>+0000`. */
const EXPIRY_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?\+0000$/;

/** A fixed quote's expiry: present, in the documented shape, and valid at least `minValidityMs` from `now`. */
export function expiryProblems(expiry: unknown, now: Date, minValidityMs: number): Problem[] {
  if (typeof expiry !== 'string')
    return [fail('expiry', 'an ISO-8601 timestamp like 2026-01-01T00:00:00+0000', show(expiry))];
  const at = parsePartnerTimestamp(expiry);
  if (!at) return [fail('expiry', 'an ISO-8601 timestamp like 2026-01-01T00:00:00+0000', show(expiry))];
  const out: Problem[] = [];
  if (!EXPIRY_SHAPE.test(expiry))
    out.push(warn('expiry shape', '<date>T<time>+0000 as documented (read anyway)', show(expiry)));
  const validMs = at.getTime() - now.getTime();
  if (validMs < minValidityMs)
    out.push(
      fail(
        'quote validity',
        `at least ${Math.round(minValidityMs / 1000)} s`,
        `${Math.round(validMs / 1000)} s (expiry ${expiry})`,
      ),
    );
  return out;
}

/** An ErrorPayload answer: status, messageKey, a message, and decimal-string additionalFields when asked. */
export function errorAnswerProblems(
  ex: Exchange,
  status: number,
  messageKey: string,
  requiredFields: readonly string[] = [],
): Problem[] {
  if (ex.status !== status)
    return [fail('answer', `HTTP ${status} ${messageKey}`, `${answerOf(ex)} ${excerpt(ex)}`)];
  const ok = typeof ex.json === 'object' && ex.json !== null && !Array.isArray(ex.json);
  if (!ok) return [fail('error body', `an ErrorPayload with messageKey ${messageKey}`, excerpt(ex))];
  const body = ex.json as Record<string, unknown>;
  const out: Problem[] = [];
  if (body.messageKey !== messageKey) out.push(fail('messageKey', messageKey, show(body.messageKey)));
  if (typeof body.message !== 'string' || body.message === '')
    out.push(warn('message', 'a description of the error', show(body.message)));
  if (requiredFields.length > 0) {
    const extra = body.additionalFields;
    if (typeof extra !== 'object' || extra === null || Array.isArray(extra))
      out.push(fail('additionalFields', `an object with ${requiredFields.join(' and ')}`, show(extra)));
    else
      for (const k of requiredFields) {
        const p = decimalProblem(extra as Record<string, unknown>, k);
        if (p) out.push({ ...p, what: `additionalFields.${p.what}` });
      }
  }
  return out;
}

function excerpt(ex: Exchange): string {
  return ex.responseExcerpt === '' ? '(empty body)' : show(ex.responseExcerpt, 160);
}

/** An amount inside the pair's limits (twice the minimum, capped), rounded down to the platform decimals. */
export function typicalAmount(pair: Pair, decimals: number | undefined): string {
  const min = parseDecimal(pair.minSwapAmount);
  const max = parseDecimal(pair.maxSwapAmount);
  let amount = min.times(2);
  if (amount.gt(max)) amount = min.plus(max).div(2);
  if (decimals !== undefined) {
    const rounded = amount.toDecimalPlaces(decimals, Decimal.ROUND_DOWN);
    if (rounded.gte(min)) amount = rounded;
  }
  return formatDecimal(amount);
}

/** Below the minimum (half of it), or undefined when that is not a positive amount at the decimals. */
export function belowMinimum(pair: Pair, decimals: number | undefined): string | undefined {
  let amount = parseDecimal(pair.minSwapAmount).div(2);
  if (decimals !== undefined) amount = amount.toDecimalPlaces(decimals, Decimal.ROUND_DOWN);
  return amount.gt(0) ? formatDecimal(amount) : undefined;
}

export function aboveMaximum(pair: Pair): string {
  return formatDecimal(parseDecimal(pair.maxSwapAmount).times(2));
}

/** Usable pairs of the catalog (or those asked with --pair), with their platform ids when mapped. */
export function choosePairs(
  items: readonly unknown[],
  map: Readonly<Record<string, string>>,
  asked: readonly { from: string; to: string }[] | undefined,
): { fixed?: PairChoice; float?: PairChoice; missing: string[] } {
  const valid: Pair[] = [];
  for (const item of items) {
    try {
      valid.push(validatePair(item, 'pair', { provider: 'certify', operation: 'pairs' }));
    } catch {
      // judged by catalog.pairs.rules
    }
  }
  const wanted = asked?.length
    ? valid.filter((p) => asked.some((a) => a.from === p.from && a.to === p.to))
    : valid;
  const missing = (asked ?? [])
    .filter((a) => !valid.some((p) => p.from === a.from && p.to === a.to))
    .map((a) => `${a.from}/${a.to}`);
  const choice = (p: Pair): PairChoice => ({
    pair: p,
    ...(map[p.from] ? { platformFrom: map[p.from] } : {}),
    ...(map[p.to] ? { platformTo: map[p.to] } : {}),
  });
  const mapped = (p: Pair) => map[p.from] !== undefined && map[p.to] !== undefined;
  const pick = (m: TradeMethod) =>
    wanted.find((p) => p.tradeMethod.includes(m) && mapped(p)) ??
    wanted.find((p) => p.tradeMethod.includes(m));
  const fixed = pick('fixed');
  const float = fixed?.tradeMethod.includes('float') && mapped(fixed) ? fixed : pick('float');
  return { ...(fixed ? { fixed: choice(fixed) } : {}), ...(float ? { float: choice(float) } : {}), missing };
}

export function decimalsOf(choice: PairChoice): number | undefined {
  return choice.platformFrom ? currencyDecimals(choice.platformFrom) : undefined;
}

// Each step declares the requirements it judges, in the report's order: the declarations look alike by design.
export async function certifyQuotes(ctx: CertifyContext): Promise<void> {
  const rFixed = ctx.requirement(
    'quote.fixed',
    'quote',
    'POST /quote fixed: quoteId, tradeMethod, amounts and fees as decimal strings',
  );
  const rExpiry = ctx.requirement(
    'quote.expiry',
    'quote',
    'fixed quote expiry: <date>T<time>+0000, valid long enough to sign',
  );
  const rFloat = ctx.requirement(
    'quote.float',
    'quote',
    'POST /quote float: tradeMethod, amounts and fees as decimal strings',
  );
  const rMin = ctx.requirement(
    'quote.min-amount',
    'quote',
    'below minSwapAmount: 400 FROM_CURRENCY_MINIMUM_AMOUNT_ERROR with minRequiredAmount/maxRequiredAmount',
  );
  const rMax = ctx.requirement(
    'quote.max-amount',
    'quote',
    'above maxSwapAmount: 400 FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR with minRequiredAmount/maxRequiredAmount',
  );
  const rUnknown = ctx.requirement(
    'quote.unknown-pair',
    'quote',
    'unknown pair: 404 SWAP_PAIR_NOT_FOUND_ERROR',
  );

  const { fixed, float, missing } = choosePairs(ctx.pairs ?? [], ctx.target.currencies, ctx.options.pairs);
  const missingNote = missing.length ? ` (${missing.join(', ')} not in /pairs)` : '';

  const quote = async (choice: PairChoice, tradeMethod: TradeMethod): Promise<QuoteSeen | undefined> => {
    const amount = typicalAmount(choice.pair, decimalsOf(choice));
    const request = { from: choice.pair.from, to: choice.pair.to, amount, tradeMethod };
    const ex = await ctx.http.call('POST', '/quote', { body: request });
    const req = tradeMethod === 'fixed' ? rFixed : rFloat;
    const ok = okObject(ex);
    if ('problem' in ok) {
      req.problem(
        fail(
          `${tradeMethod} quote ${choice.pair.from}/${choice.pair.to}`,
          'HTTP 200 with a QuoteResponse',
          `${ok.problem} ${excerpt(ex)}`,
        ),
        ex,
      );
      return undefined;
    }
    req.judge(
      quoteBodyProblems(ok.body, tradeMethod, amount),
      `${tradeMethod} quote ${choice.pair.from}/${choice.pair.to} for ${amount}`,
      ex,
    );
    return { pair: choice, tradeMethod, request, body: ok.body, exchange: ex };
  };

  if (fixed) {
    const seen = await quote(fixed, 'fixed');
    if (seen) {
      ctx.quotes.fixed = seen;
      rExpiry.judge(
        expiryProblems(seen.body.expiry, ctx.now(), ctx.options.minQuoteValidityMs ?? 60_000),
        `expiry ${String(seen.body.expiry)}`,
        seen.exchange,
      );
    } else rExpiry.skip('no fixed quote');
  } else {
    rFixed.skip(`no pair of /pairs offers fixed${missingNote}`);
    rExpiry.skip('no fixed quote');
  }
  if (float) {
    const seen = await quote(float, 'float');
    if (seen) ctx.quotes.float = seen;
  } else rFloat.skip(`no pair of /pairs offers float${missingNote}`);

  const limits = fixed ?? float;
  if (!limits) {
    for (const r of [rMin, rMax, rUnknown]) r.skip(`no usable pair in /pairs${missingNote}`);
    return;
  }
  const { pair } = limits;
  // A quote outside the pair's limits: 400 with the key and the limits echoed.
  const outOfLimits = async (amount: string, messageKey: string, r: Requirement) => {
    const ex = await ctx.http.call('POST', '/quote', { body: { from: pair.from, to: pair.to, amount } });
    const problems = errorAnswerProblems(ex, 400, messageKey, ['minRequiredAmount', 'maxRequiredAmount']);
    problems.push(...limitEcho(ex, pair));
    r.judge(problems, `${amount} ${pair.from} answered 400 ${messageKey}`, ex);
  };
  const below = belowMinimum(pair, decimalsOf(limits));
  if (below === undefined) rMin.skip(`minSwapAmount ${pair.minSwapAmount} is the smallest unit`);
  else await outOfLimits(below, 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR', rMin);
  await outOfLimits(aboveMaximum(pair), 'FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR', rMax);

  const unknown = `certify-unknown-${randomUUID().slice(0, 8)}`;
  const exUnknown = await ctx.http.call('POST', '/quote', {
    body: { from: unknown, to: pair.to, amount: typicalAmount(pair, decimalsOf(limits)) },
  });
  rUnknown.judge(
    errorAnswerProblems(exUnknown, 404, 'SWAP_PAIR_NOT_FOUND_ERROR'),
    `${unknown}/${pair.to} answered 404 SWAP_PAIR_NOT_FOUND_ERROR`,
    exUnknown,
  );
}

/** minRequiredAmount / maxRequiredAmount should be the pair's own limits (a warning when they differ). */
function limitEcho(ex: Exchange, pair: Pair): Problem[] {
  const extra = (ex.json as { additionalFields?: Record<string, unknown> } | undefined)?.additionalFields;
  if (!extra || typeof extra !== 'object') return [];
  const out: Problem[] = [];
  for (const [k, v] of [
    ['minRequiredAmount', pair.minSwapAmount],
    ['maxRequiredAmount', pair.maxSwapAmount],
  ] as const) {
    const got = extra[k];
    if (isDecimalText(got) && !parseDecimal(got).eq(parseDecimal(v)))
      out.push(warn(`additionalFields.${k}`, `${v} as in /pairs`, show(got)));
  }
  return out;
}
