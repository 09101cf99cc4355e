/**
 * One check about a signed swap payload and its verdict. Every check yields a finding, 'ok' ones
 * included, so the reconciler can print what was checked and not only what failed.
 * - ok: the check passed.
 * - mismatch: the payload disagrees with what the platform asked for (request, response, quote).
 * - violation: the payload or signature breaks a rule of its format or of the signing device.
 * - unverifiable: the check could not be made (missing quote amount, unknown currency, no key...).
 */
export type FindingOutcome = 'ok' | 'mismatch' | 'violation' | 'unverifiable';

export interface Finding {
  /** Stable dotted name, e.g. 'payload.currency_from', 'signature.encoding'. */
  readonly check: string;
  readonly outcome: FindingOutcome;
  readonly expected?: string;
  readonly actual?: string;
  readonly detail?: string;
}

/** True when a finding is anything other than 'ok'. */
export function isProblem(finding: Finding): boolean {
  return finding.outcome !== 'ok';
}

/** Builds a finding without undefined members, so findings compare and serialise cleanly. */
export function finding(
  check: string,
  outcome: FindingOutcome,
  fields: { expected?: string | undefined; actual?: string | undefined; detail?: string | undefined } = {},
): Finding {
  const f: { -readonly [K in keyof Finding]: Finding[K] } = { check, outcome };
  if (fields.expected !== undefined) f.expected = fields.expected;
  if (fields.actual !== undefined) f.actual = fields.actual;
  if (fields.detail !== undefined) f.detail = fields.detail;
  return f;
}
