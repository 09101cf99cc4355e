import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { ConsoleDb } from '../../src/console/db.ts';
import { mismatchesCsv, openMismatches } from '../../src/console/pages/reconciliation.ts';
import { swapLive } from '../../src/console/pages/swap.ts';
import { findSwaps } from '../../src/console/pages/swaps.ts';
import type { ReconciliationCheck, SwapEvent } from '../../src/events/types.ts';
import { outcomeFromProjection } from '../../src/gateway/settle.ts';
import { ensureFinanceViews } from '../../src/ledger/finance-views.ts';
import { financeReport, formatReportCsv } from '../../src/ledger/report.ts';
import { createLogger } from '../../src/observability/log.ts';
import { projectBatch } from '../../src/projector/batch.ts';
import { statusReported, swapCreated, swapReconciled } from '../../src/testing/events.ts';
import { freshProjectionAtStart, testStack, uniqueName } from '../support/context.ts';

/**
 * Issue 34 point 6: a swap is (providerId, swapId) everywhere. Two partners issue the same swapId; the
 * report, the console's mismatch views and export, and `requests resolve`'s lookup of the creation event
 * keep them apart. Point 9: NOT_APPLICABLE checks are never listed among mismatches; the swap page shows
 * the refund hash, the status class and closed_at. Folded into real Postgres by the projector's batch writer.
 */
const TOPIC = 'identity';
const A = 'partner-a';
const B = 'partner-b';
const SHARED = 'shared-1';
const D = (hh: number, mm = 0) => new Date(Date.UTC(2026, 10, 3, hh, mm)).toISOString();
const FINISHED = {
  amount: '0.2475',
  providerFees: '0.0005',
  referralFees: '0.0001',
  payoutNetworkFees: '0.002',
  payinTransactionId: 'in',
  payoutTransactionId: 'out',
};

const check = (name: string, verdict: string, detail: string | null = null): ReconciliationCheck => ({
  name,
  verdict,
  expected: null,
  actual: null,
  delta: null,
  tolerance: null,
  detail,
});

function reconciled(providerId: string, basedOn: string, time: string, checks: ReconciliationCheck[]) {
  const e = swapReconciled(SHARED, basedOn, 'MISMATCH', { providerId, time });
  return { ...e, payload: { ...e.payload, checks } };
}

const createdA = swapCreated(SHARED, {
  providerId: A,
  requestId: 'req-a',
  time: D(9),
  created: { payinAddress: 'payin-of-a' },
});
const createdB = swapCreated(SHARED, {
  providerId: B,
  requestId: 'req-b',
  time: D(9),
  created: { payinAddress: 'payin-of-b' },
});
const finalA = statusReported(SHARED, 'FINISHED', FINISHED, { providerId: A, time: D(10) });
const finalB = statusReported(
  SHARED,
  'REFUNDED',
  { payinTransactionId: 'in-b', refundTransactionId: 'refund-tx-b' },
  { providerId: B, time: D(10) },
);
const expired = swapCreated('exp-1', { providerId: A, requestId: 'req-exp', time: D(9) });
const expiredReport = statusReported('exp-1', 'EXPIRED', {}, { providerId: A, time: D(11) });
// Both verdicts at the same time: the report's order (time, swapId, check) interleaves their checks.
const verdictA = reconciled(A, finalA.eventId, D(12), [
  check('amount.to_wallet', 'MISMATCH', 'A: short'),
  check('fee.referral', 'MISMATCH', 'A: referral cut'),
]);
const verdictB = reconciled(B, finalB.eventId, D(12), [
  check('amount.to_wallet', 'NOT_APPLICABLE', 'B: a refund pays the user nothing'),
  check('hash.refund', 'MISMATCH', 'B: refund to another address'),
]);
const EVENTS: SwapEvent[] = [createdA, createdB, finalA, finalB, expired, expiredReport, verdictA, verdictB];

