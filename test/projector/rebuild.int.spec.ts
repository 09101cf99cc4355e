import { afterAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { projection as tables } from '../../src/db/projection.ts';
import { copyRows } from '../../src/db/bulk.ts';
import { promote, PromoteRefusedError } from '../../src/ops/replay.ts';
import {
  finishRebuild,
  isUnfinishedRebuild,
  prepareRebuild,
  RebuildCheckError,
} from '../../src/projector/rebuild.ts';
import { freshProjection, testStack } from '../support/context.ts';

/**
 * The bulk load's database side (issue 15): it leaves out only plain indexes, built at the end; every guard
 * that refuses an event on the live schema refuses it during the load too (a rebuild must refuse the same
 * events to equal the live state), and a load whose finish fails is never promoted.
 */
describe('rebuild mode: a bulk load checked once at the end (real Postgres)', () => {
  const opened: pg.Pool[] = [];
  afterAll(async () => {
    for (const pool of opened) await pool.end();
  });

  async function loading(label: string) {
    const p = await freshProjection(label);
    opened.push(p.pool);
    const client = await p.pool.connect();
    try {
      const { deferred } = await prepareRebuild(client, p.schema);
      return { ...p, deferred };
    } finally {
      client.release();
    }
  }

  const posting = (entryId: string, line: number, amount: string, currency = 'btc') => ({
    postingId: `${entryId}:${line}`,
    entryId,
    line,
    entryKind: 'final',
    swapId: 's-1',
    swapVersion: 3,
    providerId: 'partner-a',
    account: line === 1 ? 'user_payin' : 'partner_clearing',
    currency,
    amount,
    effectiveAt: new Date('2026-11-23T12:00:00Z'),
    recordedAt: new Date('2026-11-23T12:00:01Z'),
  });

  async function indexNames(pool: pg.Pool, schema: string): Promise<string[]> {
    const r = await pool.query<{ indexname: string }>(
      'select indexname from pg_indexes where schemaname = $1 order by 1',
      [schema],
    );
    return r.rows.map((row) => row.indexname);
  }

  it('defers only plain indexes the fold does not read through, and builds them at the finish', async () => {
    const { schema, pool, deferred } = await loading('rebuild_ok');
    expect(deferred).toContain('event_journal_swap_idx');
    expect(deferred).toContain('ledger_postings_effective_idx');
    // Unique indexes refuse events, as on the live schema: they stay. So do the ones the fold reads through.
    expect(deferred).not.toContain('event_journal_position_idx');
    expect(deferred).not.toContain('ledger_postings_pkey');
    expect(deferred).not.toContain('ledger_postings_swap_idx');
    expect(await indexNames(pool, schema)).not.toContain('event_journal_swap_idx');
    const client = await pool.connect();
    try {
      expect(await isUnfinishedRebuild(client, schema)).toBe(true);
      const finished = await finishRebuild(client, schema);
      expect(finished.built.sort()).toEqual([...deferred].sort());
      expect(await isUnfinishedRebuild(client, schema)).toBe(false);
      expect(await indexNames(pool, schema)).toContain('event_journal_swap_idx');
    } finally {
      client.release();
    }
  });

  it('refuses during the load what the live schema refuses: an unbalanced entry, an extended one, a duplicate position', async () => {
    const { pool } = await loading('rebuild_guards');
    const client = await pool.connect();
    try {
      await expect(
        copyRows(client, tables.ledgerPostings, [
          posting('01a2087c-759d-720f-a839-05c35a8c7a03', 1, '1.5'),
          posting('01a2087c-759d-720f-a839-05c35a8c7a03', 2, '-1.4'),
        ]),
      ).rejects.toMatchObject({ message: expect.stringMatching(/does not balance/) });
      await copyRows(client, tables.ledgerPostings, [
        posting('01a2087c-759d-720f-a839-05c35a8c7a01', 1, '1.5'),
        posting('01a2087c-759d-720f-a839-05c35a8c7a01', 2, '-1.5'),
      ]);
      await expect(
        copyRows(client, tables.ledgerPostings, [
          posting('01a2087c-759d-720f-a839-05c35a8c7a01', 3, '2'),
          posting('01a2087c-759d-720f-a839-05c35a8c7a01', 4, '-2'),
        ]),
      ).rejects.toMatchObject({ message: expect.stringMatching(/already exists/) });
      const row = {
        eventId: '01a2087c-759d-720f-a839-05c35a8c7a04',
        topic: 't',
        partition: 0,
        offset: 7n,
        eventType: 'StatusReported',
        swapId: 's-1',
        aggregateKey: 'swap:partner-a:s-1',
        providerId: 'partner-a',
        source: 'webhook',
        occurredAt: new Date('2026-11-23T12:00:00Z'),
        recordedAt: new Date('2026-11-23T12:00:00Z'),
        outcome: 'noop',
        reason: null,
        changes: null,
        payload: {},
      };
      await expect(
        copyRows(client, tables.eventJournal, [
          row,
          { ...row, eventId: '01a2087c-759d-720f-a839-05c35a8c7a05' },
        ]),
      ).rejects.toMatchObject({ code: '23505' });
    } finally {
      client.release();
    }
  });

  it('a finish that fails says so, leaves the schema unfinished, and such a schema is never promoted', async () => {
    const { schema, pool } = await loading('rebuild_failed');
    const client = await pool.connect();
    try {
      await client.query(
        `insert into ${schema}.rebuild_deferred_indexes values ('broken_idx', 'create index broken_idx on ${schema}.no_such_table (x)')`,
      );
      const failure = await finishRebuild(client, schema).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(RebuildCheckError);
      expect((failure as Error).message).toMatch(/broken_idx/);
      expect(await isUnfinishedRebuild(client, schema)).toBe(true);
    } finally {
      client.release();
    }
    await expect(promote(testStack().databaseUrl, `${schema}_live`, schema)).rejects.toBeInstanceOf(
      PromoteRefusedError,
    );
  });
});
