import type pg from 'pg';
import { assertIdentifier } from '../db/client.ts';

/**
 * The projector's rebuild mode on the database side, the way the fastest event stores rebuild a read
 * model: the fresh schema is loaded without the plain (non-unique) indexes the fold never reads through,
 * and they are built once at the end, one sort per index instead of an insert per row.
 *
 * Every guard that can refuse an event stays on during the load: primary keys, unique indexes, checks,
 * the final-status guard and the ledger balance trigger (one index probe per entry since migration 0007).
 * The live projector journals an event whose effects the database refused as rejected and goes on; a
 * rebuild must refuse the same events at the same point, or it would fold them and diverge from the
 * state it is meant to equal. A deferred plain index refuses nothing, so building it later changes no
 * outcome.
 */

/** Plain indexes the fold reads through while it folds: they stay during the load. */
const READ_BY_THE_FOLD = new Set([
  'dead_letters_open_idx', // open dead letters of a batch's keys
  'event_journal_parked_idx', // events held behind a dead letter
  'ledger_postings_swap_idx', // the postings in force of a batch's swaps
]);

const DEFERRED = 'rebuild_deferred_indexes';

export class RebuildCheckError extends Error {
  override name = 'RebuildCheckError';
}

/**
 * Readies a freshly migrated schema for a bulk load: drops every plain index the fold does not read
 * through, keeping their definitions in the schema (so a finish after a crash still has them). Run once,
 * before the first event.
 */
export async function prepareRebuild(client: pg.ClientBase, schema: string): Promise<{ deferred: string[] }> {
  assertIdentifier(schema);
  await client.query('begin');
  try {
    await client.query(
      `create table ${schema}.${DEFERRED} (index_name text primary key, definition text not null)`,
    );
    // Not unique, not a constraint's, not partial to a rule: a plain lookup index.
    const r = await client.query<{ indexname: string; indexdef: string }>(
      `select i.indexname, i.indexdef from pg_indexes i
         join pg_class c on c.relname = i.indexname and c.relnamespace = $1::text::regnamespace
         join pg_index x on x.indexrelid = c.oid
        where i.schemaname = $1::text and not x.indisunique
          and not exists (select 1 from pg_constraint k where k.conindid = c.oid)
        order by i.indexname`,
      [schema],
    );
    const deferred = r.rows.filter((row) => !READ_BY_THE_FOLD.has(row.indexname));
    for (const row of deferred) {
      await client.query(`insert into ${schema}.${DEFERRED} values ($1, $2)`, [row.indexname, row.indexdef]);
      await client.query(`drop index ${schema}.${assertIdentifier(row.indexname)}`);
    }
    await client.query('commit');
    return { deferred: deferred.map((row) => row.indexname) };
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  }
}

/**
 * Ends a bulk load: builds the deferred indexes in one transaction. A failure throws RebuildCheckError
 * and leaves the schema as loaded (never promotable: it keeps its deferred-index table), for inspection.
 */
export async function finishRebuild(client: pg.ClientBase, schema: string): Promise<{ built: string[] }> {
  assertIdentifier(schema);
  await client.query('begin');
  try {
    // Index builds sort in memory when they can: one sort per index, not a merge on disk.
    await client.query(`set local maintenance_work_mem = '256MB'`);
    const deferred = await client.query<{ index_name: string; definition: string }>(
      `select index_name, definition from ${schema}.${DEFERRED} order by index_name`,
    );
    for (const row of deferred.rows) {
      try {
        await client.query(row.definition);
      } catch (e) {
        throw new RebuildCheckError(`building index ${row.index_name} failed: ${(e as Error).message}`);
      }
    }
    await client.query(`drop table ${schema}.${DEFERRED}`);
    await client.query('commit');
    return { built: deferred.rows.map((row) => row.index_name) };
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  }
}

/** Whether a schema is a bulk load not yet finished (its deferred indexes not built). */
export async function isUnfinishedRebuild(client: pg.ClientBase, schema: string): Promise<boolean> {
  const r = await client.query(
    `select 1 from information_schema.tables where table_schema = $1 and table_name = $2`,
    [schema, DEFERRED],
  );
  return (r.rowCount ?? 0) > 0;
}
