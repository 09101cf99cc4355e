import { afterAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { projection as tables } from '../../src/db/client.ts';
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
 * The bulk load's database side (issue 15): what the load leaves out (secondary indexes, the balance
 * trigger) comes back at the end with the same guarantees, and a load that fails them is never promoted.
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

  it('loads without the deferred indexes and the trigger, then builds them and checks the balance once', async () => {
    const { schema, pool, deferred } = await loading('rebuild_ok');
    expect(deferred).toContain('event_journal_position_idx');
    expect(deferred).toContain('ledger_postings_entry_line_idx');
    expect(deferred).not.toContain('ledger_postings_swap_idx'); // the fold reads through it
    expect(await indexNames(pool, schema)).not.toContain('event_journal_position_idx');
    const client = await pool.connect();
    try {
      // Two statements for one entry: the trigger would refuse the second; the load takes both ...
      await copyRows(client, tables.ledgerPostings, [
        posting('01a2087c-759d-720f-a839-05c35a8c7a01', 1, '1.5'),
      ]);
      await copyRows(client, tables.ledgerPostings, [
        posting('01a2087c-759d-720f-a839-05c35a8c7a01', 2, '-1.5'),
      ]);
      expect(await isUnfinishedRebuild(client, schema)).toBe(true);
      // ... and the one check at the end finds the entry balanced.
      const finished = await finishRebuild(client, schema);
      expect(finished.built.sort()).toEqual([...deferred].sort());
      expect(finished.postings).toBe(2);
      expect(await isUnfinishedRebuild(client, schema)).toBe(false);
      expect(await indexNames(pool, schema)).toContain('event_journal_position_idx');
      // The trigger is back: an unbalanced insert is refused as on the live schema.
      await expect(
        copyRows(client, tables.ledgerPostings, [posting('01a2087c-759d-720f-a839-05c35a8c7a02', 1, '2')]),
      ).rejects.toMatchObject({ message: expect.stringMatching(/does not balance/) });
    } finally {
      client.release();
    }
  });

  it('an unbalanced entry fails the finish loudly, names the entry, and the schema is never promoted', async () => {
    const { schema, pool } = await loading('rebuild_unbalanced');
    const client = await pool.connect();
    try {
      await copyRows(client, tables.ledgerPostings, [
        posting('01a2087c-759d-720f-a839-05c35a8c7a03', 1, '1.5'),
        posting('01a2087c-759d-720f-a839-05c35a8c7a03', 2, '-1.4'),
      ]);
      const failure = await finishRebuild(client, schema).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(RebuildCheckError);
      expect((failure as Error).message).toMatch(/01a2087c-759d-720f-a839-05c35a8c7a03 .* sums to 0\.1 btc/);
      expect(await isUnfinishedRebuild(client, schema)).toBe(true); // left as loaded, for inspection
    } finally {
      client.release();
    }
    await expect(promote(testStack().databaseUrl, `${schema}_live`, schema)).rejects.toBeInstanceOf(
      PromoteRefusedError,
    );
  });

  it('a duplicate the unique index would have refused at insert fails the finish', async () => {
    const { schema, pool } = await loading('rebuild_duplicate');
    const client = await pool.connect();
    try {
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
      // Two journal rows at one position: only the deferred unique index can tell.
      await copyRows(client, tables.eventJournal, [
        row,
        { ...row, eventId: '01a2087c-759d-720f-a839-05c35a8c7a05' },
      ]);
      await expect(finishRebuild(client, schema)).rejects.toMatchObject({
        name: 'RebuildCheckError',
        message: expect.stringMatching(/event_journal_position_idx/),
      });
    } finally {
      client.release();
    }
  });
});
