import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { statusReported, swapCorrected, swapCreated } from '../../src/testing/events.ts';
import { testStack, freshProjection } from '../support/context.ts';
import { freshEventLog, projectionConfig, replayIsEqual, waitForProjection } from '../support/event-log.ts';
import { runCli, runCliInProcess } from '../support/cli.ts';
import { consoleViewer } from '../support/console.ts';
import { DEFAULT_STATEMENT_LAYOUT } from '../../src/monthend/layout.ts';
import { statementImportEvent, statementInForce, statementStanding } from '../../src/ops/statements.ts';
import { parseReconciliationPolicy } from '../../src/reconciler/policy.ts';

/**
 * Issue 43, items 1 and 4 on the real stack, the CLI run as a process: a statement imported, refused,
 * re-imported; October closed; a late correction recorded in November posts there with a reference to
 * October; a replay rebuilds it all (EQUAL); a closed posting changed by hand is caught by `period verify`.
 */
// A CLI run as a process takes seconds on a shared machine: one per command, the rest in-process.
describe(
  'month end: statements and sealed periods (real stack, CLI as a process)',
  { timeout: 300_000 },
  () => {
    let log: Awaited<ReturnType<typeof freshEventLog>>;
    let projection: { schema: string; pool: pg.Pool };
    let projector: RunningProjector;
    let env: ReturnType<typeof projectionConfig>;
    const dir = mkdtempSync(join(tmpdir(), 'monthend-'));
    const file = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };
    const HEADER = 'swap_id,status,finished_at,amount_to,provider_fee,referral_fee,payout_network_fee';
    const figures = {
      amount: '0.25',
      providerFees: '0.0005',
      referralFees: '0.0001',
      payoutNetworkFees: '0.002',
    };

    beforeAll(async () => {
      log = await freshEventLog(3);
      projection = await freshProjection('monthend');
      env = projectionConfig(log, projection.schema);
      projector = await startProjector(env, createLogger({ level: 'silent' }));
      await log.append([
        swapCreated('me-1', { time: '2026-10-05T10:00:00.000Z' }),
        statusReported('me-1', 'FINISHED', figures, { time: '2026-10-06T10:00:00.000Z' }),
        swapCreated('me-2', { time: '2026-10-07T10:00:00.000Z' }),
        statusReported('me-2', 'FINISHED', figures, { time: '2026-10-08T10:00:00.000Z' }),
      ]);
      await waitForProjection(projection.pool, log.topic);
    });

    afterAll(async () => {
      await consoleOf?.close();
      await projector?.stop();
      await projection?.pool.end();
      await log?.close();
    });

    // The console's Close page, read through its own read-only login, as finance sees the month.
    let consoleOf: ReturnType<typeof consoleViewer> | undefined;
    const consolePage = (path: string) =>
      (consoleOf ??= consoleViewer(testStack().databaseUrl, projection.schema)).page(path);
    const closePage = async (path: string) => {
      const page = await consolePage(path);
      expect(page.statusCode).toBe(200);
      return page.body;
    };
    const q = async (sql: string, params: unknown[] = []) => (await projection.pool.query(sql, params)).rows;
    // Each command runs once as a process (the operator's way), the rest through the CLI's main in-process.
    const statementImport = (path: string, period = '2026-10', run = runCliInProcess) =>
      run(
        [
          'statement',
          'import',
          'partner-a',
          path,
          '--period',
          period,
          '--by',
          'alice',
          '--reason',
          'monthly statement',
        ],
        env,
      );

    it('imports a statement: each line matched on (provider, swapId), a FINISHED swap not listed is ledger_only', async () => {
      const path = file(
        'oct.csv',
        `${HEADER}\nme-1,FINISHED,2026-10-06T10:00:00Z,0.25,0.0005,0.00008,0.002\nme-9,FINISHED,,1,,,\n`,
      );
      const r = await statementImport(path, '2026-10', runCli);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(
        /matched 0, statement_only 1, ledger_only 1, status_differs 0, amount_differs 1/,
      );
      await waitForProjection(projection.pool, log.topic);
      const lines = await q(
        `select line_no, swap_id, outcome, prior_period, differences from statement_lines order by seq`,
      );
      expect(lines.map((l) => [l.line_no, l.swap_id, l.outcome])).toEqual([
        [2, 'me-1', 'amount_differs'],
        [3, 'me-9', 'statement_only'],
        [null, 'me-2', 'ledger_only'],
      ]);
      expect(lines[0].differences).toEqual([
        expect.objectContaining({
          field: 'referralFee',
          ledger: '0.0001',
          statement: '0.00008',
          direction: 'disfavour',
          verdict: 'differs',
        }),
      ]);
    });

    it('refuses a malformed file naming the line and the field, and stores nothing of it', async () => {
      const before = await q(
        `select count(*)::int as n from event_journal where event_type = 'StatementImported'`,
      );
      const path = file('bad.csv', `${HEADER}\nme-1,FINISHED,,0.25,,,\nme-2,FINISHED,,"0,25",,,\n`);
      const r = await statementImport(path);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/line 3, amountTo \(column "amount_to"\): "0,25" holds ","/);
      const bad = await runCliInProcess(
        ['statement', 'import', 'partner-a', path, '--period', '2026-13', '--by', 'a'],
        env,
      );
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--period must be YYYY-MM/);
      await waitForProjection(projection.pool, log.topic);
      expect(
        await q(`select count(*)::int as n from event_journal where event_type = 'StatementImported'`),
      ).toEqual(before);
    });

    it("the console's Close page shows the statement's outcomes, each difference linked to its swap", async () => {
      const index = await closePage('/close');
      expect(index).toContain('href="/close/partner-a/2026-10"');
      const month = await closePage('/close/partner-a/2026-10');
      expect(month).toContain('data-count="matched">0<');
      expect(month).toContain('data-count="amount_differs">1<');
      expect(month).toContain('data-count="statement_only">1<');
      expect(month).toContain('data-count="ledger_only">1<');
      // In the ledger: a link to the swap's page; only in the statement: no page to link to.
      expect(month).toContain('href="/swaps/partner-a/me-1"');
      expect(month).toContain('href="/swaps/partner-a/me-2"');
      expect(month).not.toContain('href="/swaps/partner-a/me-9"');
      expect(month).toMatch(/<b>referralFee<\/b> ledger\s*<span class="num">0.0001<\/span>/);
      expect(month).not.toContain('id="no-statement"');
      expect(month).toContain('not sealed');
    });

    it('refuses to close a month whose statement has differences', async () => {
      const r = await runCliInProcess(
        ['period', 'close', '2026-10', '--by', 'alice', '--reason', 'month end'],
        env,
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/partner-a: statement .* has 3 line\(s\) not matched/);
    });

    it('a corrected statement supersedes the one in force; both stay visible', async () => {
      const first = (await q(`select statement_id from statements`))[0].statement_id;
      const path = file(
        'oct-v2.csv',
        `${HEADER}\nme-1,FINISHED,,0.25,0.0005,0.0001,0.002\nme-2,FINISHED,,0.25,,,\n`,
      );
      const r = await statementImport(path);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`matched 2, .*supersedes ${first}`));
      await waitForProjection(projection.pool, log.topic);
      const all = await q(`select statement_id, supersedes, line_count from statements order by imported_at`);
      expect(all).toEqual([
        { statement_id: first, supersedes: null, line_count: 3 },
        { statement_id: expect.any(String), supersedes: first, line_count: 2 },
      ]);
    });

    it('two imports made at once both supersede the statement they saw; the later one is in force, both visible', async () => {
      const [{ statement_id: seen }] = await q(
        `select statement_id from statements order by statement_id desc limit 1`,
      );
      const bytes = Buffer.from(
        `${HEADER}\nme-1,FINISHED,,0.25,0.0005,0.0001,0.002\nme-2,FINISHED,,0.25,,,\n`,
      );
      const input = {
        providerId: 'partner-a',
        period: '2026-10',
        fileName: 'oct-v3.csv',
        bytes,
        layout: DEFAULT_STATEMENT_LAYOUT,
        layoutName: 'default' as const,
        mappings: {},
        fees: parseReconciliationPolicy({}).fees,
        reason: 'sent twice',
      };
      // Both built before either is folded: each names the statement in force it read.
      const first = await statementImportEvent(projection.pool, { ...input, by: 'alice' });
      const second = await statementImportEvent(projection.pool, { ...input, by: 'bob' });
      expect([first.event.payload.supersedes, second.event.payload.supersedes]).toEqual([seen, seen]);
      await log.append([first.event, second.event]);
      await waitForProjection(projection.pool, log.topic);
      const later = first.event.eventId > second.event.eventId ? first.event : second.event;
      expect(await statementInForce(projection.pool, 'partner-a', '2026-10')).toEqual({
        statementId: later.eventId,
        fileDigest: later.payload.fileDigest,
      });
      expect(
        (await statementStanding(projection.pool, '2026-10')).filter((s) => s.providerId === 'partner-a'),
      ).toEqual([{ providerId: 'partner-a', statementId: later.eventId, differences: 0 }]);
      expect(await q(`select count(*)::int as n from statements`)).toEqual([{ n: 4 }]);
    });

    it('does not seal while the projector is behind the log: it waits, then refuses, appending nothing', async () => {
      await projector.stop();
      try {
        // A fact of October the projection has not folded yet: a seal now would miss it.
        await log.append([swapCreated('me-3', { time: '2026-10-20T10:00:00.000Z' })]);
        const r = await runCliInProcess(
          ['period', 'close', '2026-10', '--by', 'alice', '--reason', 'month end', '--wait', '1'],
          env,
        );
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(
          /not sealed: the projector is 1 event\(s\) behind the log \(partition \d+: 1\) after 1 s/,
        );
        const wait = await runCliInProcess(
          ['period', 'close', '2026-10', '--by', 'a', '--reason', 'r', '--wait', 'x'],
          env,
        );
        expect(wait.code).toBe(2);
        expect(wait.stderr).toMatch(/--wait must be whole seconds/);
      } finally {
        projector = await startProjector(env, createLogger({ level: 'silent' }));
      }
      await waitForProjection(projection.pool, log.topic);
      expect(await q(`select count(*)::int as n from period_events`)).toEqual([{ n: 0 }]);
    });

    it('closes October, sealed by a digest; a second close is refused', async () => {
      const r = await runCli(['period', 'close', '2026-10', '--by', 'alice', '--reason', 'month end'], env);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const [{ n }] = await q(
        `select count(*)::int as n from ledger_postings where recorded_at < '2026-11-01'`,
      );
      expect(n).toBeGreaterThan(0);
      expect(r.stdout).toMatch(new RegExp(`2026-10 closed: ${n} posting\\(s\\), digest [0-9a-f]{64}`));
      await waitForProjection(projection.pool, log.topic);
      const again = await runCliInProcess(
        ['period', 'close', '2026-10', '--by', 'alice', '--reason', 'twice'],
        env,
      );
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/closed already/);
      const v = await runCli(['period', 'verify'], env);
      expect(v.code).toBe(0);
      expect(v.stdout).toMatch(/^2026-10 OK [0-9a-f]{64}$/m);

      // The Close page: the corrected statement in force, the first one listed apart, the seal's digest.
      const [{ digest }] = await q(`select digest from period_events where kind = 'closed'`);
      const month = await closePage('/close/partner-a/2026-10');
      expect(month).toContain('data-count="matched">2<');
      expect(month).toContain('every line matched');
      expect(month).toContain('id="close-imports"');
      expect(month).toContain(`id="close-digest">${digest}<`);
      const bad = await consolePage('/close/partner-a/2026-13');
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toMatch(/YYYY-MM/);
    });

    it('a late fact after the close posts into the open period with a reference to the closed one', async () => {
      await log.append([
        swapCorrected(
          'me-1',
          { referralFees: '0.00009', operator: 'bob', reason: 'partner rebate' },
          { time: '2026-11-02T09:00:00.000Z' },
        ),
      ]);
      await waitForProjection(projection.pool, log.topic);
      const late = await q(
        `select entry_kind, to_char(recorded_at at time zone 'UTC', 'YYYY-MM') as period,
              to_char(effective_at at time zone 'UTC', 'YYYY-MM') as effective
         from ledger_postings where swap_id = 'me-1' and recorded_at >= '2026-11-01' order by line`,
      );
      expect(late.length).toBeGreaterThan(0);
      expect(new Set(late.map((p) => `${p.entry_kind} ${p.period} ${p.effective}`))).toEqual(
        new Set(['reversal 2026-11 2026-10', 'correction 2026-11 2026-10']),
      );
      const v = await runCliInProcess(['period', 'verify'], env);
      expect(v.code).toBe(0); // October did not change
      // November's statement shows it as a prior-period adjustment.
      const r = await statementImport(
        file('nov.csv', `${HEADER}\nme-1,FINISHED,,0.25,0.0005,0.00009,0.002\n`),
        '2026-11',
      );
      expect(r.code).toBe(0);
      await waitForProjection(projection.pool, log.topic);
      const [line] = await q(
        `select l.outcome, l.prior_period from statement_lines l join statements s using (statement_id) where s.period = '2026-11'`,
      );
      expect(line).toEqual({ outcome: 'matched', prior_period: '2026-10' });
      const november = await closePage('/close/partner-a/2026-11');
      expect(november).toContain('prior-period adjustment of 2026-10');
    });

    it('a replay rebuilds statements, lines and periods (EQUAL)', async () => {
      await waitForProjection(projection.pool, log.topic);
      expect(await replayIsEqual(log, projection, 'monthend-replay')).toBe(true);
    });

    it('period verify detects a closed posting changed by hand; reopening needs --force and is recorded', async () => {
      const s = projection.schema;
      await projection.pool.query(`alter table ${s}.ledger_postings disable trigger user`);
      await projection.pool.query(
        `update ${s}.ledger_postings set amount = amount + 1 where swap_id = 'me-2' and account = 'user_payout' and recorded_at < '2026-11-01'`,
      );
      await projection.pool.query(`alter table ${s}.ledger_postings enable trigger user`);
      const v = await runCliInProcess(['period', 'verify'], env);
      expect(v.code).toBe(1);
      expect(v.stdout).toMatch(/^2026-10 CHANGED: sealed [0-9a-f]{64}, now [0-9a-f]{64}/m);

      const refused = await runCliInProcess(
        ['period', 'reopen', '2026-10', '--by', 'carol', '--reason', 'audit'],
        env,
      );
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/needs --force/);
      const r = await runCli(
        ['period', 'reopen', '2026-10', '--force', '--by', 'carol', '--reason', 'audit'],
        env,
      );
      expect(r.code).toBe(0);
      await waitForProjection(projection.pool, log.topic);
      expect(await q(`select period, kind, operator, reason from period_events order by event_id`)).toEqual([
        { period: '2026-10', kind: 'closed', operator: 'alice', reason: 'month end' },
        { period: '2026-10', kind: 'reopened', operator: 'carol', reason: 'audit' },
      ]);
    });
  },
);
