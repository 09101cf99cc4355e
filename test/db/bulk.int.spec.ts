import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { projection as tables } from '../../src/db/projection.ts';
import { arrayLiteral, copyRows, openCopy, readRows, writeRows } from '../../src/db/bulk.ts';
import { freshProjection } from '../support/context.ts';

/**
 * COPY's text format is rendered by hand on the projector's hot path (escaping only the fields that need
 * it): every text that COPY could misread must come back exactly, an empty text apart from NULL.
 */
describe('copyRows round trip (real Postgres)', () => {
  let projection: { schema: string; pool: pg.Pool };
  beforeAll(async () => {
    projection = await freshProjection('bulk_copy');
  });
  afterAll(async () => {
    await projection?.pool.end();
  });

  const awkward = [
    '',
    ' leading and trailing ',
    'a,b',
    'say "hi"',
    'two\nlines',
    'carriage\rreturn',
    '\\.',
    '\\',
    'back\\slash',
    'NULL',
    '\\N',
    'ünïcödé ✓',
    '"',
    'tab\there',
    '\\t literally',
    '{"json": "like", "a": [1, 2]}',
    '{}',
    '{a,b}',
    'NULL ',
    '\u0001 control',
  ];

  it('brings every awkward text back exactly, and NULL as NULL', async () => {
    const at = new Date('2026-11-23T12:00:00.123Z');
    const rows = awkward.map((text, i) => ({
      conflictId: `c-${i}`,
      eventId: '01a2087c-759d-720f-a839-05c35a8c7a02',
      providerId: 'partner-a',
      swapId: `s-${i}`,
      field: 'status',
      finalValue: text,
      reportedValue: i % 2 === 0 ? null : text,
      source: 'webhook',
      occurredAt: at,
      recordedAt: at,
    }));
    const client = await projection.pool.connect();
    try {
      await copyRows(client, tables.statusConflicts, rows);
      const back = await readRows<(typeof rows)[number]>(
        client,
        tables.statusConflicts,
        'conflictId',
        rows.map((r) => r.conflictId),
      );
      const byId = new Map(back.map((r) => [r.conflictId, r]));
      for (const r of rows) {
        const b = byId.get(r.conflictId)!;
        expect(b.finalValue, JSON.stringify(r.finalValue)).toBe(r.finalValue);
        expect(b.reportedValue, JSON.stringify(r.reportedValue)).toBe(r.reportedValue);
        expect(new Date(b.occurredAt).toISOString()).toBe(at.toISOString());
      }
    } finally {
      client.release();
    }
  });

  it('brings a JSON payload holding every awkward text back as the same value', async () => {
    const payload = { texts: awkward, nested: { quote: '"', backslash: '\\', newline: '\n' }, n: null };
    const row = {
      eventId: '01a2087c-759d-720f-a839-05c35a8c7a0f',
      topic: 't',
      partition: 0,
      offset: 1n,
      eventType: 'StatusReported',
      swapId: 's-json',
      aggregateKey: 'swap:partner-a:s-json',
      providerId: 'partner-a',
      source: 'webhook',
      occurredAt: new Date('2026-11-23T12:00:00Z'),
      recordedAt: new Date('2026-11-23T12:00:00Z'),
      outcome: 'noop',
      reason: 'a\treason\nover lines',
      changes: null,
      payload,
    };
    const client = await projection.pool.connect();
    try {
      await copyRows(client, tables.eventJournal, [row]);
      const [back] = await readRows<typeof row>(client, tables.eventJournal, 'eventId', [row.eventId]);
      expect(back!.payload).toEqual(payload);
      expect(back!.reason).toBe(row.reason);
      expect(back!.changes).toBeNull();
    } finally {
      client.release();
    }
  });

  it('writes and finds rows through array parameters with every awkward text, and upserts over them', async () => {
    const at = new Date('2026-11-23T12:00:00.123Z');
    const rows = awkward.map((text, i) => ({
      conflictId: `w-${i}-${text}`, // the awkward text in the key too: it must find its row again
      eventId: '01a2087c-759d-720f-a839-05c35a8c7a10',
      providerId: 'partner-a',
      swapId: `s-${i}`,
      field: 'status',
      finalValue: text,
      reportedValue: i % 3 === 0 ? null : text,
      source: 'webhook',
      occurredAt: at,
      recordedAt: at,
    }));
    const client = await projection.pool.connect();
    try {
      await writeRows(client, tables.statusConflicts, rows, { update: ['conflictId'] });
      await writeRows(
        client,
        tables.statusConflicts,
        rows.map((r) => ({ ...r, source: 'poll' })),
        { update: ['conflictId'] },
      );
      const back = await readRows<(typeof rows)[number]>(
        client,
        tables.statusConflicts,
        'conflictId',
        rows.map((r) => r.conflictId),
      );
      expect(back).toHaveLength(rows.length);
      const byId = new Map(back.map((r) => [r.conflictId, r]));
      for (const r of rows) {
        const b = byId.get(r.conflictId)!;
        expect(b, JSON.stringify(r.conflictId)).toBeDefined();
        expect(b.finalValue, JSON.stringify(r.finalValue)).toBe(r.finalValue);
        expect(b.reportedValue, JSON.stringify(r.reportedValue)).toBe(r.reportedValue);
        expect(b.source).toBe('poll');
        expect(new Date(b.occurredAt).toISOString()).toBe(at.toISOString());
      }
    } finally {
      client.release();
    }
  });

  it('renders an array literal Postgres reads back element for element', async () => {
    const values = [...awkward, null];
    const r = await projection.pool.query<{ v: (string | null)[] }>('select $1::text[] as v', [
      arrayLiteral(values),
    ]);
    expect(r.rows[0]!.v).toEqual(values);
  });
});

