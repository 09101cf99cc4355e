// Strict text encodings of the payload module. Node's own base64url decoder skips characters it does
// not know, which would let a mangled payload or signature decode to something; these refuse instead.

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Decodes base64url, with or without '=' padding; returns the reason when the text is not base64url. */
export function decodeBase64url(text: string): { bytes: Uint8Array } | { reason: string } {
  if (typeof text !== 'string') return { reason: `expected a string, got ${typeof text}` };
  const body = text.replace(/={1,2}$/, '');
  const padded = body.length !== text.length;
  if (!BASE64URL.test(body)) {
    const at = [...body].findIndex((c) => !/[A-Za-z0-9_-]/.test(c));
    const char = body[at]!;
    const hint = char === '+' || char === '/' ? ' (standard base64, not base64url)' : '';
    return { reason: `character ${JSON.stringify(char)} at ${at} is not base64url${hint}` };
  }
  if (body.length % 4 === 1) return { reason: `length ${body.length} is not a possible base64url length` };
  if (padded && text.length % 4 !== 0) return { reason: 'padding does not complete a 4-character group' };
  return { bytes: new Uint8Array(Buffer.from(body, 'base64url')) };
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Lower-case hex without a 0x prefix, or undefined when the text is not an even number of hex digits. */
export function normaliseHex(text: string): string | undefined {
  const body = text.startsWith('0x') || text.startsWith('0X') ? text.slice(2) : text;
  return /^(?:[0-9a-fA-F]{2})*$/.test(body) ? body.toLowerCase() : undefined;
}

/** Big-endian unsigned bytes to bigint; empty bytes are 0 (the proto3 default). */
export function bytesToBigint(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt('0x' + toHex(bytes));
}
