import { randomBytes, randomUUID } from 'node:crypto';
import { toAtomicUnits } from '../money/atomic.ts';
import { currencyDecimals } from '../money/currencies.ts';
import { isDecimalText, parseDecimal } from '../money/decimal.ts';
import { inspectSwapPayload, type Finding, type PayloadInspection } from '../payload/index.ts';
import { parsePartnerTimestamp } from '../partner/checker.ts';
import type { CertifyContext, PairChoice, QuoteSeen, SwapSeen } from './context.ts';
import { okObject } from './http.ts';
import { decimalProblem, decimalsOf, errorAnswerProblems, typicalAmount } from './quote.ts';
import { fail, show, warn, type Problem, type Requirement } from './requirement.ts';

/**
 * Swap requirements (only with --create-swaps, on a sandbox): fixed and float creation, a new swapId per
 * call, the signed payload (verified and compared by src/payload, as the gateway does), fee echo, and
 * the unknown-quote error.
 */

/** SwapResponse rules. */
export function swapResponseProblems(body: Record<string, unknown>): Problem[] {
  const out: Problem[] = [];
  for (const k of ['swapId', 'payinAddress'])
    if (typeof body[k] !== 'string' || (body[k] as string).trim() === '')
      out.push(fail(k, 'a non-empty string', show(body[k])));
  if (typeof body.createdAt !== 'string' || !parsePartnerTimestamp(body.createdAt))
    out.push(fail('createdAt', 'an ISO-8601 timestamp with an offset', show(body.createdAt)));
  for (const k of ['providerFees', 'referralFees', 'payoutNetworkFees']) {
    const p = decimalProblem(body, k);
    if (p) out.push(p);
  }
  const sig = body.providerSig;
  if (typeof sig !== 'object' || sig === null || Array.isArray(sig))
    out.push(fail('providerSig', 'an object with payload and signature', show(sig)));
  else {
    const s = sig as Record<string, unknown>;
    if (typeof s.payload !== 'string' || s.payload === '')
      out.push(fail('providerSig.payload', 'a non-empty string', show(s.payload)));
    if (
      !(typeof s.signature === 'string' && s.signature !== '') &&
      !(typeof s.payload_signature === 'string' && s.payload_signature !== '')
    )
      out.push(fail('providerSig.signature', 'a non-empty string (or payload_signature)', 'absent'));
  }
  return out;
}

/** A finding of src/payload as a problem: mismatches and violations fail; unverifiable ones warn. */
export function findingProblem(f: Finding, swap: string): Problem | undefined {
  if (f.outcome === 'ok') return undefined;
  const what = `${swap}: ${f.check}${f.detail ? ` (${f.detail})` : ''}`;
  return f.outcome === 'unverifiable' ? warn(what, f.expected, f.actual) : fail(what, f.expected, f.actual);
}

/** The schema names the field `signature`; `payload_signature` alone is the sample's name: accepted, warned. */
export function signatureFieldProblem(sig: Record<string, unknown>, swap: string): Problem | undefined {
  const has = (k: string) => typeof sig[k] === 'string' && sig[k] !== '';
  if (!has('signature') && has('payload_signature'))
    return warn(
      `${swap}: providerSig field name`,
      "signature (the schema's name)",
      "payload_signature only (the sample response's name; the platform accepts it)",
    );
  if (has('signature') && has('payload_signature') && sig.signature !== sig.payload_signature)
    return fail(
      `${swap}: providerSig`,
      'signature and payload_signature equal when both are sent',
      'they differ',
    );
  return undefined;
}

/**
 * amount_to_wallet is the quoted output plus the payout network fee (docs/architecture.md, "Signed
 * payload"), in atomic units of payloadCurrencyTo. Fixed: exact. Float: the estimate may move, so a
 * difference warns.
 */
