import { createHash } from 'node:crypto';
import { decodeSwapPayload, describeSwapPayload } from '../payload/decode.ts';
import { keysValidAt, type Curve } from '../payload/keys.ts';
import { verifyProviderSig } from '../payload/verify.ts';

/**
 * The evidence pack (README, "Cases"): one self-contained document about one swap that a partner or an
 * auditor checks without the platform. The file is the pack in RFC 8785 canonical JSON (JCS: keys sorted by
 * UTF-16 code units, no insignificant whitespace, JSON.stringify's string escapes); its `digest` is the
 * SHA-256 of the canonical JSON of `content`. Verification is offline: the digest, the file's canonical form,
 * the payload's signature with the key material the pack carries, and the key's window at the swap's creation.
 */

export const EVIDENCE_FORMAT = 'swap-ledger.evidence/1';
export const CANONICALIZATION = 'RFC 8785 (JCS)';

/** The key the pack carries to verify the signed payload with. */
export interface EvidenceKey {
  keyId: string;
  curve: Curve;
  publicKey: string;
  validFrom: string;
  validTo: string | null;
}

export interface EvidencePack {
  format: string;
  canonicalization: string;
  digest: { algorithm: 'sha256'; value: string };
  content: Record<string, unknown>;
}

export class CanonicalJsonError extends Error {
  override name = 'CanonicalJsonError';
}

/**
 * RFC 8785 canonical JSON. Money is decimal text in the pack, so a number here is an integer (a count, an
 * offset): its JCS form is JSON.stringify's. A non-integer or unsafe number is refused rather than risk a
 * rendering that differs from ECMAScript's.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new CanonicalJsonError(`number ${value} is not a safe integer`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    // JCS sorts by UTF-16 code units: JavaScript's default string comparison.
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new CanonicalJsonError(`a ${typeof value} has no JSON form`);
}

export const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The pack around its content, digest computed; its file text is canonicalJson(pack). */
export function sealEvidence(content: Record<string, unknown>): EvidencePack {
  // Round-trip first: what is digested is exactly what a reader parses back (dates become text, etc.).
  const plain = JSON.parse(JSON.stringify(content)) as Record<string, unknown>;
  return {
    format: EVIDENCE_FORMAT,
    canonicalization: CANONICALIZATION,
    digest: { algorithm: 'sha256', value: sha256Hex(canonicalJson(plain)) },
    content: plain,
  };
}

export interface EvidenceCheck {
  name: string;
  ok: boolean;
  detail: string;
}

/** Every check of a pack's file text; the pack is good only when every one is ok. */
export async function verifyEvidence(fileText: string): Promise<EvidenceCheck[]> {
  const checks: EvidenceCheck[] = [];
  let pack: EvidencePack;
  try {
    pack = JSON.parse(fileText) as EvidencePack;
  } catch (e) {
    return [{ name: 'json', ok: false, detail: `not JSON: ${(e as Error).message}` }];
  }
  if (pack?.format !== EVIDENCE_FORMAT || typeof pack.content !== 'object' || pack.content === null)
    return [{ name: 'format', ok: false, detail: `not a ${EVIDENCE_FORMAT} pack` }];
  const canonical = canonicalJson(pack);
  checks.push({
    name: 'canonical',
    ok: canonical === fileText.replace(/\n$/, ''),
    detail:
      canonical === fileText.replace(/\n$/, '')
        ? `the file is the pack's ${CANONICALIZATION} form`
        : `the file is not in ${CANONICALIZATION} form: bytes were changed outside the content`,
  });
  const digest = sha256Hex(canonicalJson(pack.content));
  checks.push({
    name: 'digest',
    ok: pack.digest?.algorithm === 'sha256' && digest === pack.digest.value,
    detail:
      digest === pack.digest?.value
        ? `sha256 ${digest}`
        : `the content hashes to ${digest}, the pack says ${String(pack.digest?.value).slice(0, 64)}`,
  });
  checks.push(...(await verifySignedPayload(pack.content)));
  return checks;
}

