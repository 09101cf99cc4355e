import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { ensureFinanceViews } from '../../src/ledger/finance-views.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { testStack, freshProjection, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig, replayIsEqual, waitForProjection } from '../support/event-log.ts';
import { runCli, runCliInProcess } from '../support/cli.ts';
import { consoleViewer } from '../support/console.ts';
import { MetricsRegistry } from '../../src/observability/metrics.ts';
import { createReconcilerMetrics } from '../../src/reconciler/metrics.ts';
import { invoiceIssueEvent } from '../../src/ops/invoices.ts';
import { startDemoChain, writeDemoChainSources } from '../../src/demo/chain.ts';
import { DemoChainPayer } from '../../src/demo/payer.ts';
import { freePort } from '../../src/demo/provision.ts';
import { DEFAULT_CURRENCIES } from '../../src/simulator/catalog.ts';

/**
 * Issue 43 item 2 on the real stack: swaps final in October are folded and booked, the partner's statement
 * differs on one; `invoice issue` reads the finance views and appends an InvoiceIssued, folded into invoices
 * and invoice_lines (the differing swap listed apart, out of the totals); a second issue is refused, a
 * reissue supersedes; `invoice show` renders it; a replay rebuilds it all (EQUAL).
 */
describe('month end: the referral invoice (real stack)', { timeout: 300_000 }, () => {
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let projection: { schema: string; pool: pg.Pool };
  let projector: RunningProjector;
  let env: ReturnType<typeof projectionConfig>;
  const finance = uniqueName('finance_inv', '_');
  const dir = mkdtempSync(join(tmpdir(), 'invoice-'));
  const figures = {
    amount: '0.25',
    providerFees: '0.0005',
    referralFees: '0.0001',
    payoutNetworkFees: '0.002',
  };
  const q = async (sql: string, params: unknown[] = []) => (await projection.pool.query(sql, params)).rows;
  let viewer: ReturnType<typeof consoleViewer> | undefined;
  const issue = (extra: string[] = [], run = runCliInProcess) =>
    run(
      ['invoice', 'issue', 'partner-a', '2026-10', '--by', 'alice', '--finance-schema', finance, ...extra],
      env,
    );

  beforeAll(async () => {
    log = await freshEventLog(3);
    projection = await freshProjection('invoice');
    env = projectionConfig(log, projection.schema);
    projector = await startProjector(env, createLogger({ level: 'silent' }));
    await log.append([
      swapCreated('inv-1', { time: '2026-10-05T10:00:00.000Z' }),
      statusReported('inv-1', 'FINISHED', figures, { time: '2026-10-06T10:00:00.000Z' }),
      swapCreated('inv-2', { time: '2026-10-07T10:00:00.000Z' }),
      statusReported('inv-2', 'FINISHED', figures, { time: '2026-10-08T10:00:00.000Z' }),
      swapCreated('inv-3', { time: '2026-10-30T10:00:00.000Z' }),
      statusReported('inv-3', 'FINISHED', figures, { time: '2026-11-02T10:00:00.000Z' }),
    ]);
    await waitForProjection(projection.pool, log.topic);
    const c = await projection.pool.connect();
    try {
      await ensureFinanceViews(c, projection.schema, finance);
    } finally {
      c.release();
    }
    // The partner's October statement: inv-1 agrees, inv-2's referral fee is short (a difference).
    const statement = join(dir, 'oct.csv');
    writeFileSync(
      statement,
      'swap_id,status,finished_at,amount_to,provider_fee,referral_fee,payout_network_fee\n' +
        'inv-1,FINISHED,2026-10-06T10:00:00Z,0.25,0.0005,0.0001,0.002\n' +
        'inv-2,FINISHED,2026-10-08T10:00:00Z,0.25,0.0005,0.00008,0.002\n',
    );
    const r = await runCliInProcess(
      ['statement', 'import', 'partner-a', statement, '--period', '2026-10', '--by', 'alice'],
      env,
    );
    expect(r.stderr).toBe('');
    await waitForProjection(projection.pool, log.topic);
  });

  afterAll(async () => {
    await viewer?.close();
    await projector?.stop();
    await projection?.pool.query(`drop schema if exists ${finance} cascade`);
    await projection?.pool.end();
    await log?.close();
  });

  it('issues the month from the finance views: the differing swap listed apart, out of the totals', async () => {
    const [{ currency }] = (await q(
      `select distinct currency from ledger_postings where account = 'referral_fees_receivable' and swap_id = 'inv-1'`,
    )) as [{ currency: string }];
    const r = await issue(['--due-days', '14'], runCli);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`invoice partner-a-2026-10 of partner-a 2026-10 appended: 0.0001 ${currency}`);
    await waitForProjection(projection.pool, log.topic);
    const [inv] = await q(`select invoice_number, operator, due_date, totals, supersedes from invoices`);
    expect(inv).toMatchObject({
      invoice_number: 'partner-a-2026-10',
      operator: 'alice',
      totals: [{ currency, amount: '0.0001' }],
      supersedes: null,
    });
    expect(inv.due_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // inv-3 became final in November: not on October's invoice.
    expect(await q(`select swap_id, referral_fee::text, disputed from invoice_lines order by seq`)).toEqual([
      { swap_id: 'inv-1', referral_fee: '0.0001', disputed: null },
      {
        swap_id: 'inv-2',
        referral_fee: '0.0001',
        disputed: expect.stringMatching(/^statement: amount_differs/),
      },
    ]);
  });

  it('refuses a second issue of the month, storing nothing; a reissue with a reason supersedes it', async () => {
    const again = await issue();
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/invoice partner-a-2026-10 is already issued .* --reissue --reason/);
    const noReason = await issue(['--reissue']);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toMatch(/--reissue needs --reason/);
    const badMonth = await runCliInProcess(['invoice', 'issue', 'partner-a', '2026-13', '--by', 'a'], env);
    expect(badMonth.code).toBe(2);
    await waitForProjection(projection.pool, log.topic);
    expect(await q(`select count(*)::int as n from invoices`)).toEqual([{ n: 1 }]);
    const re = await issue(['--reissue', '--reason', 'statement corrected']);
    expect(re.stderr).toBe('');
    expect(re.stdout).toMatch(/invoice partner-a-2026-10-r2 .* supersedes partner-a-2026-10/);
    await waitForProjection(projection.pool, log.topic);
    expect(await q(`select invoice_number, supersedes, reason from invoices order by event_id`)).toEqual([
      { invoice_number: 'partner-a-2026-10', supersedes: null, reason: null },
      {
        invoice_number: 'partner-a-2026-10-r2',
        supersedes: 'partner-a-2026-10',
        reason: 'statement corrected',
      },
    ]);
  });

  it('shows an invoice as CSV, printable HTML and JSON', async () => {
    const csv = await runCliInProcess(['invoice', 'show', 'partner-a-2026-10'], env);
    expect(csv.code).toBe(0);
    expect(csv.stdout).toContain('invoice,partner-a-2026-10\r\n');
    expect(csv.stdout).toMatch(/inv-1,\w+,0\.0001\r\n/);
    expect(csv.stdout).toMatch(/inv-2,\w+,0\.0001,statement: amount_differs/);
    const out = join(dir, 'invoice.html');
    const html = await runCliInProcess(
      ['invoice', 'show', 'partner-a-2026-10', '--format', 'html', '--out', out],
      env,
    );
    expect(html.code).toBe(0);
    const page = readFileSync(out, 'utf8');
    expect(page).toContain('<h1>Referral invoice partner-a-2026-10</h1>');
    expect(page).not.toMatch(/<script|src=|href=/);
    const json = await runCliInProcess(['invoice', 'show', 'partner-a-2026-10', '--format', 'json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ invoiceNumber: 'partner-a-2026-10', period: '2026-10' });
    const missing = await runCliInProcess(['invoice', 'show', 'nope'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no invoice nope/);
  });

  const settle = (number: string, amount: string, currency: string, ref = 'BANK-1') =>
    runCliInProcess(
      [
        'invoice',
        'settle',
        number,
        '--amount',
        amount,
        '--currency',
        currency,
        '--bank-reference',
        ref,
        '--by',
        'bob',
      ],
      env,
    );
  const settlements = () =>
    q(
      `select swap_id, account, amount::text from ledger_postings where entry_kind = 'settlement' order by entry_id, line`,
    );
  const books = async () =>
    (
      await projection.pool.query(
        `select currency, accrued::text, invoiced::text, settled::text, outstanding::text
           from ${finance}.referral_books where provider_id = 'partner-a'`,
      )
    ).rows;

  it('refuses a settlement of a superseded invoice, in a currency not on it, or over what is outstanding, storing nothing', async () => {
    const [{ currency }] = (await q(`select totals->0->>'currency' as currency from invoices limit 1`)) as [
      { currency: string },
    ];
    const superseded = await settle('partner-a-2026-10', '0.00001', currency);
    expect(superseded.code).toBe(2);
    expect(superseded.stderr).toMatch(/superseded by partner-a-2026-10-r2/);
    const other = await settle('partner-a-2026-10-r2', '1', 'XYZ');
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/--currency XYZ is not on invoice partner-a-2026-10-r2/);
    const over = await settle('partner-a-2026-10-r2', '0.00011', currency);
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(/more than invoice partner-a-2026-10-r2 has outstanding \(0\.0001 /);
    const bad = await settle('partner-a-2026-10-r2', '-1', currency);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--amount must be a positive decimal/);
    await waitForProjection(projection.pool, log.topic);
    expect(await settlements()).toEqual([]);
  });

  it('settles in parts against referral_fees_receivable; the books show accrued, invoiced, settled, outstanding', async () => {
    const [{ currency }] = (await q(`select totals->0->>'currency' as currency from invoices limit 1`)) as [
      { currency: string },
    ];
    const part = await settle('partner-a-2026-10-r2', '0.00004', currency, 'BANK-1');
    expect(part.stderr).toBe('');
    expect(part.stdout).toMatch(/settlement of partner-a-2026-10-r2 appended: 0\.00004 \w+ over 1 line/);
    await waitForProjection(projection.pool, log.topic);
    expect(await settlements()).toEqual([
      { swap_id: 'inv-1', account: 'referral_cash', amount: '0.00004' },
      { swap_id: 'inv-1', account: 'referral_fees_receivable', amount: '-0.00004' },
    ]);
    // inv-1, inv-2 (October) and inv-3 (November) accrued; only inv-1 invoiced (inv-2 in dispute).
    expect(await books()).toEqual([
      { currency, accrued: '0.0003', invoiced: '0.0001', settled: '0.00004', outstanding: '0.00006' },
    ]);
    const rest = await settle('partner-a-2026-10-r2', '0.00006', currency, 'BANK-2');
    expect(rest.code).toBe(0);
    await waitForProjection(projection.pool, log.topic);
    expect(await books()).toEqual([
      { currency, accrued: '0.0003', invoiced: '0.0001', settled: '0.00010', outstanding: '0.00000' },
    ]);
    const more = await settle('partner-a-2026-10-r2', '0.00001', currency, 'BANK-3');
    expect(more.code).toBe(2);
    expect(more.stderr).toMatch(/has outstanding \(0 /);
  });

  it('a replay rebuilds invoices, their lines and the settlement postings (EQUAL)', async () => {
    await waitForProjection(projection.pool, log.topic);
    expect(await replayIsEqual(log, projection, 'invoice-replay')).toBe(true);
  });

  it('counts an invoice unpaid past its due date for the overdue alert; a paid one is not counted', async () => {
    const overdue = async () => {
      const registry = new MetricsRegistry();
      createReconcilerMetrics(registry, projection.pool);
      return (await registry.expose())
        .split('\n')
        .filter((l) => l.startsWith('swap_ledger_invoices_overdue{'));
    };
    // October's invoice in force is paid in full: nothing overdue.
    expect(await overdue()).toEqual([]);
    // November's, issued on the 1st with a day to pay, is unpaid and past due.
    const november = await invoiceIssueEvent(
      projection.pool,
      {
        providerId: 'partner-a',
        period: '2026-11',
        by: 'alice',
        dueDays: 1,
        reissue: false,
        reason: undefined,
        finance,
      },
      new Date('2026-11-01T09:00:00.000Z'),
    );
    expect(november.payload.totals).toHaveLength(1);
    await log.append([november]);
    await waitForProjection(projection.pool, log.topic);
    expect(await overdue()).toEqual(['swap_ledger_invoices_overdue{provider="partner-a"} 1']);
  });

  it("settles by a transaction the local chain shows paying the platform's referral address, and refuses one short", async () => {
    const chain = await startDemoChain(
      { evm: await freePort(), esplora: await freePort() },
      createLogger({ level: 'silent' }),
    );
    try {
      const payer = new DemoChainPayer(chain.urls);
      await payer.ready();
      const referral = '0x00000000000000000000000000000000000000aa';
      const eth = DEFAULT_CURRENCIES.find((c) => c.id === 'eth')!;
      const pay = (wei: bigint) =>
        payer.pay({ swapId: undefined, role: 'payout', currency: eth, to: referral, amount: wei });
      const chainEnv = {
        ...env,
        ...chain.urls,
        CHAIN_SOURCES_FILE: writeDemoChainSources(mkdtempSync(join(tmpdir(), 'invoice-chain-'))),
        REFERRAL_ADDRESSES: `ETH=${referral}`,
      };
      // The command as an operator gives it; the one that posts runs as a process, the refusals in-process.
      const settleTx = (hash: string, env = chainEnv, run = runCliInProcess) =>
        run(
          [
            'invoice',
            'settle',
            'partner-a-2026-11',
            '--amount',
            '0.0001',
            '--currency',
            'ETH',
            '--tx',
            hash,
            '--by',
            'bob',
          ],
          env,
        );
      const before = await settlements();
      // 0.00005 ETH: the chain shows it, but short of the amount claimed; nothing is appended.
      const short = await settleTx((await pay(50_000_000_000_000n))!);
      expect(short.code).toBe(2);
      expect(short.stderr).toMatch(
        /not verified: .* pays 50000000000000 atomic units of ETH to 0x0+aa, short of the 100000000000000 expected/,
      );
      const noAddress = await settleTx('0x1', { ...chainEnv, REFERRAL_ADDRESSES: '' });
      expect(noAddress.code).toBe(2);
      expect(noAddress.stderr).toMatch(/referral address for ETH in REFERRAL_ADDRESSES/);
      // The whole amount: verified (to the address, the asset, at least the amount, confirmed), then posted.
      const hash = (await pay(100_000_000_000_000n))!;
      const paid = await settleTx(hash, chainEnv, runCli);
      expect(paid.stderr).toBe('');
      expect(paid.code).toBe(0);
      await waitForProjection(projection.pool, log.topic);
      expect((await settlements()).length).toBe(before.length + 2);
      const [settled] = await q(
        `select payload->>'method' as method, payload->>'reference' as reference, payload->>'verified' as verified
           from event_journal where event_type = 'InvoiceSettled' and payload->>'invoiceNumber' = 'partner-a-2026-11'`,
      );
      expect(settled).toEqual({
        method: 'chain',
        reference: hash,
        verified: expect.stringMatching(
          /^paid 100000000000000 atomic units of ETH to 0x0+aa \(at least 100000000000000 expected\), block \d+, \d+ confirmation\(s\)$/,
        ),
      });
      // The console's Close page of November: the invoice, settled in full, the payment verified on chain.
      viewer = consoleViewer(testStack().databaseUrl, projection.schema);
      const page = await viewer.page('/close/partner-a/2026-11');
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Referral invoice partner-a-2026-11');
      expect(page.body).toMatch(/data-settled="ETH">0\.000100000000000000</);
      expect(page.body).toContain(hash);
      expect(page.body).toMatch(/paid 100000000000000 atomic units of ETH/);
      const october = await viewer.page('/close/partner-a/2026-10');
      expect(october.body).toContain('supersedes partner-a-2026-10');
      // And a replay after all of it (both invoices, bank and chain settlements) rebuilds the same state.
      expect(await replayIsEqual(log, projection, 'invoice-replay-chain')).toBe(true);
    } finally {
      await chain.stop();
    }
  });
});
