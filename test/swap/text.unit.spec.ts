import { describe, expect, it } from 'vitest';
import { isPartnerText, partnerTextProblem, PRINTABLE_PATTERN } from '../../src/swap/text.ts';

/** Issue 34 point 9: bidi controls and zero-width characters make a hash or an address render misleadingly. */
describe('partner text bounds', () => {
  const invisible = [
    0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068,
    0x2069, 0xfeff, 0x061c, 0x180e,
  ];
  // The pattern the webhook's and the gateway's JSON Schemas use (Ajv compiles it with the u flag).
  const pattern = new RegExp(PRINTABLE_PATTERN, 'u');

  it.each(invisible.map((c) => [c.toString(16).toUpperCase().padStart(4, '0'), c]))(
    'refuses U+%s in a hash, in the function and in the schema pattern',
    (hex, code) => {
      const hash = `0xabc${String.fromCodePoint(code)}def`;
      expect(partnerTextProblem(hash)).toBe(
        `contains the invisible bidi or zero-width character U+${hex} at 5`,
      );
      expect(isPartnerText(hash)).toBe(false);
      expect(pattern.test(hash)).toBe(false);
    },
  );

  it('an override that makes one address look like another is refused', () => {
    // Renders as "0x…1234" reversed after the override: not the address it shows.
    const spoof = '0xb794f5ea0ba39494ce839613fffba74279579268\u202e4321';
    expect(partnerTextProblem(spoof)).toMatch(/invisible bidi or zero-width character U\+202E at 42/);
  });

  it('still refuses control characters, and accepts printable text of any script', () => {
    expect(partnerTextProblem('a\u0000b')).toBe('contains the unprintable character U+0000 at 1');
    expect(partnerTextProblem('a\u009fb')).toBe('contains the unprintable character U+009F at 1');
    expect(partnerTextProblem('x'.repeat(257))).toBe('longer than 256 characters');
    for (const ok of [
      'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      'memo: ünïcödé 交易 🚀',
      'عنوان', // right-to-left letters are text, not controls
      '\u2065', // unassigned, next to the isolates
      '\u2010-\u2027', // dashes and the like around the embeddings
    ]) {
      expect(partnerTextProblem(ok), ok).toBeUndefined();
      expect(pattern.test(ok), ok).toBe(true);
    }
  });
});

/** Issue 41 point 11: a lone UTF-16 surrogate is no character; only well-formed text passes. */
describe('lone surrogates', () => {
  it.each([
    ['a high one at the end', 'abc\ud800', 'U+D800 at 3'],
    ['a low one at the start', '\udc00abc', 'U+DC00 at 0'],
    ['a pair reversed', 'a\ude80\ud83d', 'U+DE80 at 1'],
    ['a high one before a letter', '\ud83dx', 'U+D83D at 0'],
  ])('refuses %s, in the edges and in the fold', async (_what, value, where) => {
    const { storableTextProblem } = await import('../../src/swap/text.ts');
    expect(partnerTextProblem(value)).toBe(`contains the unprintable lone surrogate ${where}`);
    expect(storableTextProblem(value)).toBe(`contains the unprintable lone surrogate ${where}`);
    expect(isPartnerText(value)).toBe(false);
  });

  it('accepts surrogate pairs (characters beyond the BMP)', () => {
    expect(partnerTextProblem('rocket \ud83d\ude80 and 𝔘')).toBeUndefined();
  });

  it('the schema pattern alone would pass one, which is why every edge calls partnerTextProblem too', () => {
    expect(new RegExp(PRINTABLE_PATTERN, 'u').test('abc\ud800')).toBe(true);
  });
});

describe('the fold keeps what it always accepted', () => {
  it('storableTextProblem refuses controls and lone surrogates, not the invisible characters the edges refuse', async () => {
    const { storableTextProblem } = await import('../../src/swap/text.ts');
    const spoof = '0xb794f5ea0ba39494ce839613fffba74279579268\u202e4321';
    expect(storableTextProblem(spoof)).toBeUndefined();
    expect(storableTextProblem('a\u0000b')).toMatch(/unprintable character U\+0000 at 1/);
    expect(storableTextProblem('a\ud800')).toMatch(/unprintable/);
    expect(storableTextProblem('x'.repeat(257))).toMatch(/longer than 256/);
  });
});
