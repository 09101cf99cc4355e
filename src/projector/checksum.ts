import { createHash } from 'node:crypto';
import type pg from 'pg';
import { assertIdentifier } from '../db/client.ts';

/**
 * The projected tables, hashed in this order. Each row contributes two 64-bit hashes of its columns
 * (Postgres's `hash_record_extended`, seeds 0 and 1: each column hashed in its binary form, no text
 * output); a table's digest is its row count and the exact sums of the two hashes: a hash of the
 * table's rows as a set (every row is distinct: it holds its key), so no sort and no string of all rows.
 *
 * A column hashes by its value, so the few places where equal values print differently are closed:
 * `numeric` goes in as its text, so a scale counts (1.5 is not 1.50); a `jsonb` document hashes by
 * value, its numbers by numeric equality, which equals its text here: every document is written by
 * JSON.stringify, whose number text is canonical. The previous digest, an MD5 of each row printed as
 * text, spent its time printing (timestamps, uuids, jsonb; docs/benchmarks.md, "Where the time goes").
 * `exclude` names columns that are not state (a message's trace context): a replay equals live state
 * whatever the headers said.
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
  { table: 'chain_observations' },
  { table: 'statements' },
  { table: 'statement_lines' },
  { table: 'period_events' },
  { table: 'invoices' },
  { table: 'invoice_lines' },
  { table: 'cases' },
  { table: 'chain_claims' },
  { table: 'projector_checkpoints' },
];

export interface StateChecksum {
  checksum: string;
  tables: Record<string, { rows: number; digest: string }>;
}

/** SHA-256 over the per-table digests of every column of every row of every projected table of `schema`. */
export async function stateChecksum(client: pg.ClientBase, schema: string): Promise<StateChecksum> {
  assertIdentifier(schema);
  const hash = createHash('sha256');
  const tables: StateChecksum['tables'] = {};
  for (const { table, exclude } of CHECKSUM_TABLES) {
    const row = `row(${(await hashedColumns(client, schema, table, exclude ?? [])).join(', ')})`;
    const r = await client.query<{ rows: string; digest: string }>(
      `select count(*) as rows,
              md5(count(*) || ':' || coalesce(sum(hash_record_extended(${row}, 0)::numeric), 0)
                          || ':' || coalesce(sum(hash_record_extended(${row}, 1)::numeric), 0)) as digest
         from ${schema}.${table} t`,
    );
    const sum = r.rows[0]!;
    tables[table] = { rows: Number(sum.rows), digest: sum.digest };
    hash.update(`${table}:${sum.rows}:${sum.digest}\n`);
  }
  return { checksum: hash.digest('hex'), tables };
}

/** The table's columns in order, less `exclude`, as `t.<col>`; a numeric one as its text (its scale counts). */
async function hashedColumns(
  client: pg.ClientBase,
  schema: string,
  table: string,
  exclude: readonly string[],
): Promise<string[]> {
  const r = await client.query<{ name: string; numeric: boolean }>(
    `select attname as name, atttypid = 'numeric'::regtype as numeric from pg_attribute
     where attrelid = format('%I.%I', $1::text, $2::text)::regclass and attnum > 0 and not attisdropped
     order by attnum`,
    [schema, table],
  );
  return r.rows
    .filter((c) => !exclude.includes(c.name))
    .map((c) => `t.${client.escapeIdentifier(c.name)}${c.numeric ? '::text' : ''}`);
}
