import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform, migrateProjection } from '../../src/db/migrate.ts';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../src/observability/log.ts';
import { CaseNotifier } from '../../src/ops/case-notifier.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { replay } from '../../src/ops/replay.ts';
import { createKafka } from '../../src/events/kafka.ts';
import { loadProviders } from '../../src/providers/store.ts';
import { parseProvidersFile } from '../../src/providers/file.ts';
import { ensureFinanceViews } from '../../src/ledger/finance-views.ts';
import { caseActedEvent } from '../../src/ops/operator-events.ts';
import { checkCaseAction, loadCase } from '../../src/ops/cases.ts';
import { CaseRefusal } from '../../src/cases/machine.ts';
import type { ReconciliationCheck, SwapEvent } from '../../src/events/types.ts';
import { statusContradicted, swapCorrected, swapReconciled } from '../../src/testing/events.ts';
import { finished, vectorProviderYaml, vectorSwap } from '../reconciler/vector-swaps.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { checksumOf, freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { runCli, runCliInProcess } from '../support/cli.ts';

const check = (verdict: string, actual: string, delta: string): ReconciliationCheck => ({
  name: 'amount.to_wallet',
  verdict,
  expected: '0.000005',
  actual,
  delta,
  tolerance: '0',
  detail: null,
});

