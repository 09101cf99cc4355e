/**
 * The age buckets of unresolved cases, in days since the case opened: one home for the finance view
 * `open_cases_by_age`, the case list's filter (`case list`, the console's Cases page) and their docs.
 */
export const CASE_AGE_BUCKETS = [
  { name: '0-1d', fromDays: 0, toDays: 1 },
  { name: '1-7d', fromDays: 1, toDays: 7 },
  { name: '7-30d', fromDays: 7, toDays: 30 },
  { name: '30d+', fromDays: 30, toDays: null },
] as const;
export type CaseAgeBucket = (typeof CASE_AGE_BUCKETS)[number]['name'];

export const isCaseAgeBucket = (v: string): v is CaseAgeBucket => CASE_AGE_BUCKETS.some((b) => b.name === v);

/** The SQL `case` naming the bucket of an `opened_at` column, at query time. */
export function caseAgeBucketSql(openedAt: string): string {
  const arms = CASE_AGE_BUCKETS.filter((b) => b.toDays !== null)
    .map((b) => `when now() - ${openedAt} < interval '${b.toDays} days' then '${b.name}'`)
    .join(' ');
  return `case ${arms} else '${CASE_AGE_BUCKETS.at(-1)!.name}' end`;
}
