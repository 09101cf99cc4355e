import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ConsoleDb } from '../../src/console/db.ts';
import { buildConsoleServer } from '../../src/console/server.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { generateApiKey } from '../../src/providers/api-keys.ts';
import { freshEventLog } from '../support/event-log.ts';
import { freshProjection, testKafka, testStack } from '../support/context.ts';

const FORM = 'application/x-www-form-urlencoded';

/** Case actions over HTTP: roles and CSRF refuse before anything is appended; an allowed one reaches Kafka. */
describe('console case actions', () => {
  const viewer = generateApiKey();
  const operator = generateApiKey();
  let app: FastifyInstance;
  let db: ConsoleDb;
  let projection: Awaited<ReturnType<typeof freshProjection>>;
  let log: Awaited<ReturnType<typeof freshEventLog>>;

  const topicEnd = async () => {
    const admin = testKafka('console-cases').admin();
    await admin.connect();
    try {
      return (await admin.fetchTopicOffsets(log.topic)).reduce((a, p) => a + Number(p.high), 0);
    } finally {
      await admin.disconnect();
    }
  };
  const session = async (key: string) => {
    const login = await app.inject({
      method: 'POST',
      url: '/login',
      headers: { 'content-type': FORM },
      payload: `key=${key}`,
    });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const page = await app.inject({ method: 'GET', url: '/cases/p/s1', headers: { cookie } });
    return { cookie, page: page.body, csrf: /name="_csrf" value="([^"]+)"/.exec(page.body)![1]! };
  };
  const post = (cookie: string, payload: string) =>
    app.inject({
      method: 'POST',
      url: '/cases/p/s1/acknowledge',
      headers: { 'content-type': FORM, cookie },
      payload,
    });

  beforeAll(async () => {
    const { databaseUrl } = testStack();
    await migratePlatform(databaseUrl);
    projection = await freshProjection('console_cases');
    log = await freshEventLog(1);
    // The case as the projector keeps it: seeded directly, since only the console's edge is under test here.
    await projection.pool.query(
      `insert into cases (provider_id, swap_id, state, trigger, trigger_event_id, opened_at, openings, failing,
         history, last_event_id, updated_at, amount_at_stake, stake_currency)
       values ('p', 's1', 'open', 'mismatch', gen_random_uuid(), now(), 1, 'amount.to_wallet:MISMATCH:1', $1, gen_random_uuid(), now(),
         '0.0000010', 'BTC')`,
      [
        JSON.stringify([
          {
            eventId: 'e1',
            at: '2026-11-28T10:00:00.000Z',
            step: 'open',
            from: null,
            to: 'open',
            operator: null,
            reason: 'MISMATCH',
            details: {},
          },
        ]),
      ],
    );
    db = await ConsoleDb.open(databaseUrl, projection.schema, 'finance', createLogger({ level: 'silent' }));
    app = await buildConsoleServer({
      db,
      keys: { viewer: [viewer.sha256], operator: [operator.sha256] },
      logger: createLogger({ level: 'silent' }),
      appendCaseEvent: (event) => log.append([event]),
    });
  });

  afterAll(async () => {
    await app?.close();
    await db?.close();
    await log?.close();
    await projection?.pool.end();
  });

  it('lists the case, and shows a viewer its history but no action', async () => {
    const v = await session(viewer.key);
    const list = await app.inject({
      method: 'GET',
      url: '/cases?state=open&partner=p',
      headers: { cookie: v.cookie },
    });
    expect(list.body).toContain('href="/cases/p/s1"');
    // The amount at stake as every console page writes an amount: right-aligned, at BTC's 8 decimals.
    expect(list.body).toContain('<td class="num"><span class="num">0.00000100</span> BTC</td>');
    // Filtered in the query: by the failing check's exact name and by the age bucket it opened in.
    const listed = async (query: string) =>
      (
        await app.inject({ method: 'GET', url: `/cases?${query}`, headers: { cookie: v.cookie } })
      ).body.includes('href="/cases/p/s1"');
    expect(await listed('check=amount.to_wallet')).toBe(true);
    expect(await listed('check=amount.to')).toBe(false);
    expect(await listed('check=fee.provider')).toBe(false);
    expect(await listed('age=0-1d&check=amount.to_wallet')).toBe(true);
    expect(await listed('age=1-7d')).toBe(false);
    expect(await listed('partner=q')).toBe(false);
    expect(v.page).toContain('MISMATCH');
    expect(v.page).toContain('id="no-actions"');
    expect(v.page).not.toContain('data-action=');
    // The pack download answers; this seeded case has no swap behind it, so it names what is missing.
    const pack = await app.inject({
      method: 'GET',
      url: '/cases/p/s1/evidence.json',
      headers: { cookie: v.cookie },
    });
    expect(pack.statusCode).toBe(404);
    expect(pack.body).toContain('no swap p/s1');
  });

  it("refuses a viewer's forged POST and a POST without the session's token, appending nothing", async () => {
    const before = await topicEnd();
    const v = await session(viewer.key);
    expect((await post(v.cookie, `_csrf=${v.csrf}&reason=looked`)).statusCode).toBe(403);
    const o = await session(operator.key);
    expect((await post(o.cookie, 'reason=looked')).statusCode).toBe(403);
    expect((await post(o.cookie, `_csrf=${v.csrf}&reason=looked`)).statusCode).toBe(403);
    expect(await topicEnd()).toBe(before);
  });

  it("appends an operator's acknowledgement, signed with the operator's name; a missing reason is refused", async () => {
    const o = await session(operator.key);
    expect(o.page).toContain('data-action="acknowledge"');
    const before = await topicEnd();
    const refused = await post(o.cookie, `_csrf=${o.csrf}&reason=`);
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('--reason');
    const ok = await post(o.cookie, `_csrf=${o.csrf}&reason=${encodeURIComponent('looking at it')}`);
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/cases/p/s1');
    expect(await topicEnd()).toBe(before + 1);
    // The projection is the projector's: the console wrote nothing to it.
    const [row] = (await projection.pool.query(`select state from cases where swap_id = 's1'`)).rows;
    expect(row.state).toBe('open');
  });
});
