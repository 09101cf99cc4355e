import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  CanonicalJsonError,
  renderEvidenceHtml,
  sealEvidence,
  sha256Hex,
  verifyEvidence,
} from '../../src/cases/evidence.ts';
import { VECTOR } from '../fixtures/payload/vectors.ts';

const key = {
  keyId: 'k1',
  curve: 'secp256k1' as const,
  publicKey: VECTOR.publicKey,
  validFrom: '2026-01-01T00:00:00.000Z',
  validTo: null as string | null,
};
const content = (over: Record<string, unknown> = {}) => ({
  swap: { ref: 'partner-a/s1', state: { amount_to: '0.123456789012345678901' } },
  signedPayload: {
    createdAt: '2026-11-01T12:00:00.000Z',
    raw: { payload: VECTOR.payload, signature: VECTOR.signature },
    decoded: { ...VECTOR.fields },
    key,
  },
  verdicts: [{ verdict: 'MISMATCH', checks: [{ name: 'amount.to_wallet', delta: '-0.5' }] }],
  ...over,
});
const file = (c = content()) => canonicalJson(sealEvidence(c));
const failing = async (text: string) => (await verifyEvidence(text)).filter((c) => !c.ok).map((c) => c.name);

describe('canonical JSON (RFC 8785 for the pack: strings, integers, booleans, null)', () => {
  it('sorts keys by UTF-16 code units at every depth and drops insignificant whitespace', () => {
    expect(canonicalJson({ b: 1, a: [true, null, { d: 'x', c: 'é' }], A: '\u2028' })).toBe(
      '{"A":"\u2028","a":[true,null,{"c":"é","d":"x"}],"b":1}',
    );
    // Code units, not code points: U+1F600's high surrogate (0xD83D) sorts before U+FB01.
    expect(canonicalJson({ '\uFB01': 1, '\u{1F600}': 2 })).toBe('{"\u{1F600}":2,"\uFB01":1}');
  });

  it('refuses numbers it cannot render exactly as JCS does (money is decimal text)', () => {
    expect(() => canonicalJson({ a: 0.1 })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ a: 2 ** 60 })).toThrow(CanonicalJsonError);
  });
});

describe('the evidence pack, verified offline', () => {
  it('seals the content with the SHA-256 of its canonical JSON', () => {
    const pack = sealEvidence(content());
    expect(pack.digest).toEqual({ algorithm: 'sha256', value: sha256Hex(canonicalJson(content())) });
    expect(pack.canonicalization).toBe('RFC 8785 (JCS)');
  });

  it('verifies: canonical form, digest, decoded payload, signature with the carried key, key window', async () => {
    const checks = await verifyEvidence(file());
    expect(checks.map((c) => [c.name, c.ok])).toEqual([
      ['canonical', true],
      ['digest', true],
      ['decoded', true],
      ['signature', true],
      ['key.validity', true],
    ]);
  });

  it('refuses a pack with any content byte changed (the digest no longer matches)', async () => {
    const text = file();
    const changed = text.replace('0.123456789012345678901', '0.123456789012345678902');
    expect(changed).not.toBe(text);
    expect(await failing(changed)).toEqual(['digest']);
  });

  it('refuses a changed digest, and bytes changed outside the content (not the canonical form)', async () => {
    const pack = sealEvidence(content());
    const otherDigest = canonicalJson({ ...pack, digest: { algorithm: 'sha256', value: '0'.repeat(64) } });
    expect(await failing(otherDigest)).toEqual(['digest']);
    expect(await failing(file().replace('{"canonicalization"', '{ "canonicalization"'))).toEqual([
      'canonical',
    ]);
  });

  it('refuses a signature that does not verify, a key outside its window, decoded fields that lie', async () => {
    const other = (signedPayload: Record<string, unknown>) =>
      file(content({ signedPayload: { ...content().signedPayload, ...signedPayload } }));
    const sig = VECTOR.signature;
    const flipped = (sig[10] === 'A' ? 'B' : 'A') + '';
    expect(
      await failing(
        other({ raw: { payload: VECTOR.payload, signature: sig.slice(0, 10) + flipped + sig.slice(11) } }),
      ),
    ).toEqual(['signature']);
    expect(await failing(other({ key: { ...key, validFrom: '2026-12-01T00:00:00.000Z' } }))).toEqual([
      'key.validity',
    ]);
    expect(
      await failing(other({ decoded: { ...VECTOR.fields, amount_to_wallet: '7000000000000' } })),
    ).toEqual(['decoded']);
    expect(await failing(other({ key: null }))).toEqual(['signature']);
  });

  it('refuses what is not a pack', async () => {
    expect(await failing('not json')).toEqual(['json']);
    expect(await failing('{"format":"other"}')).toEqual(['format']);
  });

  it('renders a printable page of the same content that embeds the pack whole', () => {
    const pack = sealEvidence(content({ note: '<script>alert(1)</script>' }));
    const html = renderEvidenceHtml(pack);
    expect(html).toContain(pack.digest.value);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    const embedded = /<script type="application\/json" id="evidence-pack">([\s\S]*?)<\/script>/.exec(
      html,
    )![1]!;
    expect(embedded.replace(/\\u003c/g, '<')).toBe(canonicalJson(pack));
  });
});
