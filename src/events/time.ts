/**
 * One strict reading of an ISO-8601 instant, for every time that reaches Postgres from outside the
 * platform's own clock: an event's envelope times (the codec) and a partner's timestamps (the partner
 * checker). A time is read only when Postgres would store the same instant: a real calendar date
 * (2026-02-30 is refused, never rolled over), hours 00-23, minutes and seconds 00-59, an explicit offset
 * within Postgres's range (±15:59), and an instant in the years 0001-9999 both as written and in UTC
 * (Postgres has no year 0000, and JS writes years past 9999 in a form Postgres does not read). Years
 * 0001-0099 are kept as written: `Date.UTC` would read them as 19xx.
 */

const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:(Z)|([+-])(\d{2}):?(\d{2}))$/;

/** Postgres's largest time zone displacement (`time zone displacement out of range` beyond it). */
export const MAX_OFFSET_MINUTES = 15 * 60 + 59;

/** Why `text` is not an instant Postgres stores as written, or undefined when it is. */
export function instantProblem(text: string): string | undefined {
  const r = readInstant(text);
  return typeof r === 'string' ? r : undefined;
}

/** The instant `text` names under the strict rule, or undefined. */
export function parseInstant(text: string): Date | undefined {
  const r = readInstant(text);
  return typeof r === 'string' ? undefined : r;
}

/** `text` as ISO-8601 UTC with milliseconds (what `Date#toISOString` writes), or undefined. */
export function isoInstant(text: string): string | undefined {
  return parseInstant(text)?.toISOString();
}

function readInstant(text: string): Date | string {
  if (typeof text !== 'string') return 'not a string';
  const m = INSTANT.exec(text);
  if (!m) return 'not an ISO-8601 date-time with an offset (Z, +hh:mm or +hhmm)';
  const [, y, mo, d, h, mi, s = '0', frac = '', z, sign, oh = '0', om = '0'] = m;
  const [year, month, day, hour, minute, second, offH, offM] = [y, mo, d, h, mi, s, oh, om].map((x) =>
    Number.parseInt(x!, 10),
  ) as [number, number, number, number, number, number, number, number];
  if (year < 1) return 'year 0000 does not exist in Postgres';
  if (month < 1 || month > 12) return `month ${mo} does not exist`;
  if (day < 1 || day > daysIn(year, month)) return `day ${d} does not exist in ${y}-${mo}`;
  if (hour > 23 || minute > 59 || second > 59) return `time ${h}:${mi}:${s} does not exist`;
  if (offM > 59 || offH * 60 + offM > MAX_OFFSET_MINUTES)
    return `offset ${sign}${oh}:${om} is beyond Postgres's range (±15:59)`;
  const local = new Date(0);
  // setUTCFullYear keeps years 0001-0099 as written (Date.UTC would add 1900 to them).
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, Number.parseInt((frac + '00').slice(0, 3), 10));
  const offsetMs = z ? 0 : (sign === '-' ? -1 : 1) * (offH * 60 + offM) * 60_000;
  const instant = new Date(local.getTime() - offsetMs);
  const utcYear = instant.getUTCFullYear();
  if (utcYear < 1 || utcYear > 9999) return `the instant falls in year ${utcYear} in UTC`;
  return instant;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
