/**
 * Bounds of the text a partner sends (ids, addresses, transaction hashes, statuses): printable, no control
 * characters (U+0000 above all: Postgres refuses it in text and jsonb, which would halt a projector
 * partition), no invisible bidi or zero-width characters, and bounded length. Every edge checks these before anything is stored; the fold checks them
 * again for events that bypassed the edges (an old log, a hand-made event).
 */

/** Longest id, address or hash accepted (a memo-type extra id or an EVM address is far shorter). */
export const MAX_PARTNER_TEXT = 256;

/**
 * Invisible format characters that change how text around them renders: the bidi controls (U+061C arabic
 * letter mark, U+200E/U+200F marks, U+202A-U+202E embeddings and overrides, U+2066-U+2069 isolates) and the
 * zero-width ones (U+180E, U+200B-U+200D, U+FEFF). In a hash or an address they make one value look like
 * another (an override reverses what follows), so partner text never carries them.
 */
const INVISIBLE = '\\u061c\\u180e\\u200b-\\u200f\\u202a-\\u202e\\u2066-\\u2069\\ufeff';

/**
 * Control characters (C0, DEL, C1), the invisible format characters above and lone surrogates, which no
 * printable partner text carries.
 */
const UNPRINTABLE = new RegExp(
  `[\\u0000-\\u001f\\u007f-\\u009f${INVISIBLE}]|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]`,
);

const INVISIBLE_CHAR = new RegExp(`^[${INVISIBLE}]$`);

/** The same rule as a JSON Schema `pattern` (fastify's Ajv compiles it with the `u` flag). */
export const PRINTABLE_PATTERN = `^[^\\u0000-\\u001f\\u007f-\\u009f${INVISIBLE}]*$`;

/** The same without the invisible characters: what the fold refuses (see storableTextProblem). */
const UNSTORABLE = new RegExp(
  `[\\u0000-\\u001f\\u007f-\\u009f]|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]`,
);

/** Why `value` is not acceptable partner text, or undefined when it is. */
export function partnerTextProblem(value: string, maxLength = MAX_PARTNER_TEXT): string | undefined {
  return textProblemBy(UNPRINTABLE, value, maxLength);
}

/**
 * The fold's bound: the edges' without the invisible characters, which the edges began refusing later than
 * the rest. A log that already holds one must replay as it was applied (replay EQUAL), and such text is
 * storable; what the fold refuses is what it always refused.
 */
export function storableTextProblem(value: string, maxLength = MAX_PARTNER_TEXT): string | undefined {
  return textProblemBy(UNSTORABLE, value, maxLength);
}

function textProblemBy(rule: RegExp, value: string, maxLength: number): string | undefined {
  if (value.length > maxLength) return `longer than ${maxLength} characters`;
  const bad = rule.exec(value);
  if (bad) {
    const code = bad[0].codePointAt(0)!;
    const hex = code.toString(16).toUpperCase().padStart(4, '0');
    return INVISIBLE_CHAR.test(bad[0])
      ? `contains the invisible bidi or zero-width character U+${hex} at ${bad.index}`
      : `contains the unprintable character U+${hex} at ${bad.index}`;
  }
  return undefined;
}

export function isPartnerText(value: unknown, maxLength = MAX_PARTNER_TEXT): value is string {
  return typeof value === 'string' && partnerTextProblem(value, maxLength) === undefined;
}
