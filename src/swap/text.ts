/**
 * Bounds of the text a partner sends (ids, addresses, transaction hashes, statuses): printable, no control
 * characters (U+0000 above all: Postgres refuses it in text and jsonb, which would halt a projector
 * partition), and bounded length. Every edge checks these before anything is stored; the fold checks them
 * again for events that bypassed the edges (an old log, a hand-made event).
 */

/** Longest id, address or hash accepted (a memo-type extra id or an EVM address is far shorter). */
export const MAX_PARTNER_TEXT = 256;

/** Control characters (C0, DEL, C1) and lone surrogates, which no printable partner text carries. */
const UNPRINTABLE =
  /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The same rule as a JSON Schema `pattern` (fastify's Ajv compiles it with the `u` flag). */
export const PRINTABLE_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';

/** Why `value` is not acceptable partner text, or undefined when it is. */
export function partnerTextProblem(value: string, maxLength = MAX_PARTNER_TEXT): string | undefined {
  if (value.length > maxLength) return `longer than ${maxLength} characters`;
  const bad = UNPRINTABLE.exec(value);
  if (bad)
    return `contains the unprintable character U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} at ${bad.index}`;
  return undefined;
}

export function isPartnerText(value: unknown, maxLength = MAX_PARTNER_TEXT): value is string {
  return typeof value === 'string' && partnerTextProblem(value, maxLength) === undefined;
}