export function walletAmountProblem(
  signed: bigint,
  quote: Record<string, unknown> | undefined,
  platformTo: string,
  tradeMethod: 'fixed' | 'float',
  swap: string,
): Problem | undefined {
  const decimals = currencyDecimals(platformTo);
  if (
    !quote ||
    !isDecimalText(quote.amountTo) ||
    !isDecimalText(quote.payoutNetworkFees) ||
    decimals === undefined
  )
    return undefined; // nothing to compare with: the quote requirement reports why
  let expected: bigint;
  try {
    expected = toAtomicUnits(
      parseDecimal(quote.amountTo).plus(parseDecimal(quote.payoutNetworkFees)),
      decimals,
    );
  } catch {
    return warn(
      `${swap}: payload.amount_to_wallet`,
      `quote amountTo + payoutNetworkFees at ${decimals} decimals`,
      'not representable',
    );
  }
  if (expected === signed) return undefined;
  const p = [
    `${swap}: payload.amount_to_wallet`,
    `${expected} (quote amountTo + payoutNetworkFees, atomic ${platformTo})`,
    String(signed),
  ] as const;
  return tradeMethod === 'fixed' ? fail(...p) : warn(...p);
}

/** The swap's fees echo the quote's; fixed must match, float may move (warned). */
export function feeEchoProblems(
  swap: Record<string, unknown>,
  quote: Record<string, unknown>,
  tradeMethod: 'fixed' | 'float',
  label: string,
): Problem[] {
  const out: Problem[] = [];
  for (const k of ['providerFees', 'referralFees', 'payoutNetworkFees']) {
    const a = swap[k];
    const q = quote[k];
    if (!isDecimalText(a) || !isDecimalText(q)) continue; // reported as a decimal problem elsewhere
    if (!parseDecimal(a).eq(parseDecimal(q))) {
      const p = [`${label}: ${k}`, `${q} as quoted`, a] as const;
      out.push(tradeMethod === 'fixed' ? fail(...p) : warn(...p));
    }
  }
  return out;
}

/** A second swap call on the same quoteId must not answer a swapId seen before (quoteId is not swapId). */
export function newSwapIdProblems(earlier: readonly string[], swapId: string): Problem[] {
  return earlier.includes(swapId)
    ? [fail('swapId of a second call with the same quoteId', 'a new swapId', `${swapId} again`)]
    : [];
}

const EVM_ADDRESS = '0xb794f5ea0ba39494ce839613fffba74279579268';
const BTC_ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';

/** A plausible address on the currency's chain (override with --payout-address / --refund-address). */
export function sampleAddress(currency: Record<string, unknown> | undefined): string {
  if (currency?.chainId !== undefined || currency?.blockchain === 'ethereum') return EVM_ADDRESS;
  if (currency?.blockchain === 'bitcoin') return BTC_ADDRESS;
  return `certify-${String(currency?.blockchain ?? 'address')}-${randomBytes(8).toString('hex')}`;
}

