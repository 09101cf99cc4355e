/**
 * Bounds of the text a partner sends (ids, addresses, transaction hashes, statuses): well-formed UTF-16 (no
 * lone surrogate), printable, no control characters (U+0000 above all: Postgres refuses it in text and jsonb,
 * which would halt a projector partition), no invisible bidi or zero-width characters, and bounded length.
 * Every edge checks these before anything is stored; the fold checks them again for events that bypassed the
 * edges (an old log, a hand-made event).
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

/** Control characters (C0, DEL, C1) and the invisible format characters above. */
const UNPRINTABLE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${INVISIBLE}]`);

const INVISIBLE_CHAR = new RegExp(`^[${INVISIBLE}]$`);

/**
 * The same rule as a JSON Schema `pattern` (fastify's Ajv compiles it with the `u` flag), except lone
 * surrogates, which a `u` pattern takes as characters: every edge checks its texts with partnerTextProblem too.
 */
export const PRINTABLE_PATTERN = `^[^\\u0000-\\u001f\\u007f-\\u009f${INVISIBLE}]*$`;

/** The same without the invisible characters: what the fold refuses (see storableTextProblem). */
const UNSTORABLE = /[\u0000-\u001f\u007f-\u009f]/;

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
  // A lone UTF-16 surrogate (JSON's "\ud800" escape) is no character: Postgres and UTF-8 cannot hold it.
  if (!value.isWellFormed()) {
    const at = loneSurrogateAt(value);
    return `contains the unprintable lone surrogate U+${hex(value.charCodeAt(at))} at ${at}`;
  }
  const bad = rule.exec(value);
  if (bad) {
    const code = bad[0].codePointAt(0)!;
    return INVISIBLE_CHAR.test(bad[0])
      ? `contains the invisible bidi or zero-width character U+${hex(code)} at ${bad.index}`
      : `contains the unprintable character U+${hex(code)} at ${bad.index}`;
  }
  return undefined;
}

const hex = (code: number) => code.toString(16).toUpperCase().padStart(4, '0');

/** The index of the first code unit that is a surrogate without its pair (the text is not well formed). */
function loneSurrogateAt(value: string): number {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return i;
    } else if (c >= 0xdc00 && c <= 0xdfff) return i;
  }
  return -1;
}

export function isPartnerText(value: unknown, maxLength = MAX_PARTNER_TEXT): value is string {
  return typeof value === 'string' && partnerTextProblem(value, maxLength) === undefined;
}
