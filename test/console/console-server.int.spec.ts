import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { CONSOLE_READER_ROLE, ConsoleDb } from '../../src/console/db.ts';
import { buildConsoleServer } from '../../src/console/server.ts';
import { WorkerHealthBoard } from '../../src/console/workers.ts';
import { freePort } from '../../src/demo/provision.ts';
import { startOpsListener } from '../../src/observability/listener.ts';
import { MetricsRegistry } from '../../src/observability/metrics.ts';
import { ensureFinanceViews } from '../../src/ledger/finance-views.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { generateApiKey } from '../../src/providers/api-keys.ts';
import { freshProjection, testStack, uniqueName } from '../support/context.ts';

const logIn = (app: FastifyInstance, key: string, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: '/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: `key=${encodeURIComponent(key)}`,
  });

/** The console's HTTP edge on a real (empty) projection: login, refusals, read-only sessions. */
describe('console server', () => {
  const key = generateApiKey();
  let app: FastifyInstance;
  let db: ConsoleDb;
  let projection: Awaited<ReturnType<typeof freshProjection>>;
  let cookie: string;

  beforeAll(async () => {
    const { databaseUrl } = testStack();
    await migratePlatform(databaseUrl);
    projection = await freshProjection('console');
    const finance = uniqueName('finance', '_');
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await ensureFinanceViews(client, projection.schema, finance).finally(() => client.end());
    db = await ConsoleDb.open(databaseUrl, projection.schema, finance, createLogger({ level: 'silent' }));
    app = await buildConsoleServer({
      db,
      keys: { viewer: [key.sha256] },
      logger: createLogger({ level: 'silent' }),
    });
    const login = await logIn(app, key.key);
    expect(login.statusCode).toBe(303);
    cookie = String(login.headers['set-cookie']).split(';')[0]!;
  });

  afterAll(async () => {
    await app?.close();
    await db?.close();
    await projection?.pool.end();
  });

  it('never takes the key from a URL, and gives a cookie scripts cannot read that expires', async () => {
    const byUrl = await app.inject({ method: 'GET', url: `/login?key=${key.key}` });
    expect(byUrl.statusCode).toBe(400);
    expect(byUrl.headers['set-cookie']).toBeUndefined();
    const login = await logIn(app, key.key);
    const set = String(login.headers['set-cookie']);
    expect(set).toMatch(/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    // Over plain HTTP with no trusted proxy, a forwarded header changes nothing.
    expect(
      String((await logIn(app, key.key, { 'x-forwarded-proto': 'https' })).headers['set-cookie']),
    ).not.toContain('Secure');
    const page = await app.inject({ method: 'GET', url: '/swaps', headers: { cookie } });
    expect(page.body).toContain(`console:viewer:${key.sha256.slice(0, 12)}`);
    // A logout without the session's form token is refused; with it, the session ends.
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const form = { 'content-type': 'application/x-www-form-urlencoded', cookie: set.split(';')[0]! };
    expect(
      (await app.inject({ method: 'POST', url: '/logout', headers: form, payload: '' })).statusCode,
    ).toBe(403);
    expect(
      (await app.inject({ method: 'POST', url: '/logout', headers: form, payload: `_csrf=${csrf}` }))
        .statusCode,
    ).toBe(403); // another session's token
  });

  it('marks the cookie Secure when a trusted proxy says the browser used TLS', async () => {
    const behindProxy = await buildConsoleServer({
      db,
      keys: { viewer: [key.sha256] },
      trustProxy: true,
      logger: createLogger({ level: 'silent' }),
    });
    try {
      const tls = await logIn(behindProxy, key.key, { 'x-forwarded-proto': 'https' });
      expect(String(tls.headers['set-cookie'])).toMatch(/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
      const session = String(tls.headers['set-cookie']).split(';')[0]!;
      const page = await behindProxy.inject({ method: 'GET', url: '/swaps', headers: { cookie: session } });
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
      const out = await behindProxy.inject({
        method: 'POST',
        url: '/logout',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session },
        payload: `_csrf=${csrf}`,
      });
      expect(out.statusCode).toBe(303);
      expect(
        (await behindProxy.inject({ method: 'GET', url: '/swaps', headers: { cookie: session } })).statusCode,
      ).toBe(303);
    } finally {
      await behindProxy.close();
    }
  });

  it('sends a visitor without a session to the login page, and a script to 401', async () => {
    const page = await app.inject({ method: 'GET', url: '/swaps' });
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe('/login');
    const fragment = await app.inject({
      method: 'GET',
      url: '/swaps',
      headers: { 'x-console-fragment': '1' },
    });
    expect(fragment.statusCode).toBe(401);
    const wrong = await app.inject({
      method: 'POST',
      url: '/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'key=slk_wrong',
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });

  it('serves every page to a session, with headers that keep the key and the page private', async () => {
    for (const url of ['/swaps', '/reconciliation', '/books', '/operations']) {
      const r = await app.inject({ method: 'GET', url, headers: { cookie } });
      expect(r.statusCode, url).toBe(200);
      expect(r.headers['referrer-policy']).toBe('no-referrer');
      expect(r.headers['content-security-policy']).toContain("script-src 'self'");
    }
    const csv = await app.inject({
      method: 'GET',
      url: '/reconciliation/mismatches.csv',
      headers: { cookie },
    });
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.body).toBe(
      'provider_id,swap_id,status,reconciled_at,check_name,check_verdict,expected,actual,delta,tolerance,detail\r\n',
    );
  });

  it('answers bad input with a clear error, and an unknown swap with 404', async () => {
    const longId = 'x'.repeat(201);
    // One schema for the ids of every swap and case path: the same answer, before any query.
    for (const url of [`/swaps/p/${longId}`, `/cases/p/${longId}`, `/cases/p/${longId}/evidence.json`]) {
      const bad = await app.inject({ method: 'GET', url, headers: { cookie } });
      expect(bad.statusCode, url).toBe(400);
      expect(bad.body, url).toBe('provider and swap id must be 1-200 printable characters');
    }
    const month = await app.inject({ method: 'GET', url: '/close/p/2026-1', headers: { cookie } });
    expect(month.statusCode).toBe(400);
    expect(month.body).toMatch(/\/close\/<provider>\/<YYYY-MM>/);
    const unknown = await app.inject({ method: 'GET', url: '/swaps/p/nope', headers: { cookie } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('No swap p/nope');
    const books = await app.inject({ method: 'GET', url: '/books?as_of=yesterday', headers: { cookie } });
    expect(books.statusCode).toBe(400);
    expect(books.body).toContain('Times must look like');
  });

  it("shows each worker's health on the operations page, as its /readyz answers", async () => {
    const logger = createLogger({ level: 'silent' });
    const listener = (ok: boolean) =>
      startOpsListener({
        host: '127.0.0.1',
        port: 0,
        metrics: new MetricsRegistry(),
        checks: [
          { name: 'kafka', check: async () => ({ ok, detail: ok ? '1 broker(s)' : 'broker <gone>' }) },
        ],
        logger,
      });
    const [ready, failing] = [await listener(true), await listener(false)];
    const closed = `http://127.0.0.1:${await freePort()}`;
    const withWorkers = await buildConsoleServer({
      db,
      keys: { viewer: [key.sha256] },
      logger,
      workers: new WorkerHealthBoard([
        { name: 'projector', url: ready.url },
        { name: 'reconciler', url: failing.url },
        { name: 'poller', url: closed },
      ]),
    });
    try {
      const login = await logIn(withWorkers, key.key);
      const session = String(login.headers['set-cookie']).split(';')[0]!;
      const page = await withWorkers.inject({
        method: 'GET',
        url: '/operations',
        headers: { cookie: session },
      });
      expect(page.statusCode).toBe(200);
      const shown = [...page.body.matchAll(/data-worker="([^"]+)" data-health="([^"]+)"/g)].map((m) => [
        m[1],
        m[2],
      ]);
      expect(shown).toEqual([
        ['projector', 'ready'],
        ['reconciler', 'not ready'],
        ['poller', 'unreachable'],
      ]);
      expect(page.body).toContain('1 of 3 ready');
      // The reason /readyz gave, escaped like every value on the page.
      expect(page.body).toContain('kafka: broker &lt;gone&gt;');
      expect(page.body).toContain(`${closed}/readyz: ECONNREFUSED`);
    } finally {
      await withWorkers.close();
      await ready.close();
      await failing.close();
    }
    // Without endpoints (a console started by hand) it says how to get them.
    const plain = await app.inject({ method: 'GET', url: '/operations', headers: { cookie } });
    expect(plain.body).toContain('no worker health endpoints configured');
  });

  it('reads through a login Postgres refuses any write, even with the read-only default lifted', async () => {
    const [who] = await db.query<{ u: string; s: boolean }>(
      'select current_user as u, rolsuper as s from pg_roles where rolname = current_user',
    );
    expect(who).toEqual({ u: CONSOLE_READER_ROLE, s: false });
    expect((await db.query<{ n: string }>('select count(*)::text as n from swaps'))[0]!.n).toBe('0');
    const writes = [
      `insert into cases (provider_id, swap_id) values ('p', 's')`,
      `update swaps set status = 'FINISHED'`,
      `delete from platform.outbox`,
      `update platform.providers set enabled = false`,
    ];
    for (const sql of writes)
      await expect(
        db.withClient(async (c) => {
          await c.query('begin read write');
          try {
            return await c.query(sql);
          } finally {
            await c.query('rollback');
          }
        }),
        sql,
      ).rejects.toThrow(/permission denied/);
    await expect(db.withClient((c) => c.query('set role postgres'))).rejects.toThrow(/permission denied/);
  });

  it('reads in read-only sessions, finance views under the finance role', async () => {
    await expect(db.query('create table console_may_not_write (x int)')).rejects.toThrow(/read-only/);
    const [role] = await db.financeQuery<{ r: string }>('select current_user as r');
    expect(role!.r).toBe('swap_ledger_finance');
    expect(db.usesFinanceRole).toBe(true);
    // The finance role may not read the projection's tables directly.
    await expect(db.financeQuery(`select count(*) from ${projection.schema}.swaps`)).rejects.toThrow(
      /permission denied/,
    );
  });
});