describe('swap identity across partners, and what a finance view lists (real Postgres)', () => {
  const logger = createLogger({ level: 'silent' });
  let projection: { schema: string; pool: pg.Pool };
  let finance: string;
  let db: ConsoleDb;

  beforeAll(async () => {
    projection = await freshProjectionAtStart('identity', TOPIC);
    finance = uniqueName('finance', '_');
    const c = await projection.pool.connect();
    try {
      const r = await projectBatch(
        c,
        TOPIC,
        0,
        0n,
        EVENTS.map((event, i) => ({ position: { topic: TOPIC, partition: 0, offset: BigInt(i) }, event })),
      );
      expect(r.ok).toBe(true);
      await ensureFinanceViews(c, projection.schema, finance);
    } finally {
      c.release();
    }
    const outcomes = await projection.pool.query<{ event_type: string; outcome: string; reason: string }>(
      'select event_type, outcome, reason from event_journal order by "offset"',
    );
    expect(outcomes.rows.map((o) => `${o.event_type} ${o.outcome} ${o.reason ?? ''}`.trim())).toEqual(
      EVENTS.map((e) => expect.stringMatching(new RegExp(`^${e.eventType} applied`))),
    );
    db = new ConsoleDb(testStack().databaseUrl, projection.schema, finance, logger);
  });

  afterAll(async () => {
    await db?.close();
    await projection?.pool.end();
  });

  it('report: one mismatch per (provider, swapId), each with its own checks, NOT_APPLICABLE left out', async () => {
    const c = await projection.pool.connect();
    let report;
    try {
      report = await financeReport(c, { from: D(0), to: D(23) }, finance);
    } finally {
      c.release();
    }
    expect(
      report.mismatches.map((m) => [m.providerId, m.swapId, m.status, m.checks.map((k) => k.detail)]),
    ).toEqual([
      [A, SHARED, 'FINISHED', ['A: short', 'A: referral cut']],
      [B, SHARED, 'REFUNDED', ['B: refund to another address']],
    ]);
    const csv = formatReportCsv(report).filter((l) => l.startsWith('mismatches,'));
    expect(csv).toEqual([
      `mismatches,${A},${SHARED},FINISHED,${D(12)},amount.to_wallet,MISMATCH,,,,,A: short`,
      `mismatches,${A},${SHARED},FINISHED,${D(12)},fee.referral,MISMATCH,,,,,A: referral cut`,
      `mismatches,${B},${SHARED},REFUNDED,${D(12)},hash.refund,MISMATCH,,,,,B: refund to another address`,
    ]);
  });

  it('the finance mismatch view never lists a NOT_APPLICABLE check', async () => {
    const r = await projection.pool.query(
      `select provider_id, check_name, check_verdict from ${finance}.reconciliation_mismatches order by 1, check_no`,
    );
    expect(r.rows).toEqual([
      { provider_id: A, check_name: 'amount.to_wallet', check_verdict: 'MISMATCH' },
      { provider_id: A, check_name: 'fee.referral', check_verdict: 'MISMATCH' },
      { provider_id: B, check_name: 'hash.refund', check_verdict: 'MISMATCH' },
    ]);
  });

  it('console: the open mismatches and their CSV keep each partner apart, through the same reader', async () => {
    const rows = await openMismatches(db);
    expect(rows.map((r) => [r.provider_id, r.swap_id, r.check_name])).toEqual([
      [A, SHARED, 'amount.to_wallet'],
      [A, SHARED, 'fee.referral'],
      [B, SHARED, 'hash.refund'],
    ]);
    const lines = mismatchesCsv(rows).split('\r\n');
    expect(lines[0]).toBe(
      'provider_id,swap_id,status,reconciled_at,check_name,check_verdict,expected,actual,delta,tolerance,detail',
    );
    expect(lines[3]).toBe(
      `${B},${SHARED},REFUNDED,${D(12)},hash.refund,MISMATCH,,,,,B: refund to another address`,
    );
  });

  it('requests resolve: the creation event of the request, not of another partner with the same swapId', async () => {
    for (const [requestId, providerId, payin] of [
      ['req-a', A, 'payin-of-a'],
      ['req-b', B, 'payin-of-b'],
    ] as const) {
      const answer = await outcomeFromProjection(projection.pool, requestId);
      expect(answer?.status, requestId).toBe(201);
      expect(answer?.body, requestId).toMatchObject({
        requestId,
        swapId: SHARED,
        providerId,
        payinAddress: payin,
      });
    }
  });

  it('swap page: refund hash, status class, closed_at; a NOT_APPLICABLE check greyed', async () => {
    const refunded = (await swapLive(db, B, SHARED))!.text;
    expect(refunded).toMatch(/data-field="refund hash">refund-tx-b</);
    expect(refunded).toMatch(/data-field="status class"><span class="badge b-final">final</);
    expect(refunded).toContain('b-not_applicable');
    expect(refunded).toContain('B: a refund pays the user nothing');
    expect(refunded).not.toContain('A: short');
    const exp = (await swapLive(db, A, 'exp-1'))!.text;
    expect(exp).toMatch(/data-field="status class"><span class="badge b-closed">closed</);
    expect(exp).toMatch(/data-field="closed at"><time datetime="[^"]+">2026-11-03 11:00:00</);
  });

  it('swaps list: the CREATED status and the NOT_APPLICABLE filter find what they say', async () => {
    const na = await findSwaps(db, { verdict: 'NOT_APPLICABLE' });
    expect(na.map((s) => [s.provider_id, s.swap_id])).toEqual([[B, SHARED]]);
    expect((await findSwaps(db, { status: 'EXPIRED' })).map((s) => s.swap_id)).toEqual(['exp-1']);
  });
});
