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
  if (json) {
    // JSON text holds no raw tab or line break (JSON.stringify escapes them): only its backslashes.
    text = JSON.stringify(value);
    return text.includes('\\') ? text.replaceAll('\\', '\\\\') : text;
  }
  if (typeof value === 'string') text = value;
  else if (value instanceof Date) return value.toISOString();
  else return String(value); // numbers, bigints, booleans: nothing to escape
  return NEEDS_ESCAPE.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!) : text;
}

/**
 * Inserts rows with COPY: the fastest way into Postgres, for tables that are only ever appended to (the
 * journal). The text format, not CSV: a JSON payload is full of quotes that CSV would double and Postgres
 * undo, where text escapes only backslashes and line breaks. A conflict fails the statement, like an
 * insert without ON CONFLICT. The text is rendered as the socket takes it, never all at once (renderCopy
 * renders it ahead, for a caller with time to spare before the COPY can run).
 */
export async function copyRows<T extends object>(
  client: pg.ClientBase,
  table: PgTable,
  rows: readonly T[],
): Promise<void> {
  if (rows.length === 0) return;
  const cols = columnsOf(table);
  const chunks = function* () {
    let chunk = '';
    for (const row of rows) {
      chunk += copyLine(cols, row as Record<string, unknown>);
      if (chunk.length > CHUNK_CHARS) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  };
  await pipeline(Readable.from(chunks()), copyQuery(client, cols, table));
}

/** Inserts rows; on a conflict of the named key columns, replaces every other column (or does nothing). */
export async function writeRows<T extends object>(
  client: pg.ClientBase,
  table: PgTable,
  rows: readonly T[],
  conflict: Conflict,
): Promise<void> {
  await runWrite(client, renderUpsert(table, rows, conflict));
}

export async function deleteRows(
  client: pg.ClientBase,
  table: PgTable,
  keyProperty: string | readonly string[],
  keys: readonly RowKey[],
): Promise<void> {
  await runWrite(client, renderDelete(table, keyProperty, keys));
}

/**
 * A write rendered ahead of running it: a statement with its parameters, or COPY text. The fold renders
 * its writes while Postgres still loads its streamed journal, then runs them (runWrite).
 */
export type RenderedWrite =
  | { kind: 'statement'; query: { name: string; text: string; values: unknown[] } }
  | { kind: 'copy'; table: PgTable; chunks: string[] };

/** Runs a rendered write; undefined (nothing to write) runs nothing. */
export async function runWrite(client: pg.ClientBase, write: RenderedWrite | undefined): Promise<void> {
  if (!write) return;
  if (write.kind === 'statement') {
    await client.query(write.query);
    return;
  }
  const copy = copyText(client, write.table);
  for (const chunk of write.chunks) copy.write(chunk);
  await copy.end();
}

/** One row of COPY's text format. */
function copyLine(cols: readonly ColumnInfo[], row: Record<string, unknown>): string {
  let line = copyField(row[cols[0]!.key], cols[0]!.json);
  for (let i = 1; i < cols.length; i++) line += '\t' + copyField(row[cols[i]!.key], cols[i]!.json);
  return line + '\n';
}

const CHUNK_CHARS = 64 * 1024;

export function renderCopy<T extends object>(table: PgTable, rows: readonly T[]): RenderedWrite | undefined {
  if (rows.length === 0) return undefined;
  const cols = columnsOf(table);
  const chunks: string[] = [];
  let chunk = '';
  for (const row of rows) {
    chunk += copyLine(cols, row as Record<string, unknown>);
    if (chunk.length > CHUNK_CHARS) {
      chunks.push(chunk);
      chunk = '';
    }
  }
  if (chunk) chunks.push(chunk);
  return { kind: 'copy', table, chunks };
}

/** A COPY into `table` fed with text (copyText): nothing else runs on its connection until it settles. */
interface CopyText {
  write(text: string): void;
  /** Ends the COPY: resolves once Postgres holds every row, rejects with its error (e.g. 23505). */
  end(): Promise<void>;
  /** Abandons the COPY (CopyFail): none of its rows is written, and the transaction is failed. */
  abort(reason: Error): Promise<void>;
}

const copyQuery = (client: pg.ClientBase, cols: readonly ColumnInfo[], table: PgTable) =>
  client.query(
    copyStreams.from(
      `copy ${quote(getTableName(table))} (${cols.map((c) => quote(c.name)).join(', ')}) from stdin`,
    ),
  );

function copyText(client: pg.ClientBase, table: PgTable): CopyText {
  const stream = copyQuery(client, columnsOf(table), table);
  // Once Postgres answered with an error the stream has no connection left: nothing more is written to it.
  let failed = false;
  const done = new Promise<void>((resolve, reject) => {
    stream.on('finish', resolve);
    stream.on('error', (e: Error) => {
      failed = true;
      reject(e);
    });
  });
  done.catch(() => {}); // observed by end() or abort()
  return {
    write(text) {
      if (!failed) stream.write(text);
    },
    async end() {
      if (!failed) stream.end();
      await done;
    },
    async abort(reason) {
      if (!failed) stream.destroy(reason);
      await done.catch(() => {});
    },
  };
}

/** A COPY being written row by row (openCopy). */
export interface RowCopy<T> {
  /** Renders a row; rendered rows go to Postgres in chunks of about 64 KiB. */
  push(row: T): void;
  /**
   * Sends what is rendered and lets the event loop turn once, so the chunks reach the socket (and the
   * first turn reads Postgres's go-ahead): Postgres then loads them while the caller goes on computing.
   */
  sent(): Promise<void>;
  /** Ends the COPY: resolves once Postgres holds every row, rejects with its error (e.g. 23505). */
  end(): Promise<void>;
  /** Abandons the COPY (CopyFail): none of its rows is written, and the transaction is failed. */
  abort(reason: Error): Promise<void>;
}

/**
 * Opens a COPY into `table` on `client`, to be fed while the caller computes the rows: the fold streams
 * its journal this way, so Postgres loads the batch's largest write during the fold rather than after it.
 * The connection runs nothing else until end() or abort() has settled.
 */
export function openCopy<T extends object>(client: pg.ClientBase, table: PgTable): RowCopy<T> {
  const cols = columnsOf(table);
  const copy = copyText(client, table);
  let chunk = '';
  const send = () => {
    if (chunk) copy.write(chunk);
    chunk = '';
  };
  return {
    push(row) {
      chunk += copyLine(cols, row as Record<string, unknown>);
      if (chunk.length > CHUNK_CHARS) send();
    },
    sent() {
      send();
      return new Promise((resolve) => setImmediate(resolve));
    },
    end() {
      send();
      return copy.end();
    },
    abort: (reason) => copy.abort(reason),
  };
}

export type Conflict = { update: string[] } | 'nothing' | 'error';

export function renderUpsert<T extends object>(
  table: PgTable,
  rows: readonly T[],
  conflict: Conflict,
): RenderedWrite | undefined {
  if (rows.length === 0) return undefined;
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
  return { kind: 'statement', query: { ...named(sql), values: params } };
}

export function renderDelete(
  table: PgTable,
  keyProperty: string | readonly string[],
  keys: readonly RowKey[],
): RenderedWrite | undefined {
  if (keys.length === 0) return undefined;
  const { where, params } = keyFilter(
    table,
    typeof keyProperty === 'string' ? [keyProperty] : keyProperty,
    keys,
  );
  return {
    kind: 'statement',
    query: { ...named(`delete from ${quote(getTableName(table))} where ${where}`), values: params },
  };
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
