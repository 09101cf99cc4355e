import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { migrateProjection } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { replay } from '../../src/ops/replay.ts';
import { createKafka } from '../../src/events/kafka.ts';
import type { ReconciliationCheck, SwapEvent } from '../../src/events/types.ts';
import { FINANCE_ROLE, ensureFinanceViews, financeViews } from '../../src/ledger/finance-views.ts';
import { financeReport, type FinanceReport } from '../../src/ledger/report.ts';
import { Decimal } from '../../src/money/decimal.ts';
import { lifecycleScenario } from '../../src/testing/scenarios.ts';
import { statusReported, swapCorrected, swapCreated, swapReconciled } from '../../src/testing/events.ts';
import { dropDatabase, ensureDatabase, withDatabase } from '../../scripts/stack/postgres.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { checksumOf, freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { runCli, runCliInProcess } from '../support/cli.ts';

/** 2026-11-<day> hh:mm UTC, as the events carry it. */
const D = (day: number, hh: number, mm = 0) => new Date(Date.UTC(2026, 10, day, hh, mm)).toISOString();
const P = 'partner-h';
const FEES = { providerFees: '0.0005', referralFees: '0.0001', payoutNetworkFees: '0.002' };
const FINISHED = { amount: '0.2475', ...FEES, payinTransactionId: 'in', payoutTransactionId: 'out' };

/** A fixed swap of partner-h: no request amount, the quote's source amount 0.015 BTC; BTC → ETH. */
function fixedSwap(id: string) {
  return swapCreated(id, {
    providerId: P,
    time: D(3, 9),
    request: { tradeMethod: 'fixed', quoteRef: `qr-${id}`, quoteId: `q-${id}`, amountFrom: null },
    created: {
      quote: {
        quoteRef: `qr-${id}`,
        quoteId: `q-${id}`,
        tradeMethod: 'fixed',
        currencyFrom: 'btc',
        currencyTo: 'eth',
        amountFrom: '0.015',
        amountTo: '0.25',
        ...FEES,
        expiry: D(3, 10),
        defaultSlippage: '0.01',
        minSlippage: null,
        maxSlippage: null,
        extraFieldsJson: null,
      },
    },
  });
}

const check = (name: string, verdict: string, detail: string | null = null): ReconciliationCheck => ({
  name,
  verdict,
  expected: verdict === 'MISMATCH' ? '0.25' : null,
  actual: verdict === 'MISMATCH' ? '0.2495' : null,
  delta: verdict === 'MISMATCH' ? '-0.0005' : null,
  tolerance: verdict === 'MISMATCH' ? '0' : null,
  detail,
});

function reconciled(
  swapId: string,
  basedOn: string,
  verdict: string,
  time: string,
  checks: ReconciliationCheck[],
) {
  const e = swapReconciled(swapId, basedOn, verdict, { providerId: P, time });
  return { ...e, payload: { ...e.payload, checks } };
}