// Each step declares the requirements it judges, in the report's order: the declarations look alike by design.
export async function certifySwaps(ctx: CertifyContext): Promise<void> {
  const rFixed = ctx.requirement(
    'swap.fixed',
    'swaps',
    'POST /swap/fixed: swapId, payinAddress, createdAt, fees, providerSig',
  );
  const rFloat = ctx.requirement(
    'swap.float',
    'swaps',
    'POST /swap/float: swapId, payinAddress, createdAt, fees, providerSig',
  );
  const rNewId = ctx.requirement(
    'swap.new-id',
    'swaps',
    'a new swapId on every call, even for the same quoteId',
  );
  const rSig = ctx.requirement(
    'swap.signature',
    'swaps',
    'providerSig verifies with the registered key and curve (R||S over "." + payload)',
  );
  const rPayload = ctx.requirement(
    'swap.payload',
    'swaps',
    'signed payload matches the request (nonce, currencies, addresses, amounts) under the device rules',
  );
  const rFees = ctx.requirement('swap.fees', 'swaps', 'swap fees echo the quote');
  const rUnknown = ctx.requirement(
    'swap.unknown-quote',
    'swaps',
    'unknown quoteId: 404 SWAP_QUOTE_NOT_FOUND_ERROR',
  );
  const all = [rFixed, rFloat, rNewId, rSig, rPayload, rFees, rUnknown];
  if (!ctx.options.createSwaps) {
    for (const r of all) r.skip('swaps are created only with --create-swaps (on a sandbox)');
    return;
  }

  const currencyOf = (id: string) => ctx.currencies?.find((c) => c.id === id);
  const requestFor = (choice: PairChoice, tradeMethod: 'fixed' | 'float', quote: QuoteSeen | undefined) => ({
    ...(tradeMethod === 'fixed'
      ? { quoteId: quote?.body.quoteId }
      : {
          amount:
            (quote?.request.amount as string | undefined) ?? typicalAmount(choice.pair, decimalsOf(choice)),
        }),
    refundAddress: ctx.options.refundAddress ?? sampleAddress(currencyOf(choice.pair.from)),
    payoutAddress: ctx.options.payoutAddress ?? sampleAddress(currencyOf(choice.pair.to)),
    currencyFrom: choice.pair.from,
    currencyTo: choice.pair.to,
    payloadCurrencyFrom: choice.platformFrom,
    payloadCurrencyTo: choice.platformTo,
    nonce: randomBytes(32).toString('hex'),
  });

  const create = async (
    tradeMethod: 'fixed' | 'float',
    quote: QuoteSeen | undefined,
    choice: PairChoice,
    label: string,
  ) => {
    const request = requestFor(choice, tradeMethod, quote);
    const ex = await ctx.http.call('POST', `/swap/${tradeMethod}`, { body: request });
    const req = label.startsWith('second') ? rNewId : tradeMethod === 'fixed' ? rFixed : rFloat;
    const ok = okObject(ex);
    if ('problem' in ok) {
      req.problem(
        fail(
          `${label} ${choice.pair.from}/${choice.pair.to}`,
          'HTTP 200 with a SwapResponse',
          `${ok.problem} ${show(ex.responseExcerpt, 160)}`,
        ),
        ex,
      );
      return undefined;
    }
    const problems = swapResponseProblems(ok.body);
    if (req !== rNewId) req.judge(problems, `${label} swap ${String(ok.body.swapId)} created`, ex);
    if (typeof ok.body.swapId !== 'string' || ok.body.swapId === '') {
      if (req === rNewId) req.problem(fail(`${label}: swapId`, 'a new swapId', show(ok.body.swapId)), ex);
      return undefined;
    }
    const seen: SwapSeen = {
      tradeMethod,
      swapId: ok.body.swapId,
      request,
      body: ok.body,
      exchange: ex,
      quote,
    };
    ctx.swaps.push(seen);
    return seen;
  };

  const fixedQuote = ctx.quotes.fixed;
  const fixedReady =
    fixedQuote &&
    typeof fixedQuote.body.quoteId === 'string' &&
    fixedQuote.pair.platformFrom &&
    fixedQuote.pair.platformTo;
  let first: SwapSeen | undefined;
  if (fixedReady) first = await create('fixed', fixedQuote, fixedQuote.pair, 'fixed');
  else
    rFixed.skip(
      fixedQuote
        ? 'the fixed pair has no platform currency ids, or the quote no quoteId'
        : 'no fixed quote to swap',
    );

  const floatQuote = ctx.quotes.float;
  if (floatQuote?.pair.platformFrom && floatQuote.pair.platformTo)
    await create('float', floatQuote, floatQuote.pair, 'float');
  else
    rFloat.skip(
      floatQuote
        ? 'the float pair has no platform currency ids'
        : 'no float quote (the float swap repeats its amount)',
    );

  if (fixedReady) {
    const second = await create('fixed', fixedQuote, fixedQuote.pair, 'second fixed');
    if (second) {
      const before = ctx.swaps.filter((s) => s !== second).map((s) => s.swapId);
      rNewId.judge(
        newSwapIdProblems(before, second.swapId),
        `same quoteId ${String(fixedQuote.body.quoteId)}: ${first?.swapId ?? '(first call failed)'} then ${second.swapId}`,
        second.exchange,
      );
    }
  } else rNewId.skip('no fixed quote to swap twice');

  for (const swap of ctx.swaps) await judgeSignedPayload(ctx, swap, rSig, rPayload);
  if (ctx.swaps.length === 0) for (const r of [rSig, rPayload]) r.skip('no swap created');

  for (const swap of ctx.swaps) {
    const label = `${swap.tradeMethod} swap ${swap.swapId}`;
    if (swap.quote)
      rFees.judge(
        feeEchoProblems(swap.body, swap.quote.body, swap.tradeMethod, label),
        `${label}: fees as quoted`,
        swap.exchange,
      );
  }
  if (ctx.swaps.length === 0) rFees.skip('no swap created');

  const pairForUnknown = fixedQuote?.pair ?? floatQuote?.pair;
  if (pairForUnknown?.platformFrom && pairForUnknown.platformTo) {
    const request = {
      ...requestFor(pairForUnknown, 'fixed', undefined),
      quoteId: `certify-unknown-${randomUUID()}`,
    };
    const ex = await ctx.http.call('POST', '/swap/fixed', { body: request });
    rUnknown.judge(
      errorAnswerProblems(ex, 404, 'SWAP_QUOTE_NOT_FOUND_ERROR'),
      'answered 404 SWAP_QUOTE_NOT_FOUND_ERROR',
      ex,
    );
    if (ex.status === 200 && typeof (ex.json as Record<string, unknown>)?.swapId === 'string')
      rUnknown.problem(
        warn(
          'a swap was created for an unknown quote',
          'none',
          String((ex.json as Record<string, unknown>).swapId),
        ),
        ex,
      );
  } else rUnknown.skip('no pair with platform currency ids');
}

