import type { ExchangeRecord } from './requirement.ts';
import { fail, type Problem, type RequirementResult, type RequirementVerdict } from './requirement.ts';
import { CertifyContext, type CertifyOptions, type CertifyTarget } from './context.ts';
import { PartnerHttp } from './http.ts';
import { certifyCatalog } from './catalog.ts';
import { certifyQuotes } from './quote.ts';
import { certifySwaps } from './swaps.ts';
import { certifyStatus } from './status.ts';
import { certifyWebhooks, startWebhookListener } from './webhook.ts';

/** One certification run against a partner's sandbox, in the order a platform meets the interface. */

export interface CertifyReport {
  readonly providerId: string;
  readonly baseUrl: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly options: {
    readonly createSwaps: boolean;
    readonly webhook: string | null;
    readonly timeLimitMs: number;
    readonly minQuoteValidityMs: number;
  };
  readonly requirements: readonly RequirementResult[];
  readonly counts: Readonly<Record<RequirementVerdict, number>>;
}

export const DEFAULT_TIME_LIMIT_MS = 5_000;
const RATE_LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after'];

/** Calls answered later than the platform's limit. */
export function slowCallProblems(log: readonly ExchangeRecord[], limitMs: number): Problem[] {
  return log
    .filter((e) => e.ms > limitMs)
    .map((e) => fail(`${e.method} ${e.target}`, `an answer within ${limitMs} ms`, `${e.ms} ms`));
}

/** A 420/429 carries the documented X-RateLimit-* headers and Retry-After. */
export function rateLimitProblems(log: readonly ExchangeRecord[]): Problem[] {
  const out: Problem[] = [];
  for (const e of log.filter((x) => x.status === 420 || x.status === 429)) {
    const missing = RATE_LIMIT_HEADERS.filter((h) => e.responseHeaders[h] === undefined);
    if (missing.length)
      out.push(
        fail(
          `HTTP ${e.status} to ${e.method} ${e.target}`,
          RATE_LIMIT_HEADERS.join(', '),
          `missing ${missing.join(', ')}`,
        ),
      );
  }
  return out;
}

export async function certifyPartner(target: CertifyTarget, options: CertifyOptions): Promise<CertifyReport> {
  const started = new Date();
  const timeLimitMs = options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
  const http = new PartnerHttp({
    baseUrl: target.baseUrl,
    headers: target.headers,
    timeoutMs: Math.max(timeLimitMs * 3, timeLimitMs + 10_000),
  });
  const ctx = new CertifyContext(target, options, http);
  const listener = await startWebhookListener(ctx);
  try {
    await certifyCatalog(ctx);
    await certifyQuotes(ctx);
    await certifySwaps(ctx);
    await certifyStatus(ctx);
    await certifyWebhooks(ctx, listener);
  } finally {
    await listener?.close();
  }

  const rTime = ctx.requirement(
    'http.response-time',
    'http',
    `every call answered within the platform's limit`,
  );
  const slowest = http.log.reduce<ExchangeRecord | undefined>(
    (a, e) => (a && a.ms >= e.ms ? a : e),
    undefined,
  );
  const slow = http.log.filter((e) => e.ms > timeLimitMs);
  if (slow.length === 0)
    rTime.pass(`${http.log.length} calls, slowest ${slowest?.ms ?? 0} ms (limit ${timeLimitMs} ms)`, slowest);
  for (const e of slow) rTime.judge(slowCallProblems([e], timeLimitMs), '', e);
  const rRate = ctx.requirement(
    'http.rate-limit',
    'http',
    '420/429 answers carry X-RateLimit-Limit, -Remaining, -Reset and Retry-After',
  );
  const limited = http.log.filter((e) => e.status === 420 || e.status === 429);
  if (limited.length === 0) rRate.skip('the partner sent no 420/429 during the run');
  else
    for (const e of limited)
      rRate.judge(
        rateLimitProblems([e]),
        `HTTP ${e.status} to ${e.method} ${e.target} with the documented headers`,
        e,
      );

  const requirements = ctx.requirements.map((r) => r.result());
  const counts: Record<RequirementVerdict, number> = { PASS: 0, FAIL: 0, WARN: 0, SKIP: 0 };
  for (const r of requirements) counts[r.verdict]++;
  return {
    providerId: target.providerId,
    baseUrl: target.baseUrl,
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    options: {
      createSwaps: options.createSwaps,
      webhook: listener?.url ?? null,
      timeLimitMs,
      minQuoteValidityMs: options.minQuoteValidityMs ?? 60_000,
    },
    requirements,
    counts,
  };
}

/** 0 when nothing failed, 1 when a requirement failed. */
export function exitCodeOf(report: CertifyReport): 0 | 1 {
  return report.counts.FAIL > 0 ? 1 : 0;
}