// The hand-made swaps.
const fxFinal = statusReported('h-fx', 'FINISHED', FINISHED, { providerId: P, time: D(3, 10) });
const flWebhook = statusReported(
  'h-fl',
  'FINISHED',
  { amount: '0.2475' },
  { providerId: P, time: D(3, 11), source: 'webhook' },
);
const flPoll = statusReported('h-fl', 'FINISHED', FINISHED, { providerId: P, time: D(3, 11, 1) });
const rfFinal = statusReported(
  'h-rf',
  'REFUNDED',
  { payinTransactionId: 'in' },
  { providerId: P, time: D(3, 12) },
);
const exFinal = statusReported('h-ex', 'EXPIRED', {}, { providerId: P, time: D(3, 12, 30) });
const coFinal = statusReported('h-co', 'FINISHED', FINISHED, { providerId: P, time: D(3, 13) });
const coCorrection = swapCorrected(
  'h-co',
  { amount: '0.24', referralFees: '0.00012' },
  { providerId: P, time: D(5, 9) },
);
const handEvents: SwapEvent[] = [
  fixedSwap('h-fx'),
  fxFinal,
  swapCreated('h-fl', { providerId: P, time: D(3, 9) }),
  flWebhook,
  flPoll,
  swapCreated('h-rf', { providerId: P, time: D(3, 9) }),
  rfFinal,
  swapCreated('h-ex', { providerId: P, time: D(3, 9) }),
  exFinal,
  fixedSwap('h-co'),
  coFinal,
  reconciled('h-fx', fxFinal.eventId, 'MATCHED', D(3, 14), [check('amount.to_wallet', 'MATCHED')]),
  reconciled('h-co', coFinal.eventId, 'MISMATCH', D(3, 15), [
    check('status.final', 'MATCHED'),
    check('amount.to_wallet', 'MISMATCH', 'fixed: 0.0005 short of the signed amount'),
    check('quote.amount_to', 'WITHIN_TOLERANCE', 'signed above the quote'),
    check('fee.referral', 'WITHIN_TOLERANCE'),
    check('fee.extra', 'NOT_APPLICABLE'),
    check('hash.payout', 'UNVERIFIABLE', 'no payout hash, yet'),
  ]),
  reconciled('h-rf', rfFinal.eventId, 'UNVERIFIABLE', D(3, 16), [check('amount.to_wallet', 'UNVERIFIABLE')]),
  coCorrection,
  // A report for a swap never created: rejected by the fold, shown in finance.event_exceptions.
  statusReported('h-ghost', 'FINISHED', { amount: '1' }, { providerId: P, time: D(3, 17) }),
];

type Line = [string, number, string, string, string, string, string, string];
/** [entry id, line, kind, account, currency, amount, effective at, recorded at] */
const finalLines = (
  entry: string,
  kind: string,
  eff: string,
  rec: string,
  amount = '0.2475',
  referral = '0.0001',
) => {
  const gross = new Decimal(amount).plus('0.002').plus('0.0005').plus(referral).toFixed();
  return (
    [
      ['partner_clearing', 'BTC', '0.015'],
      ['user_payin', 'BTC', '-0.015'],
      ['user_payout', 'ETH', amount],
      ['payout_network_fees', 'ETH', '0.002'],
      ['partner_fees', 'ETH', '0.0005'],
      ['referral_fees_receivable', 'ETH', referral],
      ['partner_clearing', 'ETH', `-${gross}`],
    ] as const
  ).map(([a, c, v], i): Line => [entry, i + 1, kind, a, c, v, eff, rec]);
};

