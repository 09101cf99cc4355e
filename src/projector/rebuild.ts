import type pg from 'pg';
import { assertIdentifier } from '../db/client.ts';

/**
 * The projector's rebuild mode on the database side, the way the fastest event stores rebuild a read
 * model: the fresh schema is loaded without the indexes the fold never reads through, and without the
 * per-statement balance trigger; both come back once at the end, over the whole rebuilt journal, with
 * the same guarantees (a unique index built over every row refuses a duplicate just as it would have
 * refused the insert; one balance query checks every entry the trigger would have checked).
 */

/** Indexes the fold reads through while it folds (besides primary keys): they stay during the load. */
const READ_BY_THE_FOLD = new Set([
  'dead_letters_open_idx', // open dead letters of a batch's keys
  'event_journal_parked_idx', // events held behind a dead letter
  'ledger_postings_swap_idx', // the postings in force of a batch's swaps
]);

const BALANCE_TRIGGER = 'ledger_postings_balanced';
const DEFERRED = 'rebuild_deferred_indexes';

export class RebuildCheckError extends Error {
  override name = 'RebuildCheckError';
}

/**
 * Readies a freshly migrated schema for a bulk load: drops every secondary index the fold does not read
 * through (their definitions kept in the schema, so a finish after a crash still has them) and disables
 * the balance trigger. Run once, before the first event.
 */
export async function prepareRebuild(client: pg.ClientBase, schema: string): Promise<{ deferred: string[] }> {
  assertIdentifier(schema);
  await client.query('begin');
  try {
    await client.query(
      `create table ${schema}.${DEFERRED} (index_name text primary key, definition text not null)`,
    );
    const r = await client.query<{ indexname: string; indexdef: string }>(
      `select i.indexname, i.indexdef from pg_indexes i
        where i.schemaname = $1
          and not exists (select 1 from pg_constraint c
                           where c.conname = i.indexname and c.connamespace = $1::regnamespace)
        order by i.indexname`,
      [schema],
    );
    const deferred = r.rows.filter((row) => !READ_BY_THE_FOLD.has(row.indexname));
    for (const row of deferred) {
      await client.query(`insert into ${schema}.${DEFERRED} values ($1, $2)`, [row.indexname, row.indexdef]);
      await client.query(`drop index ${schema}.${assertIdentifier(row.indexname)}`);
    }
    await client.query(`alter table ${schema}.ledger_postings disable trigger ${BALANCE_TRIGGER}`);
    await client.query('commit');
    return { deferred: deferred.map((row) => row.indexname) };
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  }
}

/** An entry whose lines do not sum to zero in a currency, as the balance trigger would have refused it. */
export interface UnbalancedEntry {
  entryId: string;
  entryKind: string;
  currency: string;
  total: string;
}

/**
 * Ends a bulk load: checks the ledger's balance rule once over every posting, builds the deferred
 * indexes (a unique one refuses a duplicate here), and enables the balance trigger again, all in one
 * transaction. A failed check throws RebuildCheckError and leaves the schema as loaded (never promotable:
 * it keeps its deferred-index table), for inspection.
 */
export async function finishRebuild(
  client: pg.ClientBase,
  schema: string,
): Promise<{ built: string[]; postings: number }> {
  assertIdentifier(schema);
  await client.query('begin');
  try {
    // Index builds sort in memory when they can: one sort per index, not a merge on disk.
    await client.query(`set local maintenance_work_mem = '256MB'`);
    const unbalanced = (
      await client.query<{ entry_id: string; entry_kind: string; currency: string; total: string }>(
        `select entry_id, entry_kind, currency, sum(amount)::text as total from ${schema}.ledger_postings
          group by entry_id, entry_kind, currency having sum(amount) <> 0
          order by entry_id, entry_kind, currency limit 6`,
      )
    ).rows;
    if (unbalanced.length > 0) {
      const shown = unbalanced
        .slice(0, 5)
        .map((u) => `${u.entry_id} (${u.entry_kind}) sums to ${u.total} ${u.currency}`)
        .join('; ');
      throw new RebuildCheckError(
        `the rebuilt ledger does not balance: ${shown}${unbalanced.length > 5 ? '; …' : ''}`,
      );
    }
    const deferred = await client.query<{ index_name: string; definition: string }>(
      `select index_name, definition from ${schema}.${DEFERRED} order by index_name`,
    );
    for (const row of deferred.rows) {
      try {
        await client.query(row.definition);
      } catch (e) {
        throw new RebuildCheckError(
          `rebuilding index ${row.index_name} failed: ${(e as Error).message}` +
            ((e as { detail?: string }).detail ? ` (${(e as { detail?: string }).detail})` : ''),
        );
      }
    }
    await client.query(`alter table ${schema}.ledger_postings enable trigger ${BALANCE_TRIGGER}`);
    await client.query(`drop table ${schema}.${DEFERRED}`);
    await client.query('commit');
    return {
      built: deferred.rows.map((row) => row.index_name),
      postings: Number(
        (await client.query<{ n: string }>(`select count(*) as n from ${schema}.ledger_postings`)).rows[0]!.n,
      ),
    };
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  }
}

/** Whether a schema is a bulk load not yet finished (its indexes and balance trigger not back). */
export async function isUnfinishedRebuild(client: pg.ClientBase, schema: string): Promise<boolean> {
  const r = await client.query(
    `select 1 from information_schema.tables where table_schema = $1 and table_name = $2`,
    [schema, DEFERRED],
  );
  return (r.rowCount ?? 0) > 0;
}
