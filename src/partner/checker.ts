import { parseInstant } from '../events/time.ts';
import { isDecimalText, parseDecimal } from '../money/decimal.ts';
import { partnerTextProblem } from '../swap/text.ts';
import { PartnerResponseError } from './errors.ts';
import type { PartnerOperation, TradeMethod } from './types.ts';

/**
 * The field checks the validators of partner bodies are made of: each returns the value or throws a
 * PartnerResponseError naming the field path. Also the interface's timestamp reading.
 */

/** Opaque cursors are longer than ids; still bounded. */
const MAX_CURSOR = 2048;

export interface ValidationContext {
  readonly provider: string;
  readonly operation: PartnerOperation;
}

export type Obj = Record<string, unknown>;

export class Checker {
  constructor(readonly ctx: ValidationContext) {}

  fail(path: string, reason: string): never {
    throw new PartnerResponseError(this.ctx.provider, this.ctx.operation, path, reason);
  }

  object(v: unknown, path: string): Obj {
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      this.fail(path, `expected an object, got ${kindOf(v)}`);
    return v as Obj;
  }

  array(v: unknown, path: string): unknown[] {
    if (!Array.isArray(v)) this.fail(path, `expected an array, got ${kindOf(v)}`);
    return v;
  }

  string(o: Obj, key: string, path: string, maxLength?: number): string {
    const v = o[key];
    if (typeof v !== 'string') this.fail(join(path, key), `expected a non-empty string, got ${kindOf(v)}`);
    if (v.trim() === '') this.fail(join(path, key), 'must not be empty');
    return this.text(v, join(path, key), maxLength);
  }

  /** undefined for absent or null. */
  optionalString(o: Obj, key: string, path: string, maxLength?: number): string | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') this.fail(join(path, key), `expected a string, got ${kindOf(v)}`);
    return this.text(v, join(path, key), maxLength);
  }

  /** Partner text is stored (jsonb, text columns): printable and bounded, or refused here. */
  text(v: string, path: string, maxLength?: number): string {
    const problem = partnerTextProblem(v, maxLength);
    if (problem !== undefined) this.fail(path, problem);
    return v;
  }

  /** A fee the interface requires but the partner sent as a number, null or nothing: unknown, not refused. */
  feeOrUnknown(o: Obj, key: string, path: string): string | null {
    const v = o[key];
    if (v === undefined || v === null || typeof v === 'number') return null;
    return this.decimalValue(v, join(path, key));
  }

  decimal(o: Obj, key: string, path: string): string {
    const v = o[key];
    if (v === undefined || v === null) this.fail(join(path, key), 'missing (required decimal string)');
    return this.decimalValue(v, join(path, key));
  }

  optionalDecimal(o: Obj, key: string, path: string): string | undefined {
    const v = o[key];
    return v === undefined || v === null ? undefined : this.decimalValue(v, join(path, key));
  }

  /** Non-negative decimal text; a JSON number is refused (it has already lost precision). */
  decimalValue(v: unknown, path: string): string {
    if (typeof v === 'number') this.fail(path, `expected a decimal string, got the number ${String(v)}`);
    if (!isDecimalText(v)) this.fail(path, `expected a decimal string, got ${describe(v)}`);
    if (v.startsWith('-') && !parseDecimal(v).isZero()) this.fail(path, `must not be negative, got "${v}"`);
    return v;
  }

  ratio(o: Obj, key: string, path: string): string | undefined {
    const v = this.optionalDecimal(o, key, path);
    if (v !== undefined && parseDecimal(v).gt(1))
      this.fail(join(path, key), `must be a ratio from 0 to 1, got "${v}"`);
    return v;
  }

  timestamp(o: Obj, key: string, path: string): string {
    const v = o[key];
    if (typeof v !== 'string')
      this.fail(join(path, key), `expected an ISO-8601 timestamp string, got ${kindOf(v)}`);
    if (parsePartnerTimestamp(v) === undefined) {
      this.fail(
        join(path, key),
        `expected an ISO-8601 timestamp with an offset (Z, +00:00 or +0000), got ${describe(v)}`,
      );
    }
    return v;
  }

  tradeMethod(v: unknown, path: string): TradeMethod {
    if (v !== 'fixed' && v !== 'float') this.fail(path, `expected "fixed" or "float", got ${describe(v)}`);
    return v;
  }

  cursor(o: Obj, path: string): string | null {
    if (!('next_cursor' in o))
      this.fail(join(path, 'next_cursor'), 'missing (string, or null on the last page)');
    const v = o.next_cursor;
    if (v === null) return null;
    if (typeof v !== 'string' || v === '') {
      this.fail(join(path, 'next_cursor'), `expected a non-empty string or null, got ${describe(v)}`);
    }
    return this.text(v, join(path, 'next_cursor'), MAX_CURSOR);
  }
}

/**
 * ISO-8601 date-time with an explicit offset: `Z`, `+00:00`, or the interface's `+0000` (which
 * Date.parse does not read everywhere). A local time without offset is refused: it names no instant.
 * The one strict rule of src/events/time.ts: a real calendar date, years 0001-9999 kept as written (never
 * read as 19xx), an offset Postgres stores (±15:59); anything else is not a time.
 */
export function parsePartnerTimestamp(text: string): Date | undefined {
  return parseInstant(text);
}

export function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v === undefined) return 'nothing (missing)';
  return typeof v === 'string' ? `"${v.length > 40 ? v.slice(0, 40) + '…' : v}"` : typeof v;
}

export function describe(v: unknown): string {
  if (typeof v === 'string') return `"${v.length > 40 ? v.slice(0, 40) + '…' : v}"`;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return kindOf(v);
}