/**
 * The fold streams its journal through openCopy while it computes the rest of the batch: Postgres must
 * get the rows as they come, and an error or an abandon must leave nothing of the COPY behind.
 */
describe('openCopy: a COPY fed while the caller computes (real Postgres)', () => {
  let projection: { schema: string; pool: pg.Pool };
  beforeAll(async () => {
    projection = await freshProjection('bulk_open_copy');
  });
  afterAll(async () => {
    await projection?.pool.end();
  });

  const at = new Date('2026-11-23T12:00:00.123Z');
  const conflict = (id: string) => ({
    conflictId: id,
    eventId: '01a2087c-759d-720f-a839-05c35a8c7a02',
    providerId: 'partner-a',
    swapId: `s-${id}`,
    field: 'status',
    finalValue: 'FINISHED',
    reportedValue: 'tab\there',
    source: 'webhook',
    occurredAt: at,
    recordedAt: at,
  });
  const count = async (prefix: string) =>
    Number(
      (
        await projection.pool.query<{ n: string }>(
          'select count(*) as n from status_conflicts where conflict_id like $1',
          [`${prefix}%`],
        )
      ).rows[0]!.n,
    );

  it('hands rows to Postgres before it ends: another session sees the COPY progress while it is open', async () => {
    const client = await projection.pool.connect();
    try {
      await client.query('begin');
      const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const copy = openCopy(client, tables.statusConflicts);
      let seenWhileOpen = 0;
      for (let i = 0; i < 3000; i++) {
        copy.push(conflict(`stream-${i}`));
        if (i % 500 === 499) {
          await copy.sent();
          // Postgres reports the rows it has loaded so far to every session.
          for (let tries = 0; tries < 50 && seenWhileOpen === 0; tries++) {
            const p = await projection.pool.query<{ n: string }>(
              'select tuples_processed as n from pg_stat_progress_copy where pid = $1',
              [pid],
            );
            seenWhileOpen = Number(p.rows[0]?.n ?? 0);
            if (seenWhileOpen === 0) await new Promise((r) => setTimeout(r, 20));
          }
        }
      }
      expect(seenWhileOpen).toBeGreaterThan(0);
      expect(seenWhileOpen).toBeLessThan(3000);
      await copy.end();
      await client.query('commit');
    } finally {
      client.release();
    }
    expect(await count('stream-')).toBe(3000);
  });

  it('rejects end() with the database error when a row breaks a key mid-stream; the rollback leaves none of it', async () => {
    const client = await projection.pool.connect();
    try {
      await copyRows(client, tables.statusConflicts, [conflict('dup-500')]);
      await client.query('begin');
      const copy = openCopy(client, tables.statusConflicts);
      for (let i = 0; i < 2000; i++) {
        copy.push(conflict(`dup-${i}`));
        if (i % 400 === 399) await copy.sent(); // rows keep coming after Postgres refused row 500
      }
      await expect(copy.end()).rejects.toMatchObject({ code: '23505' });
      await client.query('rollback');
      expect((await client.query<{ one: number }>('select 1 as one')).rows[0]!.one).toBe(1);
    } finally {
      client.release();
    }
    expect(await count('dup-')).toBe(1);
  });

  it('abort() fails the COPY and its transaction: nothing is written, the connection stays usable', async () => {
    const client = await projection.pool.connect();
    try {
      await client.query('begin');
      const copy = openCopy(client, tables.statusConflicts);
      for (let i = 0; i < 1000; i++) copy.push(conflict(`abort-${i}`));
      await copy.sent();
      await copy.abort(new Error('the fold failed'));
      await expect(client.query('select 1')).rejects.toMatchObject({ code: '25P02' });
      await client.query('rollback');
    } finally {
      client.release();
    }
    expect(await count('abort-')).toBe(0);
  });
});
