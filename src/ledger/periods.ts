/**
 * Which accounting period (a calendar month, UTC, `YYYY-MM`) a ledger posting belongs to. Decided once, from
 * the posting's own data, never from a clock or from which periods are closed (the fold cannot know that
 * deterministically: a close and a swap's events sit in different partitions):
 * - a posting belongs to the month of its `recordedAt`, when the platform recorded the event that made it;
 * - when its `effectiveAt` (the swap's final time) falls in an earlier month, that month is its prior period:
 *   the posting is a prior-period adjustment of it, booked in the period open when it was recorded.
 * So a late fact (a late status, a correction) never lands in the month the swap finished in, once that
 * month has passed; `period close` seals a month only after it has ended (src/monthend/seal.ts).
 * The SQL in src/ops/periods.ts computes the same month (POSTING_PERIOD_SQL).
 */

const PERIOD = /^(\d{4})-(0[1-9]|1[0-2])$/;

export function isPeriod(text: string): boolean {
  return PERIOD.test(text);
}

/** The period (UTC month) of an ISO-8601 instant. */
export function periodOf(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) throw new RangeError(`not an instant: ${iso.slice(0, 40)}`);
  return d.toISOString().slice(0, 7);
}

export function postingPeriod(p: { recordedAt: string }): string {
  return periodOf(p.recordedAt);
}

/** The earlier period a posting adjusts, or null when it is booked in its own month. */
export function priorPeriodOf(p: { recordedAt: string; effectiveAt: string }): string | null {
  const own = periodOf(p.recordedAt);
  const effective = periodOf(p.effectiveAt);
  return effective < own ? effective : null;
}

/** The first instant of a period, and of the next one: [start, end). */
export function periodBounds(period: string): { start: Date; end: Date } {
  const m = PERIOD.exec(period);
  if (!m) throw new RangeError(`not a period (YYYY-MM): ${period.slice(0, 20)}`);
  const y = Number(m[1]);
  const mo = Number(m[2]) - 1;
  return { start: new Date(Date.UTC(y, mo, 1)), end: new Date(Date.UTC(y, mo + 1, 1)) };
}

export function nextPeriod(period: string): string {
  return periodBounds(period).end.toISOString().slice(0, 7);
}

/** The SQL expression of a posting's period (the same month as postingPeriod), for a table alias. */
export const postingPeriodSql = (alias: string) =>
  `to_char(${alias}.recorded_at at time zone 'UTC', 'YYYY-MM')`;