describe('finance ledger: journal, views, report (real Kafka, registry and Postgres)', () => {
  const stack = testStack();
  const logger = createLogger({ level: 'warn', name: 'ledger-test' });
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let live: string;
  let finance: string;
  let pool: pg.Pool;
  let running: RunningProjector;

  const iso = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  async function postingsOf(swapId: string): Promise<Line[]> {
    const r = await pool.query(
      `select entry_id, line, entry_kind, account, currency, amount::text, ${iso('effective_at')} as eff,
              ${iso('recorded_at')} as rec
         from ledger_postings where swap_id = $1 order by swap_version, line`,
      [swapId],
    );
    return r.rows.map((x) => [
      x.entry_id,
      x.line,
      x.entry_kind,
      x.account,
      x.currency,
      x.amount,
      x.eff,
      x.rec,
    ]);
  }

  /** Runs `sql` in a transaction that is rolled back; returns the error it raised, if any. */
  async function attempt(
    sql: string,
    params: unknown[] = [],
  ): Promise<(Error & { code?: string }) | undefined> {
    const c = await pool.connect();
    try {
      await c.query('begin');
      return await c.query(sql, params).then(
        () => undefined,
        (e: Error) => e,
      );
    } finally {
      await c.query('rollback');
      c.release();
    }
  }

  beforeAll(async () => {
    log = await freshEventLog(3);
    live = uniqueName('ledger', '_');
    finance = uniqueName('finance', '_');
    await migrateProjection(stack.databaseUrl, live);
    pool = createPool(stack.databaseUrl, { searchPath: live });
    running = await startProjector(projectionConfig(log, live), logger);
    await log.append([...lifecycleScenario(90, 21), ...handEvents]);
    await waitForProjection(pool, log.topic);
    const c = await pool.connect();
    try {
      await ensureFinanceViews(c, live, finance);
    } finally {
      c.release();
    }
  });

  afterAll(async () => {
    await running?.stop();
    await pool?.end();
    await log?.close();
  });

  it('fixed swap: the hand-computed final entry', async () => {
    expect(await postingsOf('h-fx')).toEqual(finalLines(fxFinal.eventId, 'final', D(3, 10), D(3, 10)));
  });

  it('float swap finalized by webhook, fees by the confirming poll: final entry, then a completion', async () => {
    const eff = D(3, 11);
    expect(await postingsOf('h-fl')).toEqual([
      [flWebhook.eventId, 1, 'final', 'partner_clearing', 'BTC', '0.015', eff, eff],
      [flWebhook.eventId, 2, 'final', 'user_payin', 'BTC', '-0.015', eff, eff],
      [flWebhook.eventId, 3, 'final', 'user_payout', 'ETH', '0.2475', eff, eff],
      [flWebhook.eventId, 4, 'final', 'partner_clearing', 'ETH', '-0.2475', eff, eff],
      [flPoll.eventId, 1, 'completion', 'payout_network_fees', 'ETH', '0.002', eff, D(3, 11, 1)],
      [flPoll.eventId, 2, 'completion', 'partner_fees', 'ETH', '0.0005', eff, D(3, 11, 1)],
      [flPoll.eventId, 3, 'completion', 'referral_fees_receivable', 'ETH', '0.0001', eff, D(3, 11, 1)],
      [flPoll.eventId, 4, 'completion', 'partner_clearing', 'ETH', '-0.0026', eff, D(3, 11, 1)],
    ]);
  });

  it('refunded swap: the payin and its return; expired swap: nothing', async () => {
    const t = D(3, 12);
    expect(await postingsOf('h-rf')).toEqual([
      [rfFinal.eventId, 1, 'final', 'partner_clearing', 'BTC', '0.015', t, t],
      [rfFinal.eventId, 2, 'final', 'user_payin', 'BTC', '-0.015', t, t],
      [rfFinal.eventId, 3, 'final', 'user_payin', 'BTC', '0.015', t, t],
      [rfFinal.eventId, 4, 'final', 'partner_clearing', 'BTC', '-0.015', t, t],
    ]);
    expect(await postingsOf('h-ex')).toEqual([]);
  });

  it('corrected swap: final entry, its reversal and the corrected entry, effective at the final time', async () => {
    const eff = D(3, 13);
    const rec = D(5, 9);
    const c = coCorrection.eventId;
    expect(await postingsOf('h-co')).toEqual([
      ...finalLines(coFinal.eventId, 'final', eff, eff),
      [c, 1, 'reversal', 'user_payin', 'BTC', '0.015', eff, rec],
      [c, 2, 'reversal', 'partner_clearing', 'BTC', '-0.015', eff, rec],
      [c, 3, 'reversal', 'partner_clearing', 'ETH', '0.2501', eff, rec],
      [c, 4, 'reversal', 'user_payout', 'ETH', '-0.2475', eff, rec],
      [c, 5, 'reversal', 'payout_network_fees', 'ETH', '-0.002', eff, rec],
      [c, 6, 'reversal', 'partner_fees', 'ETH', '-0.0005', eff, rec],
      [c, 7, 'reversal', 'referral_fees_receivable', 'ETH', '-0.0001', eff, rec],
      ...finalLines(c, 'correction', eff, rec, '0.24', '0.00012').map(
        (l): Line => [l[0], l[1] + 7, ...l.slice(2)] as Line,
      ),
    ]);
  });

  it('the journal sums to zero per currency, and so does every entry', async () => {
    const totals = await pool.query(
      `select currency, sum(amount)::text as total, count(*)::int as n from ledger_postings group by currency`,
    );
    expect(totals.rows.length).toBeGreaterThanOrEqual(2);
    for (const r of totals.rows) expect(new Decimal(r.total).isZero(), r.currency).toBe(true);
    const entries = await pool.query(
      `select entry_id, entry_kind, currency from ledger_postings group by 1, 2, 3 having sum(amount) <> 0`,
    );
    expect(entries.rows).toEqual([]);
    const kinds = await pool.query(`select distinct entry_kind from ledger_postings order by 1`);
    expect(kinds.rows.map((r) => r.entry_kind)).toEqual(['completion', 'correction', 'final', 'reversal']);
  });

  it('the database refuses an unbalanced entry, an extension of an entry, UPDATE, DELETE and TRUNCATE', async () => {
    const insert = `insert into ledger_postings (posting_id, entry_id, line, entry_kind, swap_id, swap_version,
        provider_id, account, currency, amount, effective_at, recorded_at)
      select $1::text || ':' || l, $1::uuid, l, 'final', 'h-fx', 9, '${P}', a, 'BTC', v::numeric, now(), now()
        from unnest($2::text[], $3::text[]) with ordinality as t(a, v, l)`;
    const fresh = '01890000-0000-7000-8000-000000000001';
    // A balanced entry is accepted (rolled back afterwards)...
    expect(await attempt(insert, [fresh, ['partner_clearing', 'user_payin'], ['1', '-1']])).toBeUndefined();
    // ...an unbalanced one is not, in one statement or two.
    const unbalanced = await attempt(insert, [
      fresh,
      ['partner_clearing', 'user_payin'],
      ['1', '-0.999999999999999999'],
    ]);
    expect(unbalanced).toMatchObject({
      code: '23000',
      message: expect.stringMatching(/does not balance in BTC/),
    });
    expect(await attempt(insert, [fresh, ['partner_clearing'], ['1']])).toMatchObject({ code: '23000' });
    // A balanced pair added to an entry already written.
    const extension = await attempt(
      `insert into ledger_postings select $1::text || ':' || (100 + i), entry_id, 100 + i, entry_kind, swap_id, swap_version,
         provider_id, account, currency, amount * (case when i = 0 then 1 else -1 end), effective_at, recorded_at
         from ledger_postings, generate_series(0, 1) i where entry_id = $1::uuid and line = 1`,
      [fxFinal.eventId],
    );
    expect(extension).toMatchObject({ code: '23000', message: expect.stringMatching(/already exists/) });
    for (const sql of [
      `update ledger_postings set amount = amount where entry_id = '${fxFinal.eventId}'`,
      `update ledger_postings set recorded_at = now() where swap_id = 'h-co'`,
      `delete from ledger_postings where swap_id = 'h-fx'`,
      `truncate ledger_postings`,
    ]) {
      expect(await attempt(sql), sql).toMatchObject({
        code: '23000',
        message: expect.stringMatching(/immutable/),
      });
    }
    expect(await postingsOf('h-fx')).toHaveLength(7);
  });

  it('a posting id is its entry and line: the database refuses any other, and a line twice', async () => {
    const insert = `insert into ledger_postings (posting_id, entry_id, line, entry_kind, swap_id, swap_version,
        provider_id, account, currency, amount, effective_at, recorded_at)
      select p, $1::uuid, l, 'final', 'h-id', 9, '${P}', a, 'BTC', v::numeric, now(), now()
        from unnest($2::text[], $3::int[], $4::text[], $5::text[]) as t(p, l, a, v)`;
    const fresh = '01890000-0000-7000-8000-0000000000ab';
    const accounts = ['partner_clearing', 'user_payin'];
    expect(
      await attempt(insert, [fresh, [`${fresh}:1`, `${fresh}:2`], [1, 2], accounts, ['1', '-1']]),
    ).toBeUndefined();
    // The id of another line, or in another spelling of the same uuid: not this posting's id.
    for (const ids of [
      [`${fresh}:1`, `${fresh}:1`],
      [`${fresh}:1`, `${fresh.toUpperCase()}:2`],
      [`${fresh}:1`, `x`],
    ]) {
      expect(await attempt(insert, [fresh, ids, [1, 2], accounts, ['1', '-1']]), ids.join(' ')).toMatchObject(
        {
          code: '23514',
          constraint: 'ledger_postings_posting_id_chk',
        },
      );
    }
    // The same line twice, under the same id: the key refuses it.
    expect(
      await attempt(insert, [fresh, [`${fresh}:1`, `${fresh}:1`], [1, 1], accounts, ['1', '-1']]),
    ).toMatchObject({ code: '23505', constraint: 'ledger_postings_pkey' });
  });

  it('replay rebuilds the journal with the same checksum', async () => {
    const liveSum = await checksumOf(pool, live);
    expect(liveSum.tables.ledger_postings!.rows).toBeGreaterThan(200);
    const result = await replay({
      databaseUrl: stack.databaseUrl,
      kafka: createKafka({ brokers: stack.kafkaBrokers.split(','), clientId: 'test-ledger-replay' }),
      codec: log.codec,
      topic: log.topic,
      liveSchema: live,
      logger,
      batchEvents: 150,
    });
    expect(result.rebuilt.tables.ledger_postings).toEqual(liveSum.tables.ledger_postings);
    expect(result.rebuilt.checksum).toBe(liveSum.checksum);
    expect(result.equal).toBe(true);
  });

  it('balances as of any time, as known at any time (the correction restates the day it is effective)', async () => {
    const balances = async (asOf: string, knownAt: string | null) =>
      Object.fromEntries(
        (
          await pool.query(
            `select account || ' ' || currency as k, balance::text as b
               from ${finance}.balances_as_of($1, $2) where provider_id = '${P}'`,
            [asOf, knownAt],
          )
        ).rows.map((r) => [r.k, new Decimal(r.b).toFixed()]),
      );
    expect(await balances(D(3, 9, 59), null)).toEqual({});
    // Known on the 4th: the correction (recorded on the 5th) is not there yet.
    const asKnownOn4th = {
      'partner_clearing BTC': '0.045',
      'user_payin BTC': '-0.045',
      'user_payout ETH': '0.7425',
      'payout_network_fees ETH': '0.006',
      'partner_fees ETH': '0.0015',
      'referral_fees_receivable ETH': '0.0003',
      'partner_clearing ETH': '-0.7503',
    };
    expect(await balances(D(4, 0), D(4, 0))).toEqual(asKnownOn4th);
    const now = {
      'partner_clearing BTC': '0.045',
      'user_payin BTC': '-0.045',
      'user_payout ETH': '0.735',
      'payout_network_fees ETH': '0.006',
      'partner_fees ETH': '0.0015',
      'referral_fees_receivable ETH': '0.00032',
      'partner_clearing ETH': '-0.74282',
    };
    expect(await balances(D(4, 0), null)).toEqual(now);
    expect(await balances(D(3, 12, 30), null)).toEqual({
      'partner_clearing BTC': '0.03',
      'user_payin BTC': '-0.03',
      'user_payout ETH': '0.495',
      'payout_network_fees ETH': '0.004',
      'partner_fees ETH': '0.001',
      'referral_fees_receivable ETH': '0.0002',
      'partner_clearing ETH': '-0.5002',
    });
    const view = await pool.query(
      `select account, provider_id, currency, balance::text, postings::int from ${finance}.balances order by 1, 2, 3`,
    );
    const fn = await pool.query(
      `select account, provider_id, currency, balance::text, postings::int from ${finance}.balances_as_of('infinity') order by 1, 2, 3`,
    );
    expect(fn.rows).toEqual(view.rows);
    const perCurrency = await pool.query(
      `select currency, sum(balance)::text as s from ${finance}.balances group by 1`,
    );
    for (const r of perCurrency.rows) expect(new Decimal(r.s).isZero()).toBe(true);
  });

  /** The figures of a period by SQL over the daily views (day-aligned periods). */
  async function byDailyViews(from: string, to: string) {
    const revenue = await pool.query(
      `select provider_id, currency, sum(referral_revenue)::text as amount, sum(swaps)::int as swaps
         from ${finance}.referral_revenue_daily where day >= $1::date and day < $2::date
        group by 1, 2 order by 1, 2`,
      [from.slice(0, 10), to.slice(0, 10)],
    );
    const volumes = await pool.query(
      `select provider_id, currency_from, currency_to, sum(volume_from)::text as vf, sum(volume_to)::text as vt,
              sum(swaps)::int as swaps
         from ${finance}.volume_daily where day >= $1::date and day < $2::date group by 1, 2, 3 order by 1, 2, 3`,
      [from.slice(0, 10), to.slice(0, 10)],
    );
    const verdicts = await pool.query(
      `select verdict, count(*)::int as swaps from ${finance}.reconciliation_verdicts
        where reconciled_at >= $1 and reconciled_at < $2 group by 1`,
      [from, to],
    );
    const mismatches = await pool.query(
      `select swap_id, check_name, check_verdict from ${finance}.reconciliation_mismatches
        where reconciled_at >= $1 and reconciled_at < $2 order by reconciled_at, swap_id, check_no`,
      [from, to],
    );
    const n = (t: string) => new Decimal(t).toFixed();
    return {
      referralRevenue: revenue.rows.map((r) => ({
        providerId: r.provider_id,
        currency: r.currency,
        amount: n(r.amount),
        swaps: r.swaps,
      })),
      volumes: volumes.rows.map((r) => ({
        providerId: r.provider_id,
        currencyFrom: r.currency_from,
        currencyTo: r.currency_to,
        volumeFrom: n(r.vf),
        volumeTo: n(r.vt),
        swaps: r.swaps,
      })),
      verdicts: Object.fromEntries(verdicts.rows.map((r) => [r.verdict, r.swaps])),
      mismatches: mismatches.rows.map((r) => [r.swap_id, r.check_name, r.check_verdict]),
    };
  }

  async function report(from: string, to: string): Promise<FinanceReport> {
    const c = await pool.connect();
    try {
      return await financeReport(c, { from, to }, finance);
    } finally {
      c.release();
    }
  }

  it("the report's figures equal the same figures by SQL over the views", async () => {
    const from = D(1, 0);
    const to = D(8, 0);
    const r = await report(from, to);
    const sql = await byDailyViews(from, to);
    expect(r.referralRevenue).toEqual(sql.referralRevenue);
    expect(r.volumes).toEqual(sql.volumes);
    expect(Object.fromEntries(r.verdicts.map((v) => [v.verdict, v.swaps]))).toEqual(sql.verdicts);
    expect(r.mismatches.flatMap((m) => m.checks.map((c) => [m.swapId, c.name, c.verdict]))).toEqual(
      sql.mismatches,
    );
    // The scenario's partners and partner-h are all there, with figures that are not trivially zero.
    expect(r.referralRevenue.map((x) => x.providerId)).toEqual(['partner-a', 'partner-b', P]);
    expect(r.volumes.every((v) => new Decimal(v.volumeFrom).gt(0) && new Decimal(v.volumeTo).gt(0))).toBe(
      true,
    );

    // partner-h by hand: three finished swaps (one corrected), one refunded, one expired.
    expect(r.referralRevenue.find((x) => x.providerId === P)).toEqual({
      providerId: P,
      currency: 'ETH',
      amount: '0.00032',
      swaps: 3,
    });
    expect(r.volumes.find((x) => x.providerId === P)).toEqual({
      providerId: P,
      currencyFrom: 'BTC',
      currencyTo: 'ETH',
      volumeFrom: '0.045',
      volumeTo: '0.735',
      swaps: 3,
    });
    expect(r.verdicts).toEqual([
      { verdict: 'MATCHED', swaps: 1 },
      { verdict: 'UNVERIFIABLE', swaps: 1 },
      { verdict: 'MISMATCH', swaps: 1 },
    ]);
    expect(r.mismatches).toEqual([
      {
        swapId: 'h-co',
        providerId: P,
        status: 'FINISHED',
        reconciledAt: D(3, 15),
        checks: [
          {
            name: 'amount.to_wallet',
            verdict: 'MISMATCH',
            expected: '0.25',
            actual: '0.2495',
            delta: '-0.0005',
            tolerance: '0',
            detail: 'fixed: 0.0005 short of the signed amount',
          },
          {
            name: 'hash.payout',
            verdict: 'UNVERIFIABLE',
            expected: null,
            actual: null,
            delta: null,
            tolerance: null,
            detail: 'no payout hash, yet',
          },
        ],
      },
    ]);
  });

  it('a period that is not day-aligned: the report equals SQL over finance.postings', async () => {
    const from = D(3, 10, 30);
    const to = D(3, 12, 30);
    const r = await report(from, to);
    const revenue = await pool.query(
      `select provider_id, currency, sum(amount)::text as amount, count(distinct swap_id)::int as swaps
         from ${finance}.postings where account = 'referral_fees_receivable' and effective_at >= $1 and effective_at < $2
        group by 1, 2 order by 1, 2`,
      [from, to],
    );
    expect(r.referralRevenue).toEqual(
      revenue.rows.map((x) => ({
        providerId: x.provider_id,
        currency: x.currency,
        amount: new Decimal(x.amount).toFixed(),
        swaps: x.swaps,
      })),
    );
    // Only h-fl finished inside; h-rf was refunded (nets to zero) and h-ex expired.
    expect(r.referralRevenue).toEqual([{ providerId: P, currency: 'ETH', amount: '0.0001', swaps: 1 }]);
    expect(r.volumes).toEqual([
      {
        providerId: P,
        currencyFrom: 'BTC',
        currencyTo: 'ETH',
        volumeFrom: '0.015',
        volumeTo: '0.2475',
        swaps: 1,
      },
    ]);
    expect(r.verdicts).toEqual([]);
  });

  it('swap-ledger report prints the same figures as CSV and as a table', async () => {
    const env = { DATABASE_URL: stack.databaseUrl };
    const args = ['report', '--from', '2026-11-01', '--to', '2026-11-08', '--finance-schema', finance];
    const csv = await runCli([...args, '--format', 'csv'], env);
    expect(csv.code, csv.stderr).toBe(0);
    const r = await report(D(1, 0), D(8, 0));
    const rows = csv.stdout.trim().split('\n');
    expect(rows.slice(0, 2)).toEqual(['section,from,to', `period,${D(1, 0)},${D(8, 0)}`]);
    expect(rows.filter((l) => l.startsWith('referral_revenue,'))).toEqual(
      r.referralRevenue.map((x) => `referral_revenue,${x.providerId},${x.currency},${x.amount},${x.swaps}`),
    );
    expect(rows.filter((l) => l.startsWith('volumes,'))).toEqual(
      r.volumes.map(
        (x) =>
          `volumes,${x.providerId},${x.currencyFrom},${x.currencyTo},${x.volumeFrom},${x.volumeTo},${x.swaps}`,
      ),
    );
    expect(rows.filter((l) => l.startsWith('verdicts,'))).toEqual([
      'verdicts,MATCHED,1',
      'verdicts,UNVERIFIABLE,1',
      'verdicts,MISMATCH,1',
    ]);
    expect(rows).toContain(
      `mismatches,${P},h-co,FINISHED,${D(3, 15)},amount.to_wallet,MISMATCH,0.25,0.2495,'-0.0005,0,fixed: 0.0005 short of the signed amount`,
    );

    // The CSV run above is the process smoke test; the table and the refusal through the CLI's main in-process.
    const table = await runCliInProcess(args, env);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('Referral revenue per partner and currency');
    expect(table.stdout).toMatch(new RegExp(`${P}\\s+ETH\\s+0\\.00032\\s+3`));
    expect(table.stdout).toMatch(new RegExp(`${P}\\s+BTC\\s+ETH\\s+0\\.045\\s+0\\.735\\s+3`));

    const bad = await runCliInProcess(['report', '--from', '2026-11-08', '--to', '2026-11-01'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/is not before/);
  });

  it('the finance role reads the views and the balance function, and nothing else', async () => {
    const c = await pool.connect();
    try {
      await c.query('begin');
      await c.query(`set local role ${FINANCE_ROLE}`);
      for (const view of financeViews(live, finance)) {
        const r = await c.query(`select count(*)::int as n from ${finance}.${view.name}`);
        // This scenario writes nothing off: test/cases/cases.int.spec.ts reads write_offs_monthly's rows.
        const least = { reconciliation_mismatches: 2, write_offs_monthly: 0 }[view.name] ?? 1;
        expect(r.rows[0].n, view.name).toBeGreaterThanOrEqual(least);
      }
      expect((await c.query(`select * from ${finance}.balances_as_of(now())`)).rows.length).toBeGreaterThan(
        0,
      );
      for (const sql of [
        `select 1 from ${live}.ledger_postings limit 1`,
        `select 1 from ${live}.swaps limit 1`,
        `select 1 from ${live}.reconciliations limit 1`,
        `delete from ${finance}.swaps`,
        `update ${finance}.swaps set status = 'X'`,
      ]) {
        await c.query('savepoint s');
        const err = await c.query(sql).then(
          () => undefined,
          (e: Error & { code?: string }) => e,
        );
        expect(err, sql).toMatchObject({ code: '42501' });
        await c.query('rollback to savepoint s');
      }
    } finally {
      await c.query('rollback');
      c.release();
    }
  });

  it('db migrate creates the finance views over the live schema (in a database of its own)', async () => {
    const database = uniqueName('dbmigrate', '_');
    await ensureDatabase(stack.databaseUrl, database);
    const url = withDatabase(stack.databaseUrl, database);
    try {
      const r = await runCli(['db', 'migrate'], { DATABASE_URL: url, PROJECTION_SCHEMA: 'ledger_live' });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('finance views in schema finance read schema ledger_live');
      const other = await runCliInProcess(['db', 'migrate', '--schema', 'ledger_other'], {
        DATABASE_URL: url,
        PROJECTION_SCHEMA: 'ledger_live',
      });
      expect(other.code, other.stderr).toBe(0);
      // In-process (the first run is the process smoke test): its lines are read, and the views are not among them.
      expect(other.stdout).toContain('migrations applied to schema ledger_other');
      expect(other.stdout).not.toContain('finance views');
      const check = createPool(url, { max: 1 });
      try {
        const bound = await check.query(
          `select distinct table_schema from information_schema.view_table_usage where view_schema = 'finance' and table_schema <> 'finance'`,
        );
        // ledger_exceptions also reads the poller's confirmations (platform.confirmations_never_reported).
        expect(bound.rows.map((r) => r.table_schema).sort()).toEqual(['ledger_live', 'platform']);
        const grants = await check.query(
          `select has_table_privilege($1, 'finance.postings', 'select') as postings,
                  has_function_privilege($1, 'finance.balances_as_of(timestamptz, timestamptz)', 'execute') as fn,
                  has_table_privilege($1, 'ledger_live.ledger_postings', 'select') as raw`,
          [FINANCE_ROLE],
        );
        expect(grants.rows[0]).toEqual({ postings: true, fn: true, raw: false });
      } finally {
        await check.end();
      }
    } finally {
      await dropDatabase(stack.databaseUrl, database);
    }
  });
});
