import { createHash } from 'node:crypto';
import type pg from 'pg';
import { assertIdentifier } from '../db/client.ts';

/**
 * The projected tables, hashed in this order. Each row contributes the MD5 of its full text form (every
 * column, as Postgres prints the row, in UTC); a table's digest is its row count and the exact sums of
 * the two 64-bit halves of its rows' MD5s: a hash of the table's rows as a set (every row is distinct:
 * it holds its key), so no sort of the table and no string of all its rows (which cost 3.7 of a 16.5 s
 * replay of 200k events). `exclude` names columns that are not state (a message's trace context): a
 * replay equals live state whatever the headers said.
 */
export const CHECKSUM_TABLES: readonly { table: string; exclude?: readonly string[] }[] = [
  { table: 'swaps' },
  { table: 'swap_requests' },
  { table: 'quotes' },
  { table: 'event_journal' },
  { table: 'reconciliation_queue', exclude: ['trace_parent'] },
  { table: 'reconciliations' },
  { table: 'reconciliation_history' },
  { table: 'status_conflicts' },
  { table: 'dead_letters' },
  { table: 'ledger_postings' },
  { table: 'projector_checkpoints' },
];

export interface StateChecksum {
  checksum: string;
  tables: Record<string, { rows: number; md5: string }>;
}

/** SHA-256 over the per-table MD5s of every column of every row of every projected table of `schema`. */
export async function stateChecksum(client: pg.ClientBase, schema: string): Promise<StateChecksum> {
  assertIdentifier(schema);
  await client.query(`set timezone = 'UTC'`);
  const hash = createHash('sha256');
  const tables: StateChecksum['tables'] = {};
  for (const { table, exclude } of CHECKSUM_TABLES) {
    const row = exclude ? `row(${(await columnsBut(client, schema, table, exclude)).join(', ')})` : 't';
    const r = await client.query<{ rows: string; md5: string }>(
      `select count(*) as rows, md5(count(*) || ':' || coalesce(sum(('x' || substr(h, 1, 16))::bit(64)::bigint::numeric), 0)
                                     || ':' || coalesce(sum(('x' || substr(h, 17, 16))::bit(64)::bigint::numeric), 0)) as md5
         from (select md5(${row}::text) as h from ${schema}.${table} t) rows`,
    );
    const sum = r.rows[0]!;
    tables[table] = { rows: Number(sum.rows), md5: sum.md5 };
    hash.update(`${table}:${sum.rows}:${sum.md5}\n`);
  }
  return { checksum: hash.digest('hex'), tables };
}

/** The table's columns in order, less `exclude`, quoted as `t.<col>` (row(...) prints as t::text does). */
async function columnsBut(
  client: pg.ClientBase,
  schema: string,
  table: string,
  exclude: readonly string[],
): Promise<string[]> {
  const r = await client.query<{ name: string }>(
    `select attname as name from pg_attribute
     where attrelid = format('%I.%I', $1::text, $2::text)::regclass and attnum > 0 and not attisdropped
     order by attnum`,
    [schema, table],
  );
  return r.rows.filter((c) => !exclude.includes(c.name)).map((c) => `t.${client.escapeIdentifier(c.name)}`);
}
