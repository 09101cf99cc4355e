import type pg from 'pg';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import copyStreams from 'pg-copy-streams';
import { getTableColumns, getTableName } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';

/**
 * Set-based reads and writes of whole rows, driven by the drizzle table definitions: one statement per
 * table per batch (`unnest` of one array per column), whatever the batch size. This is the projector's
 * hot path, where a statement per row would cost a round trip per event.
 */

interface ColumnInfo {
  key: string;
  name: string;
  sqlType: string;
  json: boolean;
}

const columnCache = new WeakMap<PgTable, ColumnInfo[]>();

function columnsOf(table: PgTable): ColumnInfo[] {
  let cols = columnCache.get(table);
  if (!cols) {
    cols = Object.entries(getTableColumns(table)).map(([key, c]) => ({
      key,
      name: c.name,
      sqlType: c.getSQLType(),
      json: c.getSQLType() === 'jsonb',
    }));
    columnCache.set(table, cols);
  }
  return cols;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * A named (prepared) statement per distinct text: Postgres parses and plans it once per connection, not
 * once per batch. The name is a digest of the text, so a connection never runs another text under it; a
 * plan follows the search_path (Postgres re-plans when the schemas it names change).
 */
const statementNames = new Map<string, string>();
function named(text: string): { name: string; text: string } {
  let name = statementNames.get(text);
  if (!name) {
    name = `bulk_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return { name, text };
}

function toParam(value: unknown, json: boolean): unknown {
  if (value === null || value === undefined) return null;
  if (json) return JSON.stringify(value);
  if (typeof value === 'bigint') return value.toString();
  return value;
}

const NEEDS_BACKSLASH = /[\\"]/;

/**
 * A Postgres array literal of the values (`{"a","b",NULL}`), passed as one text parameter: node-postgres
 * would build the same literal with two regular-expression replacements per element, which showed in
 * the projector's profile. Every element is quoted, so an empty text, a comma, a brace or the text
 * "NULL" stays a text; only `\` and `"` are escaped. Times go as ISO 8601 UTC.
 */
export function arrayLiteral(values: readonly unknown[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) {
      out += 'NULL';
      continue;
    }
    const text = v instanceof Date ? v.toISOString() : String(v);
    out += NEEDS_BACKSLASH.test(text) ? `"${text.replace(/[\\"]/g, '\\$&')}"` : `"${text}"`;
  }
  return out + '}';
}

/** COPY's text format escapes only these (JSON, quotes and commas pass as they are). */
const NEEDS_ESCAPE = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One field of COPY's text format: NULL is `\N`; a text is escaped only when it holds one of the four. */
export function copyField(value: unknown, json: boolean): string {
  if (value === null || value === undefined) return '\\N';
  let text: string;
  if (json) text = JSON.stringify(value);
  else if (typeof value === 'string') text = value;
  else if (value instanceof Date) return value.toISOString();
  else return String(value); // numbers, bigints, booleans: nothing to escape
  return NEEDS_ESCAPE.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!) : text;
}

/**
 * Inserts rows with COPY: the fastest way into Postgres, for tables that are only ever appended to (the
 * journal). The text format, not CSV: a JSON payload is full of quotes that CSV would double and Postgres
 * undo, where text escapes only backslashes and line breaks. A conflict fails the statement, like an
 * insert without ON CONFLICT.
 */
export async function copyRows<T extends object>(
  client: pg.ClientBase,
  table: PgTable,
  rows: readonly T[],
): Promise<void> {
  if (rows.length === 0) return;
  const cols = columnsOf(table);
  const lines = function* () {
    let chunk = '';
    for (const r of rows) {
      const row = r as Record<string, unknown>;
      let line = copyField(row[cols[0]!.key], cols[0]!.json);
      for (let i = 1; i < cols.length; i++) line += '\t' + copyField(row[cols[i]!.key], cols[i]!.json);
      chunk += line + '\n';
      if (chunk.length > 64 * 1024) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  };
  const stream = client.query(
    copyStreams.from(
      `copy ${quote(getTableName(table))} (${cols.map((c) => quote(c.name)).join(', ')}) from stdin`,
    ),
  );
  await pipeline(Readable.from(lines()), stream);
}

export type Conflict = { update: string[] } | 'nothing' | 'error';

/** Inserts rows; on a conflict of the named key columns, replaces every other column (or does nothing). */
export async function writeRows<T extends object>(
  client: pg.ClientBase,
  table: PgTable,
  rows: readonly T[],
  conflict: Conflict,
): Promise<void> {
  if (rows.length === 0) return;
  const cols = columnsOf(table);
  const params = cols.map((c) =>
    arrayLiteral(rows.map((r) => toParam((r as Record<string, unknown>)[c.key], c.json))),
  );
  const arrays = cols.map((c, i) => `$${i + 1}::${c.json ? 'text' : c.sqlType}[]`);
  const select = cols.map((c) => (c.json ? `${quote(c.name)}::jsonb` : quote(c.name))).join(', ');
  let sql =
    `insert into ${quote(getTableName(table))} (${cols.map((c) => quote(c.name)).join(', ')}) ` +
    `select ${select} from unnest(${arrays.join(', ')}) as t(${cols.map((c) => quote(c.name)).join(', ')})`;
  if (conflict === 'nothing') sql += ' on conflict do nothing';
  else if (conflict !== 'error') {
    const keyNames = conflict.update.map((k) => cols.find((c) => c.key === k)!.name);
    const set = cols
      .filter((c) => !keyNames.includes(c.name))
      .map((c) => `${quote(c.name)} = excluded.${quote(c.name)}`)
      .join(', ');
    sql += ` on conflict (${keyNames.map(quote).join(', ')}) do update set ${set}`;
  }
  await client.query({ ...named(sql), values: params });
}

/** A key: one column's value, or a tuple of values for a composite key (e.g. provider_id, swap_id). */
export type RowKey = string | readonly string[];

/** `(a, b) in (select * from unnest($1, $2))`: the where clause and parameters of a set of keys. */
function keyFilter(table: PgTable, keyProperties: readonly string[], keys: readonly RowKey[]) {
  const cols = columnsOf(table);
  const keyCols = keyProperties.map((k) => cols.find((c) => c.key === k)!);
  const params = keyCols.map((_, i) => arrayLiteral(keys.map((k) => (typeof k === 'string' ? k : k[i]!))));
  const where =
    `(${keyCols.map((c) => quote(c.name)).join(', ')}) in ` +
    `(select * from unnest(${keyCols.map((c, i) => `$${i + 1}::${c.sqlType}[]`).join(', ')}))`;
  return { where, params };
}

/** Rows whose key (one column, or several) is one of `keys`, with the drizzle (camelCase) property names. */
export async function readRows<T>(
  client: pg.ClientBase,
  table: PgTable,
  keyProperty: string | readonly string[],
  keys: readonly RowKey[],
): Promise<T[]> {
  if (keys.length === 0) return [];
  const cols = columnsOf(table);
  const { where, params } = keyFilter(
    table,
    typeof keyProperty === 'string' ? [keyProperty] : keyProperty,
    keys,
  );
  const res = await client.query({
    ...named(
      `select ${cols.map((c) => quote(c.name)).join(', ')} from ${quote(getTableName(table))} where ${where}`,
    ),
    values: params,
  });
  return res.rows.map((row: Record<string, unknown>) => {
    const out: Record<string, unknown> = {};
    for (const c of cols) out[c.key] = row[c.name];
    return out as T;
  });
}

export async function deleteRows(
  client: pg.ClientBase,
  table: PgTable,
  keyProperty: string | readonly string[],
  keys: readonly RowKey[],
): Promise<void> {
  if (keys.length === 0) return;
  const { where, params } = keyFilter(
    table,
    typeof keyProperty === 'string' ? [keyProperty] : keyProperty,
    keys,
  );
  await client.query({
    ...named(`delete from ${quote(getTableName(table))} where ${where}`),
    values: params,
  });
}