/** The signed payload's checks with the key the pack carries: signature, decoding, key window. */
async function verifySignedPayload(content: Record<string, unknown>): Promise<EvidenceCheck[]> {
  const signed = content.signedPayload as
    | {
        raw?: { payload?: string; signature?: string | null };
        decoded?: Record<string, string> | null;
        key?: EvidenceKey | null;
        createdAt?: string;
      }
    | undefined;
  const payload = signed?.raw?.payload;
  const signature = signed?.raw?.signature;
  if (!signed || typeof payload !== 'string')
    return [{ name: 'signature', ok: false, detail: 'the pack carries no signed payload' }];
  const checks: EvidenceCheck[] = [];
  let decoded: Record<string, string> | undefined;
  try {
    decoded = describeSwapPayload(decodeSwapPayload(payload));
  } catch (e) {
    checks.push({
      name: 'decoded',
      ok: false,
      detail: `the payload does not decode: ${(e as Error).message}`,
    });
  }
  if (decoded)
    checks.push({
      name: 'decoded',
      ok: canonicalJson(decoded) === canonicalJson(signed.decoded ?? null),
      detail:
        canonicalJson(decoded) === canonicalJson(signed.decoded ?? null)
          ? 'the decoded fields are those of the raw payload'
          : 'the decoded fields shown differ from the raw payload',
    });
  const key = signed.key;
  if (!key || typeof signature !== 'string') {
    checks.push({
      name: 'signature',
      ok: false,
      detail: !key ? 'the pack carries no key for the payload' : 'the payload carries no signature',
    });
    return checks;
  }
  const verdict = await verifyProviderSig(
    { payload, signature },
    { curve: key.curve, publicKey: key.publicKey },
  );
  checks.push({
    name: 'signature',
    ok: verdict.valid,
    detail: verdict.valid
      ? `verifies with key ${key.keyId} (${key.curve}) over "." + payload`
      : `does not verify with key ${key.keyId} (${key.curve}): ${verdict.findings
          .filter((f) => f.outcome !== 'ok')
          .map((f) => `${f.check}: ${f.detail ?? f.outcome}`)
          .join('; ')}`,
  });
  let inWindow = false;
  try {
    inWindow =
      typeof signed.createdAt === 'string' &&
      keysValidAt(
        [
          {
            keyId: key.keyId,
            curve: key.curve,
            publicKey: key.publicKey,
            validFrom: key.validFrom,
            ...(key.validTo ? { validTo: key.validTo } : {}),
          },
        ],
        signed.createdAt,
      ).length === 1;
  } catch {
    inWindow = false;
  }
  checks.push({
    name: 'key.validity',
    ok: inWindow,
    detail: `key window [${key.validFrom}, ${key.validTo ?? 'open'}) ${inWindow ? 'holds' : 'does not hold'} the swap's creation ${signed.createdAt ?? '(unknown)'}`,
  });
  return checks;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function htmlValue(v: unknown): string {
  if (v === null || v === undefined) return '<span class="null">—</span>';
  if (typeof v !== 'object') return escapeHtml(String(v));
  if (Array.isArray(v)) {
    if (v.length === 0) return '<span class="null">none</span>';
    return `<ol>${v.map((x) => `<li>${htmlValue(x)}</li>`).join('')}</ol>`;
  }
  const rows = Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `<tr><th>${escapeHtml(k)}</th><td>${htmlValue(x)}</td></tr>`)
    .join('');
  return `<table>${rows}</table>`;
}

/**
 * The printable page of a pack: the same content, section by section, with its digest; the canonical JSON is
 * embedded whole, so the page alone is the pack (`evidence verify` accepts the JSON extracted from it).
 */
export function renderEvidenceHtml(pack: EvidencePack): string {
  const c = pack.content;
  const sections = Object.keys(c)
    .sort()
    .map((k) => `<section><h2>${escapeHtml(k)}</h2>${htmlValue(c[k])}</section>`)
    .join('\n');
  const title = `Evidence pack ${escapeHtml(String((c.swap as { ref?: string } | undefined)?.ref ?? ''))}`;
  const json = canonicalJson(pack).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<style>body{font:12px/1.4 system-ui,sans-serif;margin:2em}table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:2px 6px;vertical-align:top;text-align:left}th{background:#f4f4f4}.null{color:#999}code{word-break:break-all}@media print{section{break-inside:avoid}}</style>
</head><body>
<h1>${title}</h1>
<p>Format ${escapeHtml(pack.format)}, ${escapeHtml(pack.canonicalization)}. SHA-256 of the content: <code>${escapeHtml(pack.digest.value)}</code></p>
<p>Check offline: save the JSON below to a file and run <code>swap-ledger evidence verify &lt;file&gt;</code>.</p>
${sections}
<script type="application/json" id="evidence-pack">${json}</script>
</body></html>
`;
}
