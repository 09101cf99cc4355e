import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { projection as tables } from '../../src/db/client.ts';
import { arrayLiteral, copyRows, readRows, writeRows } from '../../src/db/bulk.ts';
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
