/**
 * Refreshes the console screenshots of the README (docs/img/console-*.png) from the real `swap-ledger up`
 * demo, in Debian's `chromium` driven by playwright-core (CHROMIUM_PATH overrides its path).
 *
 *   npm run screenshots        (the stack of `npm run stack:up`: reads .stack/stack.env)
 *
 * It runs `up` with the demo on the stack named by DATABASE_URL, KAFKA_BROKERS and SCHEMA_REGISTRY_URL,
 * but in a database and on topics of its own (created here, dropped at the end), so it never mixes
 * with a platform already running there and every image shows one fresh demo run. It waits until the
 * demo shows each outcome (finished and matched, refunded, expired, a mismatch, a swap still open, a payout
 * the demo's chains show paying another address),
 * then takes each page, and fails, writing nothing, on a page that errs or a worker that is not ready.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { valueSubject } from '../src/events/codec.ts';
import { createKafka } from '../src/events/kafka.ts';
import { generateApiKey } from '../src/providers/api-keys.ts';
import { launchChromium } from '../test/console/browser.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'docs', 'img');
/** Swaps in the list before the pictures are taken: a page that looks like a running platform. */
const MIN_SWAPS = 20;

function need(name: string): string {
  const v = process.env[name];
  if (!v)
    throw new Error(`${name} is not set: run through \`npm run screenshots\` (it reads .stack/stack.env)`);
  return v;
}

