/**
 * A query of `table`'s rows for each swap of the keys $1 (providers) and $2 (swap ids): one index probe per
 * swap, whatever the statistics say. The subquery's `offset 0` keeps the planner from pulling it up into
 * an ordinary join, which it then planned as a hash join over the whole table or, on a table filled seconds
 * before and never analyzed, as a nested loop that scanned the table once per key
 * (test/reconciler/lookups.int.spec.ts holds the plan; docs/benchmarks.md the cost).
 */
export function perSwapLookup(select: string, table: string, where = ''): string {
  return `select t.* from unnest($1::text[], $2::text[]) as k(provider_id, swap_id)
       cross join lateral (select ${select} from ${table} x
                           where x.provider_id = k.provider_id and x.swap_id = k.swap_id ${where}
                           offset 0) t`;
}