/** Cases on the real stack: every outcome, a reopen, the evidence pack verified offline, replay EQUAL (issue 42). */
describe(
  'cases: opened by verdicts, moved by operators, replayed EQUAL (real stack)',
  { timeout: 300_000 },
  () => {
    const stack = testStack();
    const logger = createLogger({ level: 'silent' });
    const providerId = uniqueName('cases', '_').replaceAll('_', '-');
    let log: Awaited<ReturnType<typeof freshEventLog>>;
    let live: string;
    let pool: pg.Pool;
    let running: RunningProjector;
    let env: ReturnType<typeof projectionConfig>;
    let rebuiltSchema = '';
    const ref = (swapId: string) => ({ providerId, swapId });
    const caseOf = async (swapId: string) => loadCase(pool, ref(swapId));
    /** Verdicts are dated in the past on purpose: their cases fall in the 30d+ age bucket whatever today is. */
    const JUNE = '2026-06-02T00:00:00.000Z';
    const verdict = (
      swapId: string,
      basedOn: SwapEvent,
      v: string,
      extra = {},
      actual = '0.000005',
      delta = '0',
    ) => {
      const e = swapReconciled(swapId, basedOn.eventId, v, { providerId, time: JUNE });
      return { ...e, payload: { ...e.payload, checks: [check(v, actual, delta)], ...extra } };
    };
    const mismatch = (swapId: string, basedOn: SwapEvent, actual = '0.000004', delta = '-0.000001') =>
      verdict(swapId, basedOn, 'MISMATCH', {}, actual, delta);
    /** An operator action through the CLI's own path: checked against the case, then appended. */
    const actNow = async (
      swapId: string,
      input: Omit<Parameters<typeof caseActedEvent>[0], 'providerId' | 'swapId'>,
    ) => {
      const event = caseActedEvent({ ...ref(swapId), ...input });
      await checkCaseAction(pool, ref(swapId), event);
      await log.append([event]);
      await waitForProjection(pool, log.topic);
      return event;
    };

    beforeAll(async () => {
      log = await freshEventLog(3);
      live = uniqueName('caseslive', '_');
      await migrateProjection(stack.databaseUrl, live);
      await migratePlatform(stack.databaseUrl);
      const platform = createPool(stack.databaseUrl);
      try {
        await loadProviders(platform, parseProvidersFile(vectorProviderYaml(providerId)));
      } finally {
        await platform.end();
      }
      pool = createPool(stack.databaseUrl, { searchPath: live });
      env = projectionConfig(log, live);
      running = await startProjector(env, logger);

      const events: SwapEvent[] = [];
      const swap = (id: string, amount = '0.000004') => {
        const created = vectorSwap(id, providerId);
        const fin = finished(id, providerId, amount);
        events.push(created, fin);
        return fin;
      };
      // Settled by evidence, then reopened by a newer contradicting verdict.
      const settleFin = swap('cs-settle');
      const fix = swapCorrected('cs-settle', { amount: '0.000005' }, { providerId });
      const worse = swapCorrected('cs-settle', { amount: '0.000003' }, { providerId });
      events.push(mismatch('cs-settle', settleFin), fix, verdict('cs-settle', fix, 'MATCHED'));
      events.push(worse, mismatch('cs-settle', worse, '0.000003', '-0.000002'));
      // One swap per operator outcome.
      for (const id of ['cs-paid', 'cs-loss', 'cs-false']) events.push(mismatch(id, swap(id)));
      const corrFin = swap('cs-corr');
      events.push(
        mismatch('cs-corr', corrFin),
        swapCorrected('cs-corr', { amount: '0.000005' }, { providerId }),
      );
      // UNVERIFIABLE opens a case only past its evidence deadline (the reconciler's decision, carried).
      events.push(verdict('cs-unv-early', swap('cs-unv-early'), 'UNVERIFIABLE'));
      events.push(
        verdict('cs-unv-late', swap('cs-unv-late'), 'UNVERIFIABLE', { evidenceDeadlinePassed: true }),
      );
      // A verdict based on an older event, folded after the current one: history only, no case.
      const oldFin = swap('cs-old');
      const oldFix = swapCorrected('cs-old', { amount: '0.000005' }, { providerId });
      events.push(oldFix, verdict('cs-old', oldFix, 'MATCHED'), mismatch('cs-old', oldFin));
      // An exception: a report contradicting the final swap.
      swap('cs-exc', '0.000005');
      events.push(statusContradicted('cs-exc', 'REFUNDED', 'FINISHED', {}, { providerId, time: JUNE }));
      await log.append(events);
      await waitForProjection(pool, log.topic);
    });

    afterAll(async () => {
      await running?.stop();
      await pool?.end();
      await log?.close();
    });

    it('opens cases from the current verdict and exceptions; settles by evidence; reopens on a newer contradiction', async () => {
      const settle = (await caseOf('cs-settle'))!;
      expect(settle).toMatchObject({
        state: 'open',
        openings: 2,
        trigger: 'mismatch',
        amountAtStake: '0.000002',
      });
      expect(settle.history.map((h) => [h.step, h.to])).toEqual([
        ['opened', 'open'],
        ['resolved', 'resolved'],
        ['reopened', 'open'],
      ]);
      expect(settle.history[1]).toMatchObject({
        details: { outcome: 'settled_by_evidence' },
        operator: null,
      });
      expect(await caseOf('cs-unv-early')).toBeUndefined();
      expect(await caseOf('cs-unv-late')).toMatchObject({
        state: 'open',
        trigger: 'unverifiable_past_deadline',
      });
      expect(await caseOf('cs-old')).toBeUndefined();
      expect(await caseOf('cs-exc')).toMatchObject({ state: 'open', trigger: 'exception' });
      expect(await caseOf('cs-paid')).toMatchObject({
        state: 'open',
        amountAtStake: '0.000001',
        stakeCurrency: 'BAT',
      });
    });

    it('partner paid: acknowledged, disputed with the evidence pack digest, resolved, by the CLI', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'evidence-'));
      const ack = await runCli(
        ['case', 'ack', `${providerId}/cs-paid`, '--reason', 'looking', '--by', 'alice'],
        env,
      );
      expect(ack.code, ack.stderr).toBe(0);
      await waitForProjection(pool, log.topic);
      const out = join(dir, 'cs-paid.json');
      const pack = await runCli(['swap', 'evidence', `${providerId}/cs-paid`, '--out', out], env);
      expect(pack.code, pack.stderr).toBe(0);
      const digest = /sha256 of its content ([0-9a-f]{64})/.exec(pack.stdout)![1]!;
      const dispute = await runCli(
        [
          'case',
          'dispute',
          `${providerId}/cs-paid`,
          '--sent',
          `sha256:${digest}`,
          '--reason',
          'asked the partner',
          '--by',
          'alice',
        ],
        env,
      );
      expect(dispute.code, dispute.stderr).toBe(0);
      await waitForProjection(pool, log.topic);
      const resolve = await runCli(
        [
          'case',
          'resolve',
          `${providerId}/cs-paid`,
          '--outcome',
          'partner_paid',
          '--reference',
          '0xdiff',
          '--reason',
          'paid',
          '--by',
          'bob',
        ],
        env,
      );
      expect(resolve.code, resolve.stderr).toBe(0);
      await waitForProjection(pool, log.topic);
      const c = (await caseOf('cs-paid'))!;
      expect(c).toMatchObject({
        state: 'resolved',
        outcome: 'partner_paid',
        resolution: { reference: '0xdiff' },
      });
      expect(c.history.map((h) => [h.step, h.operator])).toEqual([
        ['opened', null],
        ['acknowledge', 'alice'],
        ['dispute', 'alice'],
        ['resolve', 'bob'],
      ]);
      expect(c.history[2]!.details).toEqual({ sent: `sha256:${digest}` });
      // An action on the closed case: refused, exit 2, nothing appended (through the CLI's main in-process:
      // each command runs once as a process in this file, the rest need not pay a process start).
      const again = await runCliInProcess(
        ['case', 'ack', `${providerId}/cs-paid`, '--reason', 'x', '--by', 'carol'],
        env,
      );
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/the case is closed \(resolved: partner_paid\)/);
    });

    it('the evidence pack verifies offline (no database in the environment); a changed byte is refused', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'evidence-'));
      const out = join(dir, 'pack.json');
      const r = await runCliInProcess(['swap', 'evidence', `${providerId}/cs-paid`, '--out', out], env);
      expect(r.code, r.stderr).toBe(0);
      const text = await readFile(out, 'utf8');
      const pack = JSON.parse(text);
      expect(pack.content.signedPayload.key).toMatchObject({ keyId: 'vector', curve: 'secp256k1' });
      expect(pack.content.partnerReports[0]).toMatchObject({
        channel: 'GET /status (poll)',
        type: 'StatusReported',
      });
      expect(pack.content.verdicts[0].checks[0]).toMatchObject({ expected: '0.000005', delta: '-0.000001' });
      expect(pack.content.case.state).toBe('resolved');
      const offline = await runCli(['evidence', 'verify', out], {});
      expect(offline.code, offline.stdout + offline.stderr).toBe(0);
      expect(offline.stdout).toMatch(/ok\s+signature: verifies with key vector \(secp256k1\)/);
      const html = await runCliInProcess(['evidence', 'verify', join(dir, 'pack.html')], {});
      expect(html.code, html.stdout + html.stderr).toBe(0);
      const i = text.indexOf('0.000004');
      expect(i).toBeGreaterThan(0);
      const changed = join(dir, 'changed.json');
      await writeFile(changed, text.slice(0, i) + '0.000009' + text.slice(i + 8));
      const refused = await runCliInProcess(['evidence', 'verify', changed], {});
      expect(refused.code).toBe(1);
      expect(refused.stdout).toMatch(/FAIL\s+digest/);
    });

    it('corrected and false alarm resolve with their evidence; a wrong one is refused before appending', async () => {
      await expect(
        checkCaseAction(
          pool,
          ref('cs-false'),
          caseActedEvent({
            ...ref('cs-false'),
            action: 'resolve',
            outcome: 'corrected',
            by: 'alice',
            reason: 'r',
          }),
        ),
      ).rejects.toThrow(CaseRefusal);
      await actNow('cs-corr', {
        action: 'resolve',
        outcome: 'corrected',
        by: 'alice',
        reason: 'amount fixed',
      });
      const corrected = (await caseOf('cs-corr'))!;
      expect(corrected).toMatchObject({ state: 'resolved', outcome: 'corrected' });
      expect(corrected.resolution!.reference).toMatch(/^[0-9a-f-]{36}$/);
      await actNow('cs-false', {
        action: 'resolve',
        outcome: 'false_alarm',
        setting: 'RECONCILE_FEE_TOLERANCE',
        by: 'alice',
        reason: 'tolerance was wrong',
      });
      expect(await caseOf('cs-false')).toMatchObject({
        outcome: 'false_alarm',
        resolution: { setting: 'RECONCILE_FEE_TOLERANCE' },
      });
    });

    it('accepted loss: proposed by one operator, refused for the proposer, approved by another, posted balanced', async () => {
      const propose = await runCli(
        [
          'case',
          'propose-write-off',
          `${providerId}/cs-loss`,
          '--amount',
          '0.000001',
          '--currency',
          'BAT',
          '--reason',
          'small',
          '--by',
          'alice',
        ],
        env,
      );
      expect(propose.code, propose.stderr).toBe(0);
      await waitForProjection(pool, log.topic);
      const self = await runCliInProcess(
        ['case', 'approve-write-off', `${providerId}/cs-loss`, '--reason', 'ok', '--by', 'alice'],
        env,
      );
      expect(self.code).toBe(2);
      expect(self.stderr).toMatch(
        /alice proposed this write-off: an approver other than its proposer approves it/,
      );
      // The same refusal in the fold, for an action that raced past the CLI's check: journaled as rejected.
      await log.append([
        caseActedEvent({ ...ref('cs-loss'), action: 'approve_write_off', by: 'alice', reason: 'raced' }),
      ]);
      await waitForProjection(pool, log.topic);
      const journaled = await pool.query(
        `select outcome, reason from event_journal where event_type = 'CaseActed' and swap_id = 'cs-loss' order by "offset"`,
      );
      expect(journaled.rows.at(-1)).toMatchObject({
        outcome: 'rejected',
        reason: expect.stringMatching(/^case action refused: alice proposed this write-off/),
      });
      expect(await caseOf('cs-loss')).toMatchObject({
        state: 'open',
        pendingWriteOff: { proposedBy: 'alice' },
      });
      await actNow('cs-loss', { action: 'approve_write_off', by: 'bob', reason: 'approved' });
      expect(await caseOf('cs-loss')).toMatchObject({
        state: 'resolved',
        outcome: 'accepted_loss',
        resolution: { amount: '0.000001', currency: 'BAT', proposedBy: 'alice', approvedBy: 'bob' },
      });
      const lines = await pool.query(
        `select account, currency, amount::text from ledger_postings where swap_id = 'cs-loss' and entry_kind = 'write_off' order by line`,
      );
      expect(lines.rows).toEqual([
        { account: 'write_offs', currency: 'BAT', amount: '0.000001' },
        { account: 'partner_clearing', currency: 'BAT', amount: '-0.000001' },
      ]);
    });

    it('finance views: open cases by partner, age bucket and currency; write-offs per partner and month', async () => {
      const finance = uniqueName('casesfin', '_');
      const client = await pool.connect();
      try {
        await ensureFinanceViews(client, live, finance);
        const aging = await client.query(
          `select age_bucket, currency, cases::int, amount_at_stake::text, stake_unknown::int
           from ${finance}.open_cases_by_age where provider_id = $1 order by currency nulls last`,
          [providerId],
        );
        // Open: cs-settle (0.000002 BAT); cs-unv-late and cs-exc name no amount.
        expect(aging.rows).toEqual([
          { age_bucket: '30d+', currency: 'BAT', cases: 1, amount_at_stake: '0.000002', stake_unknown: 0 },
          { age_bucket: '30d+', currency: null, cases: 2, amount_at_stake: null, stake_unknown: 2 },
        ]);
        const writeOffs = await client.query(
          `select currency, written_off::text, swaps::int from ${finance}.write_offs_monthly where provider_id = $1`,
          [providerId],
        );
        expect(writeOffs.rows).toEqual([{ currency: 'BAT', written_off: '0.000001', swaps: 1 }]);
      } finally {
        client.release();
        await pool.query(`drop schema ${finance} cascade`);
      }
    });

    it('a replay from offset 0 rebuilds the same cases and postings: EQUAL', async () => {
      const result = await replay({
        databaseUrl: stack.databaseUrl,
        kafka: createKafka({ brokers: stack.kafkaBrokers.split(','), clientId: 'test-cases-replay' }),
        codec: log.codec,
        topic: log.topic,
        liveSchema: live,
        logger,
        batchEvents: 7,
      });
      expect(result.rebuilt.tables['cases']!.rows).toBe(7);
      expect(result.rebuilt.checksum).toBe((await checksumOf(pool, live)).checksum);
      expect(result.equal).toBe(true);
      rebuiltSchema = result.schema;
    });

    it('notifies a chat endpoint when a case opens, reopens or ages: at least once through a failure, never twice, nothing new after a replay', async () => {
      const received: { kind: string; swapId: string; text: string }[] = [];
      let answer = 500;
      const server = createServer((req: IncomingMessage, res) => {
        let body = '';
        req.on('data', (d) => (body += d));
        req.on('end', () => {
          const m = JSON.parse(body) as {
            text: string;
            case: { kind: string; swapId: string; provider: string };
          };
          if (m.case.provider === providerId && answer === 200)
            received.push({ kind: m.case.kind, swapId: m.case.swapId, text: m.text });
          res.writeHead(answer).end();
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const platform = createPool(stack.databaseUrl, { max: 2 });
      let nowMs = Date.now();
      const notifierOn = (projection: pg.Pool) =>
        new CaseNotifier({
          projection,
          platform,
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
          ageLimitMs: 7 * 86_400_000,
          logger,
          now: () => nowMs,
        });
      const rebuilt = createPool(stack.databaseUrl, { searchPath: rebuiltSchema, max: 1 });
      try {
        const notifier = notifierOn(pool);
        const first = await notifier.round(); // the endpoint fails: everything stays owed
        expect(first.owed).toBeGreaterThan(0);
        expect(first).toMatchObject({ delivered: 0, failed: first.owed });
        expect(await notifier.round()).toEqual({ owed: 0, delivered: 0, failed: 0 }); // not due before its backoff
        answer = 200;
        nowMs += 5_000;
        expect(await notifier.round()).toEqual({ owed: 0, delivered: first.owed, failed: 0 });
        nowMs += 3_600_000;
        expect(await notifier.round()).toEqual({ owed: 0, delivered: 0, failed: 0 });
        // The open cases from June: told opened (or reopened) and aged, each once; resolved ones from June are not.
        const told = received.map((m) => `${m.swapId}:${m.kind}`).sort();
        expect(told).toEqual(
          expect.arrayContaining(['cs-settle:reopened', 'cs-settle:aged', 'cs-exc:opened']),
        );
        expect(new Set(told).size).toBe(told.length);
        expect(told.some((t) => t.startsWith('cs-settle:opened'))).toBe(false);
        expect(received.find((m) => m.swapId === 'cs-settle' && m.kind === 'reopened')!.text).toMatch(
          /^swap-ledger: case .+\/cs-settle reopened \(mismatch, 0\.000002 BAT at stake; state open/,
        );
        // The same cases rebuilt by replay owe nothing new.
        expect(await notifierOn(rebuilt).round()).toEqual({ owed: 0, delivered: 0, failed: 0 });
      } finally {
        await rebuilt.end();
        await platform.end();
        server.close();
      }
    });
  },
);
