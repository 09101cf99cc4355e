import type pg from 'pg';

/** Records the text of every query the client sends, until restored. */
export function recordingQueries(client: pg.PoolClient): { queries: string[]; restore: () => void } {
  const queries: string[] = [];
  const target = client as unknown as { query: (...a: unknown[]) => unknown };
  const query = target.query.bind(client);
  target.query = (...a: unknown[]) => {
    queries.push(typeof a[0] === 'string' ? a[0] : ((a[0] as { text?: string })?.text ?? ''));
    return query(...a);
  };
  return { queries, restore: () => (target.query = query) };
}
