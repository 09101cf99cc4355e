/**
 * The vocabulary of a certification run: one Requirement per rule of interface v2, judged from checks
 * that each carry their evidence (the exchange seen, what was expected, what came back).
 */

export type RequirementVerdict = 'PASS' | 'FAIL' | 'WARN' | 'SKIP';
export type Area = 'catalog' | 'quote' | 'swaps' | 'status' | 'webhook' | 'http';

/** One HTTP exchange as certification saw it; auth header values are never kept. */
export interface ExchangeRecord {
  readonly method: string;
  /** Path and query, relative to the base URL (or the webhook listener). */
  readonly target: string;
  readonly requestBody?: unknown;
  /** undefined: no answer (connection closed, timeout). */
  readonly status?: number;
  readonly responseHeaders: Readonly<Record<string, string>>;
  /** Response body, truncated. */
  readonly responseExcerpt: string;
  readonly ms: number;
  readonly error?: string;
}

export interface Check {
  readonly verdict: Exclude<RequirementVerdict, 'SKIP'>;
  /** What was checked, in a few words. */
  readonly what: string;
  readonly expected?: string;
  readonly actual?: string;
  readonly exchange?: ExchangeRecord;
}

export interface RequirementResult {
  readonly id: string;
  readonly area: Area;
  readonly title: string;
  readonly verdict: RequirementVerdict;
  /** One line: the first failing check, or why it was skipped, or what passed. */
  readonly summary: string;
  readonly checks: readonly Check[];
}

/** A failed or warned observation before it is attached to a requirement (pure check functions return these). */
export interface Problem {
  readonly verdict: 'FAIL' | 'WARN';
  readonly what: string;
  readonly expected?: string;
  readonly actual?: string;
}

export const fail = (what: string, expected?: string, actual?: string): Problem => ({
  verdict: 'FAIL',
  what,
  ...(expected !== undefined ? { expected } : {}),
  ...(actual !== undefined ? { actual } : {}),
});

export const warn = (what: string, expected?: string, actual?: string): Problem => ({
  ...fail(what, expected, actual),
  verdict: 'WARN',
});

const RANK: Readonly<Record<RequirementVerdict, number>> = { SKIP: 0, PASS: 1, WARN: 2, FAIL: 3 };

/** Collects the checks of one requirement; a requirement with no check is SKIP with its reason. */
export class Requirement {
  private readonly checks: Check[] = [];
  private skipReason: string | undefined;

  constructor(
    readonly id: string,
    readonly area: Area,
    readonly title: string,
  ) {}

  pass(what: string, exchange?: ExchangeRecord, actual?: string): void {
    this.checks.push({
      verdict: 'PASS',
      what,
      ...(actual !== undefined ? { actual } : {}),
      ...(exchange ? { exchange } : {}),
    });
  }

  /** Records problems, or one PASS with `passed` when there are none. */
  judge(problems: readonly Problem[], passed: string, exchange?: ExchangeRecord): boolean {
    if (problems.length === 0) {
      this.pass(passed, exchange);
      return true;
    }
    for (const p of problems) this.checks.push({ ...p, ...(exchange ? { exchange } : {}) });
    return !problems.some((p) => p.verdict === 'FAIL');
  }

  problem(p: Problem, exchange?: ExchangeRecord): void {
    this.judge([p], '', exchange);
  }

  skip(reason: string): void {
    this.skipReason ??= reason;
  }

  get failed(): boolean {
    return this.checks.some((c) => c.verdict === 'FAIL');
  }

  result(): RequirementResult {
    const verdict = this.checks.reduce<RequirementVerdict>(
      (worst, c) => (RANK[c.verdict] > RANK[worst] ? c.verdict : worst),
      'SKIP',
    );
    const first = this.checks.find((c) => c.verdict === verdict);
    const summary =
      verdict === 'SKIP'
        ? (this.skipReason ?? 'not checked')
        : verdict === 'PASS'
          ? this.checks[0]!.what + (this.checks.length > 1 ? ` (+${this.checks.length - 1} more)` : '')
          : describeCheck(first!);
    return { id: this.id, area: this.area, title: this.title, verdict, summary, checks: [...this.checks] };
  }
}

export function describeCheck(c: Check): string {
  const parts = [c.what];
  if (c.expected !== undefined) parts.push(`expected ${c.expected}`);
  if (c.actual !== undefined) parts.push(`got ${c.actual}`);
  return parts.join('; ');
}

/** Short JSON text of a value for evidence. */
export function show(v: unknown, max = 120): string {
  const text = v === undefined ? 'nothing' : typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v);
  return text.length > max ? text.slice(0, max) + '…' : text;
}
