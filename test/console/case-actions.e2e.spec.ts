import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { ConsoleDb } from '../../src/console/db.ts';
import { buildConsoleServer } from '../../src/console/server.ts';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform, migrateProjection } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { generateApiKey } from '../../src/providers/api-keys.ts';
import { loadProviders } from '../../src/providers/store.ts';
import { parseProvidersFile } from '../../src/providers/file.ts';
import { swapReconciled } from '../../src/testing/events.ts';
import { eventually } from '../gateway/support.ts';
import { finished, vectorProviderYaml, vectorSwap } from '../reconciler/vector-swaps.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { launchChromium } from './browser.ts';

/**
 * Issue 42 item 4 in a real Chromium: a case opened by the projector from a real MISMATCH verdict, acted on
 * through the console's forms, its CaseActed events folded by the same projector; a viewer and a forged or
 * token-less POST are refused. The console and the projector run in-process (no `up --demo`).
 */
describe('console case actions in Chromium, on a case the projector opened', { timeout: 180_000 }, () => {
  const stack = testStack();
  const logger = createLogger({ level: 'silent' });
  const providerId = uniqueName('cact', '_').replaceAll('_', '-');
  const swapId = 'case-1';
  const viewer = generateApiKey();
  const operator = generateApiKey();
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let pool: pg.Pool;
  let running: RunningProjector;
  let db: ConsoleDb;
  let app: FastifyInstance;
  let browser: BrowserContext;
  let page: Page;
  let url: string;

  const caseUrl = () => `${url}/cases/${providerId}/${swapId}`;
  const logIn = async (key: string) => {
    await page.goto(`${url}/login`);
    await page.fill('input[name=key]', key);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/swaps$/);
  };
  const act = async (action: string, fields: Record<string, string>) => {
    const form = page.locator(`form.case-action:has(button[data-action="${action}"])`);
    for (const [name, value] of Object.entries(fields))
      await form.locator(`input[name="${name}"]`).fill(value);
    await form.locator('button[type=submit]').click();
    await page.waitForURL(caseUrl());
  };
  /** Reloads the case page until the projector has folded the action (no fixed sleep). */
  const waitForState = (state: string) =>
    eventually(
      `case ${state}`,
      async () => {
        await page.goto(caseUrl());
        const badges = await page.locator('main p .badge').allTextContents();
        return badges.includes(state) ? true : undefined;
      },
      60_000,
    );
  /** The case page's history rows: step, by, from → to, reason. */
  const history = () =>
    page.$$eval('h2:text("History") + table tbody tr', (rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].slice(1).map((td) => td.textContent!.trim())),
    );
  /** A POST from the page's own origin with its session cookie: what a forged form would send. */
  const postFromPage = (action: string, body: string) =>
    page.evaluate(
      async ([path, payload]) =>
        (
          await fetch(path!, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: payload!,
            redirect: 'manual',
          })
        ).status,
      [`/cases/${providerId}/${swapId}/${action}`, body],
    );

  beforeAll(async () => {
    log = await freshEventLog(1);
    const live = uniqueName('caseact', '_');
    await migrateProjection(stack.databaseUrl, live);
    await migratePlatform(stack.databaseUrl);
    const platform = createPool(stack.databaseUrl);
    try {
      await loadProviders(platform, parseProvidersFile(vectorProviderYaml(providerId)));
    } finally {
      await platform.end();
    }
    pool = createPool(stack.databaseUrl, { searchPath: live });
    running = await startProjector(projectionConfig(log, live), logger);

    // A swap paid short (0.000004 BAT of 0.000006 signed), judged MISMATCH: the projector opens its case.
    const created = vectorSwap(swapId, providerId);
    const fin = finished(swapId, providerId, '0.000004');
    const verdict = swapReconciled(swapId, fin.eventId, 'MISMATCH', { providerId });
    const mismatch = {
      ...verdict,
      payload: {
        ...verdict.payload,
        checks: [
          {
            name: 'amount.to_wallet',
            verdict: 'MISMATCH',
            expected: '0.000005',
            actual: '0.000004',
            delta: '-0.000001',
            tolerance: '0',
            detail: null,
          },
        ],
      },
    };
    await log.append([created, fin, mismatch]);
    await waitForProjection(pool, log.topic);

    db = await ConsoleDb.open(stack.databaseUrl, live, 'finance', logger);
    app = await buildConsoleServer({
      db,
      keys: { viewer: [viewer.sha256], operator: [operator.sha256] },
      logger,
      appendCaseEvent: (event) => log.append([event]),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    browser = await launchChromium(await mkdtemp(join(tmpdir(), 'case-actions-')));
    page = browser.pages()[0] ?? (await browser.newPage());
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await db?.close();
    await running?.stop();
    await log?.close();
    await pool?.end();
  });

  const historyLength = async () =>
    (await pool.query<{ n: number }>(`select jsonb_array_length(history) as n from cases`)).rows[0]!.n;

  it("shows a viewer no action, and refuses the viewer's forged POST with its own cookie and token", async () => {
    await logIn(viewer.key);
    await page.goto(`${url}/cases?partner=${providerId}&check=amount.to_wallet`);
    await page.click(`main a[href="/cases/${providerId}/${swapId}"]`);
    await waitForState('open');
    expect(await page.locator('#no-actions').textContent()).toContain('viewer');
    expect(await page.locator('button[data-action]').count()).toBe(0);
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    expect(csrf).not.toBe('');
    const before = await historyLength();
    expect(await postFromPage('acknowledge', `_csrf=${encodeURIComponent(csrf)}&reason=forged`)).toBe(403);
    await waitForProjection(pool, log.topic);
    expect(await historyLength()).toBe(before);
    await page.click('form[action="/logout"] button');
    await page.waitForURL(/\/login$/);
  });

  it("refuses an operator's POST without the session's CSRF token, appending nothing", async () => {
    await logIn(operator.key);
    await page.goto(caseUrl());
    expect(await page.locator('button[data-action="acknowledge"]').count()).toBe(1);
    const before = await historyLength();
    expect(await postFromPage('acknowledge', 'reason=no%20token')).toBe(403);
    expect(await postFromPage('acknowledge', '_csrf=not-the-token&reason=wrong%20token')).toBe(403);
    await waitForProjection(pool, log.topic);
    expect(await historyLength()).toBe(before);
  });

  it('an operator acknowledges the case, then resolves it; the page shows the state and who did it', async () => {
    await page.goto(caseUrl());
    await act('acknowledge', { reason: 'looking at the short payout' });
    await waitForState('acknowledged');
    await act('resolve', {
      outcome: 'false_alarm',
      setting: 'amount.to_wallet tolerance',
      reason: 'the partner pays network fees from the output',
    });
    await waitForState('resolved');

    const by = `console:operator:${operator.sha256.slice(0, 12)}`;
    const steps = await history();
    expect(steps.map((s) => s[0])).toEqual(['opened', 'acknowledge', 'resolve']);
    expect(steps[1]).toEqual(['acknowledge', by, 'open → acknowledged', 'looking at the short payout']);
    expect(steps[2]!.slice(0, 3)).toEqual(['resolve', by, 'acknowledged → resolved']);
    expect(await page.locator('main p').first().textContent()).toContain('false_alarm');
    expect(await page.locator('#no-actions').count()).toBe(1);
  });
});