async function judgeSignedPayload(
  ctx: CertifyContext,
  swap: SwapSeen,
  rSig: Requirement,
  rPayload: Requirement,
): Promise<void> {
  const label = `${swap.tradeMethod} swap ${swap.swapId}`;
  const sig = swap.body.providerSig;
  if (typeof sig !== 'object' || sig === null || typeof (sig as Record<string, unknown>).payload !== 'string')
    return; // swap.* reports it
  const providerSig = sig as { payload: string; signature?: string; payload_signature?: string };
  if (ctx.target.payloadKeys.length === 0) {
    rSig.problem(
      fail(`${label}: signature`, 'a payload key in the registry entry', 'none registered'),
      swap.exchange,
    );
    return;
  }
  // A malformed createdAt is swap.*'s finding; the key window then uses the time of the answer.
  const createdAt =
    typeof swap.body.createdAt === 'string' && parsePartnerTimestamp(swap.body.createdAt)
      ? swap.body.createdAt
      : ctx.now();
  const request = swap.request as Record<string, string>;
  let inspection: PayloadInspection;
  try {
    inspection = await inspectSwapPayload({
      providerSig,
      request: request as unknown as Parameters<typeof inspectSwapPayload>[0]['request'],
      response: { payinAddress: String(swap.body.payinAddress ?? '') },
      quote: swap.quote ? { amount: swap.quote.body.amount as string | undefined } : undefined,
      tradeMethod: swap.tradeMethod,
      keys: ctx.target.payloadKeys,
      createdAt,
    });
  } catch (e) {
    rSig.problem(
      fail(`${label}: inspection`, 'a payload the checker can read', (e as Error).message),
      swap.exchange,
    );
    return;
  }
  const sigProblems: Problem[] = [];
  const payloadProblems: Problem[] = [];
  for (const f of inspection.findings) {
    const p = findingProblem(f, label);
    if (!p) continue;
    (f.check.startsWith('signature.') ? sigProblems : payloadProblems).push(p);
  }
  const named = signatureFieldProblem(providerSig as Record<string, unknown>, label);
  if (named) sigProblems.push(named);
  rSig.judge(sigProblems, `${label}: verifies with ${inspection.keyId ?? '?'}`, swap.exchange);
  if (inspection.decoded && request.payloadCurrencyTo) {
    const p = walletAmountProblem(
      inspection.decoded.amount_to_wallet,
      swap.quote?.body,
      request.payloadCurrencyTo,
      swap.tradeMethod,
      label,
    );
    if (p) payloadProblems.push(p);
  }
  const payloadOk = rPayload.judge(payloadProblems, `${label}: payload matches the request`, swap.exchange);
  swap.signedOk = inspection.signatureValid && payloadOk;
}