async function main(): Promise<void> {
  const serverUrl = need('DATABASE_URL');
  const brokers = need('KAFKA_BROKERS');
  const registryUrl = need('SCHEMA_REGISTRY_URL');
  const stamp = `${new Date().toISOString().slice(0, 10).replaceAll('-', '')}_${Math.random().toString(36).slice(2, 8)}`;
  const database = `swap_ledger_screenshots_${stamp}`;
  const topic = `swap-events-screenshots-${stamp.replace('_', '-')}`;
  const databaseUrl = withDatabase(serverUrl, database);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${database}`);
  const key = generateApiKey();
  const up = spawn(
    process.execPath,
    [
      join(ROOT, 'bin', 'swap-ledger.mjs'),
      'up',
      '--demo-dir',
      mkdtempSync(join(tmpdir(), 'screenshots-demo-')),
    ],
    {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: databaseUrl,
        KAFKA_BROKERS: brokers,
        SCHEMA_REGISTRY_URL: registryUrl,
        EVENTS_TOPIC: topic,
        DLQ_TOPIC: `${topic}.dlq`,
        TOPIC_PARTITIONS: '4',
        KAFKA_CLIENT_ID: `screenshots-${stamp}`,
        WEBHOOK_PORT: '0',
        GATEWAY_PORT: '0',
        CONSOLE_PORT: '0',
        CONSOLE_KEY_DIGESTS: key.sha256,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  up.stdout.on('data', (d) => (output += d));
  up.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => up.on('exit', resolve));
  const db = new pg.Client({ connectionString: databaseUrl });
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  try {
    const consoleUrl = (
      await waitFor('the console URL in up’s output', 120_000, async () => {
        if (up.exitCode !== null) throw new Error(`up exited (${up.exitCode}):\n${output.slice(-3000)}`);
        return /console: (http:\/\/\S+?)\/(\s|$)/.exec(output)?.[1];
      })
    ).replace(/\/$/, '');
    await waitFor('every worker ready', 120_000, async () =>
      /all workers ready/.test(output) ? true : undefined,
    );
    await db.connect();
    await waitFor(`the demo's outcomes and ${MIN_SWAPS} swaps`, 360_000, async () => {
      const r = await db
        .query<{ status: string; verdict: string | null }>(
          `select s.status, r.verdict from swap_ledger.swaps s
           left join swap_ledger.reconciliations r on r.provider_id = s.provider_id and r.swap_id = s.swap_id`,
        )
        .catch(() => ({ rows: [] as { status: string; verdict: string | null }[] }));
      const has = (status: string, verdict?: string | null) =>
        r.rows.some(
          (x) =>
            x.status === status &&
            (verdict === undefined ? x.verdict !== null : verdict === null ? true : x.verdict === verdict),
        );
      const chain = await db
        .query(
          `select 1 from swap_ledger.reconciliations r, jsonb_array_elements(r.checks) c
           where c->>'name' = 'chain.payout' and c->>'verdict' = 'MISMATCH' limit 1`,
        )
        .catch(() => ({ rows: [] }));
      return r.rows.length >= MIN_SWAPS &&
        chain.rows.length > 0 &&
        has('FINISHED', 'MATCHED') &&
        has('FINISHED', 'MISMATCH') &&
        has('REFUNDED') &&
        has('EXPIRED') &&
        has('PENDING', null)
        ? true
        : undefined;
    });

    browser = await launchChromium(mkdtempSync(join(tmpdir(), 'screenshots-chromium-')));
    const page = await browser.newPage();
    await page.setViewportSize({ width: 1280, height: 860 });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()}`);
    });
    await page.goto(`${consoleUrl}/login`);
    await page.fill('input[name=key]', key.key);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/swaps$/);

    /** `focus`: the page is scrolled to put this element at the top of the picture. */
    const shots: { file: string; path: string; focus?: string }[] = [
      { file: 'console-swaps.png', path: '/swaps' },
      { file: 'console-reconciliation.png', path: '/reconciliation' },
      { file: 'console-books.png', path: '/books' },
      { file: 'console-operations.png', path: '/operations' },
    ];
    // A swap's page: the first open mismatch, with its failing checks.
    await page.goto(`${consoleUrl}/reconciliation`);
    const mismatch = await page.locator('main a[href^="/swaps/"]').first().getAttribute('href');
    if (!mismatch) throw new Error('no mismatched swap linked from the reconciliation page');
    shots.splice(1, 0, { file: 'console-swap.png', path: mismatch });
    // The chain as the last witness: the demo swap whose reported payout pays another address.
    const misdirected = await db.query<{ provider_id: string; swap_id: string }>(
      `select r.provider_id, r.swap_id from swap_ledger.reconciliations r, jsonb_array_elements(r.checks) c
       where c->>'name' = 'chain.payout' and c->>'verdict' = 'MISMATCH' limit 1`,
    );
    const m = misdirected.rows[0]!;
    shots.splice(2, 0, {
      file: 'console-swap-chain.png',
      path: `/swaps/${encodeURIComponent(m.provider_id)}/${encodeURIComponent(m.swap_id)}`,
      focus: 'h2:has-text("Reconciliation") + table tbody tr:has-text("chain.payin")',
    });

    const images = new Map<string, Buffer>();
    for (const shot of shots) {
      const answer = await page.goto(`${consoleUrl}${shot.path}`, { waitUntil: 'networkidle' });
      if (answer?.status() !== 200) throw new Error(`${shot.path} answered ${answer?.status()}`);
      // One live refresh (every 3 s): the figures the page shows are the script's, not only the server's.
      await page.waitForTimeout(3500);
      if (shot.focus)
        await page
          .locator(shot.focus)
          .first()
          .evaluate((e) => e.scrollIntoView({ block: 'start' }));
      await refuseBrokenPage(page, shot.path);
      if (errors.length > 0) throw new Error(`${shot.path}: ${errors.join('; ')}`);
      images.set(shot.file, await page.screenshot());
    }
    for (const [file, image] of images) {
      writeFileSync(join(OUT, file), image);
      console.log(`wrote docs/img/${file}`);
    }
  } catch (e) {
    writeFileSync(join(tmpdir(), 'screenshots-up.log'), output);
    console.error(`up's output: ${join(tmpdir(), 'screenshots-up.log')}`);
    throw e;
  } finally {
    await browser?.close().catch(() => undefined);
    await db.end().catch(() => undefined);
    if (up.exitCode === null) {
      up.kill('SIGTERM');
      await exited;
    }
    await admin.query(`drop database if exists ${database} with (force)`).catch((e: Error) => {
      console.error(`could not drop ${database}: ${e.message}`);
    });
    await admin.end();
    const kafka = createKafka({ brokers: brokers.split(','), clientId: `screenshots-${stamp}` }).admin();
    await kafka.connect();
    const ours = (await kafka.listTopics()).filter((t) => t.startsWith(topic));
    await kafka.deleteTopics({ topics: ours }).catch((e: Error) => {
      console.error(`could not delete the topics ${ours.join(', ')}: ${e.message}`);
    });
    await kafka.disconnect();
    await forgetSubject(registryUrl, valueSubject(topic)).catch((e: Error) => {
      console.error(`could not delete the registry subject ${valueSubject(topic)}: ${e.message}`);
    });
  }
}

/** The registry keeps a topic's schema subject after the topic: soft delete, then permanent. */
async function forgetSubject(registryUrl: string, subject: string): Promise<void> {
  for (const query of ['', '?permanent=true']) {
    const res = await fetch(`${registryUrl}/subjects/${encodeURIComponent(subject)}${query}`, {
      method: 'DELETE',
    });
    if (!res.ok && res.status !== 404) throw new Error(`HTTP ${res.status}`);
  }
}

/** A page that shows an error box, a worker not ready, or an unknown figure is not a picture to keep. */
async function refuseBrokenPage(page: Page, path: string): Promise<void> {
  const errorBoxes = await page.locator('main p.error').allTextContents();
  if (errorBoxes.length > 0) throw new Error(`${path} shows an error: ${errorBoxes.join('; ')}`);
  const text = (await page.locator('main').textContent()) ?? '';
  if (/could not build this page|unreachable|not ready/i.test(text))
    throw new Error(`${path} shows a failure: ${text.slice(0, 300)}`);
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

await main();
