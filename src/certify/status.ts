import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { atomicToDecimal } from '../money/atomic.ts';
import { currencyDecimals } from '../money/currencies.ts';
import { isDecimalText, parseDecimal } from '../money/decimal.ts';
import { mapStatus, type StatusMapping } from '../swap/status.ts';
import { decodeSwapPayload } from '../payload/index.ts';
import type { CertifyContext, SwapSeen } from './context.ts';
import { answerOf, okObject, type Exchange } from './http.ts';
import { decimalProblem } from './quote.ts';
import { fail, show, warn, type Problem, type Requirement } from './requirement.ts';

/** Status requirements: GET /status of the created swaps (mappable status, decimal strings), unknown swapId 404. */

/** Filled "as soon as known": empty, null or absent before the swap is final. */
function blank(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
}

/** Decimal strings of a Status: amount when known, the three fees always. */
export function statusDecimalProblems(body: Record<string, unknown>): Problem[] {
  const out: Problem[] = [];
  if (!blank(body.amount)) {
    const p = decimalProblem(body, 'amount');
    if (p) out.push(p);
  }
  for (const k of ['providerFees', 'referralFees', 'payoutNetworkFees']) {
    const p = decimalProblem(body, k);
    if (p) out.push(p);
  }
  return out;
}

/** The partner's status string is one the registry's mapping knows. */
export function statusMappingProblem(status: unknown, mapping: StatusMapping): Problem | undefined {
  if (typeof status !== 'string') return fail('status', 'a string', show(status));
  if (mapStatus(mapping, status) === undefined)
    return fail(
      'status',
      `one the status map knows (${[...mapping.statuses.keys()].join(', ')})`,
      show(status),
    );
  return undefined;
}

/** What a final status must carry: the final amount, and for FINISHED both transaction hashes. */
export function finalFieldProblems(body: Record<string, unknown>, internal: string): Problem[] {
  const out: Problem[] = [];
  if (blank(body.amount))
    out.push(fail(`amount of a ${internal} swap`, 'the final amount', show(body.amount)));
  if (internal === 'FINISHED')
    for (const k of ['payinTransactionId', 'payoutTransactionId'])
      if (blank(body[k])) out.push(fail(`${k} of a FINISHED swap`, 'the transaction hash', show(body[k])));
  return out;
}

/**
 * Final figures against what was signed and answered at creation: the fees unchanged, and for a fixed
 * swap the final amount at least the signed amount_to_wallet minus the payout network fee estimate.
 */
export function finalFigureProblems(
  body: Record<string, unknown>,
  swap: SwapSeen,
  internal: string,
): Problem[] {
  if (internal !== 'FINISHED') return [];
  const out: Problem[] = [];
  for (const k of ['providerFees', 'referralFees', 'payoutNetworkFees']) {
    const now = body[k];
    const then = swap.body[k];
    if (isDecimalText(now) && isDecimalText(then) && !parseDecimal(now).eq(parseDecimal(then)))
      out.push(fail(`final ${k}`, `${then} as at creation`, now));
  }
  const platformTo = swap.request.payloadCurrencyTo;
  const decimals = typeof platformTo === 'string' ? currencyDecimals(platformTo) : undefined;
  const payload = (swap.body.providerSig as { payload?: unknown } | undefined)?.payload;
  // A signed figure already refused (swap.signature, swap.payload) is no yardstick for the final amount.
  if (
    swap.signedOk === true &&
    isDecimalText(body.amount) &&
    decimals !== undefined &&
    typeof payload === 'string' &&
    isDecimalText(swap.body.payoutNetworkFees)
  ) {
    let signed;
    try {
      signed = atomicToDecimal(decodeSwapPayload(payload).amount_to_wallet, decimals).minus(
        parseDecimal(swap.body.payoutNetworkFees),
      );
    } catch {
      return out; // an undecodable payload is swap.payload's finding
    }
    if (parseDecimal(body.amount).lt(signed)) {
      const p = [
        'final amount',
        `at least ${signed.toFixed()} (signed amount_to_wallet minus the payout network fee)`,
        body.amount,
      ] as const;
      out.push(swap.tradeMethod === 'fixed' ? fail(...p) : warn(...p));
    }
  }
  return out;
}

