import { randomUUID } from 'node:crypto';

/**
 * UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version and variant bits, 74 random bits. Set once where a
 * fact enters the platform; a resend carries the same id, which is how the projector recognises it.
 * The random bits are a v4 UUID's (Node draws those from a cached entropy pool: no call into OpenSSL per
 * id, which showed in the webhook's profile); its variant bits are already RFC 9562's.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  if (!Number.isSafeInteger(nowMs) || nowMs < 0 || nowMs >= 2 ** 48)
    throw new RangeError(`uuidv7: ${nowMs} is not a 48-bit millisecond time`);
  const time = nowMs.toString(16).padStart(12, '0');
  const random = randomUUID(); // xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15, 18)}-${random.slice(19)}`;
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
