import { createHash } from 'node:crypto';
import type pg from 'pg';
import { assertIdentifier } from '../db/client.ts';

/**
 * The projected tables and the order their rows are hashed in. Each row contributes its full text
 * form (every column, as Postgres prints the row, in UTC), rows in key order, tables in this order.
 * `exclude` names columns that are not state (a message's trace context): a replay equals live state
 * whatever the headers said.
 */
export const CHECKSUM_TABLES: readonly { table: string; orderBy: string; exclude?: readonly string[] }[] = [
  { table: 'swaps', orderBy: 'provider_id, swap_id' },
  { table: 'swap_requests', orderBy: 'request_id' },
  { table: 'quotes', orderBy: 'quote_ref' },
  { table: 'event_journal', orderBy: 'topic, partition, "offset"' },
  { table: 'reconciliation_queue', orderBy: 'provider_id, swap_id', exclude: ['trace_parent'] },
  { table: 'reconciliations', orderBy: 'provider_id, swap_id' },
  { table: 'reconciliation_history', orderBy: 'event_id' },
  { table: 'status_conflicts', orderBy: 'conflict_id' },
  { table: 'dead_letters', orderBy: 'dead_letter_id' },
  { table: 'ledger_postings', orderBy: 'entry_id, line' },
  { table: 'projector_checkpoints', orderBy: 'topic, partition' },
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
  for (const { table, orderBy, exclude } of CHECKSUM_TABLES) {
    const row = exclude ? `row(${(await columnsBut(client, schema, table, exclude)).join(', ')})` : 't';
    const r = await client.query<{ rows: string; md5: string | null }>(
      `select count(*) as rows, md5(coalesce(string_agg(${row}::text, E'\\n' order by ${orderBy}), '')) as md5 from ${schema}.${table} t`,
    );
    const sum = r.rows[0]!;
    tables[table] = { rows: Number(sum.rows), md5: sum.md5 ?? '' };
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