// Each step declares the requirements it judges, in the report's order: the declarations look alike by design.
export async function certifyStatus(ctx: CertifyContext): Promise<void> {
  const rResponse = ctx.requirement(
    'status.response',
    'status',
    'GET /status of each created swap answers 200 with a Status',
  );
  const rMapped = ctx.requirement('status.mapped', 'status', "status is one the provider's status map knows");
  const rDecimals = ctx.requirement(
    'status.decimals',
    'status',
    'amount (when known) and fees are decimal strings',
  );
  const rFinal = ctx.requirement(
    'status.final-fields',
    'status',
    'a final status carries the final amount (FINISHED: both transaction hashes)',
  );
  const rFigures = ctx.requirement(
    'status.final-figures',
    'status',
    "final fees as at creation; a fixed swap's final amount at least what was signed",
  );
  const rUnknown = ctx.requirement('status.unknown-swap', 'status', 'unknown swapId: 404 with a message');

  const swapReqs = [rResponse, rMapped, rDecimals, rFinal, rFigures];
  if (ctx.swaps.length === 0) {
    for (const r of swapReqs)
      r.skip(ctx.options.createSwaps ? 'no swap was created' : 'needs --create-swaps');
  }
  let finals = 0;
  for (const swap of ctx.swaps) {
    const label = `${swap.tradeMethod} swap ${swap.swapId}`;
    const deadline = Date.now() + (ctx.options.finalWaitMs ?? 0);
    for (;;) {
      const ex = await ctx.http.call('GET', '/status', { query: { swapId: swap.swapId } });
      const ok = okObject(ex);
      if ('problem' in ok) {
        rResponse.problem(
          fail(label, 'HTTP 200 with a Status', `${ok.problem} ${show(ex.responseExcerpt, 160)}`),
          ex,
        );
        break;
      }
      const body = ok.body;
      if (typeof body.status !== 'string' || body.status === '') {
        rResponse.problem(fail(`${label}: status`, 'a string', show(body.status)), ex);
        rDecimals.judge(statusDecimalProblems(body), `${label}: decimal strings`, ex);
        break;
      }
      rResponse.pass(`${label}: ${body.status}`, ex);
      const mappingProblem = statusMappingProblem(body.status, ctx.target.statusMapping);
      rMapped.judge(
        mappingProblem ? [{ ...mappingProblem, what: `${label}: status` }] : [],
        `${label}: ${body.status} -> ${mapStatus(ctx.target.statusMapping, body.status)?.status ?? '?'}`,
        ex,
      );
      rDecimals.judge(
        statusDecimalProblems(body).map((p) => ({ ...p, what: `${label}: ${p.what}` })),
        `${label}: decimal strings`,
        ex,
      );
      const mapped = mapStatus(ctx.target.statusMapping, body.status);
      if (mapped?.final) {
        finals++;
        judgeFinal(rFinal, rFigures, body, swap, mapped.status, label, ex);
        break;
      }
      if (Date.now() >= deadline) break;
      await delay(1000);
    }
  }
  if (ctx.swaps.length > 0 && finals === 0) {
    const why =
      'no created swap reached a final status during the run (the sandbox decides when; see --final-wait)';
    rFinal.skip(why);
    rFigures.skip(why);
  }

  const unknown = `certify-unknown-${randomUUID()}`;
  const ex = await ctx.http.call('GET', '/status', { query: { swapId: unknown } });
  const problems: Problem[] = [];
  if (ex.status !== 404)
    problems.push(fail('answer', 'HTTP 404', `${answerOf(ex)} ${show(ex.responseExcerpt, 160)}`));
  else if (typeof (ex.json as { message?: unknown } | undefined)?.message !== 'string')
    problems.push(warn('404 body', 'a message string', show(ex.responseExcerpt, 160)));
  rUnknown.judge(problems, `swapId ${unknown} answered 404`, ex);
}

function judgeFinal(
  rFinal: Requirement,
  rFigures: Requirement,
  body: Record<string, unknown>,
  swap: SwapSeen,
  internal: string,
  label: string,
  ex: Exchange,
): void {
  rFinal.judge(
    finalFieldProblems(body, internal).map((p) => ({ ...p, what: `${label}: ${p.what}` })),
    `${label}: ${internal} with its final fields`,
    ex,
  );
  rFigures.judge(
    finalFigureProblems(body, swap, internal).map((p) => ({ ...p, what: `${label}: ${p.what}` })),
    `${label}: final figures as signed`,
    ex,
  );
}
