import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { main } from '../../src/cli/main.ts';
import type { CliIo } from '../../src/cli/command.ts';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import { mapStatus } from '../../src/swap/status.ts';
import { ApiKeyIndex, generateApiKey } from '../../src/providers/api-keys.ts';
import { ProviderRegistryCache } from '../../src/providers/cache.ts';
import { ProvidersFileError, parseProvidersFile } from '../../src/providers/file.ts';
import { recordCreatedSwap } from '../../src/gateway/created.ts';
import { ProviderClients } from '../../src/providers/clients.ts';
import { UnresolvedCredentialError } from '../../src/providers/secrets.ts';
import { pino } from 'pino';
import { loadProvidersFileIfSet, loadProviders } from '../../src/providers/store.ts';
import {
  checkCredentials,
  listProviders,
  readProviderSetup,
  readRegistry,
} from '../../src/providers/reads.ts';
import { testStack, uniqueName } from '../support/context.ts';

const K1 =
  '0478d5facdae2305f48795d3ce7d9244f5060d2f800901da5746d1f4177ae8d7bbe63f3870efc0d36af8f91962811e1d8d9df91ce3b3ea2cd9f550c7d465f8b7b3';

function capture(): CliIo & { out: string[]; err: string[]; text: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    text: () => [...out, ...err].join('\n'),
  };
}

/** Every text value in the platform schema, to prove a clear key is stored nowhere. */
async function allPlatformText(pool: pg.Pool): Promise<string> {
  const tables = await pool.query<{ table_name: string }>(
    `select table_name from information_schema.tables where table_schema = 'platform'`,
  );
  let text = '';
  for (const { table_name } of tables.rows)
    text += JSON.stringify((await pool.query(`select * from platform.${table_name}`)).rows);
  return text;
}

describe('provider registry (real Postgres)', () => {
  const stack = testStack();
  let pool: pg.Pool;
  const savedEnv = { ...process.env };

  beforeAll(async () => {
    // Several processes may migrate at once: the advisory lock serialises them.
    await Promise.all([migratePlatform(stack.databaseUrl), migratePlatform(stack.databaseUrl)]);
    pool = createPool(stack.databaseUrl, { max: 4 });
    process.env.DATABASE_URL = stack.databaseUrl;
    delete process.env.SWAP_LEDGER_CONFIG;
  });

  afterAll(async () => {
    process.env = savedEnv;
    await pool?.end();
  });

  it('loads a providers file into Postgres, and a reload replaces what the file owns', async () => {
    const id = uniqueName('file');
    const k1 = generateApiKey();
    const k2 = generateApiKey();
    const file = (extra: string, keys: string) => `
providers:
  - id: ${id}
    displayName: File Partner
    client:
      baseUrl: https://partner.example/api/
      headers: { x-partner-key: "\${PARTNER_SECRET}" }
      timeouts: { readMs: 1234 }
    webhookKeys:
${keys}
    payloadKeys:
      - { keyId: sig-1, curve: secp256k1, publicKey: "${K1}", validFrom: "2025-01-01T00:00:00Z", validTo: "2026-01-01T00:00:00+0000" }
${extra}
    pollIntervalSeconds: 30
    rateLimit: { perSecond: 5, burst: 10 }
`;
    const env = { PARTNER_SECRET: 'partner-secret-value' };
    const first = parseProvidersFile(
      file(
        `    currencies: { btc: BTC, eth: ETH }\n    statusMap: { finished: FINISHED, UNKNOWN: null }`,
        `      - { keyId: k1, sha256: "${k1.sha256}" }`,
      ),
      { env },
    );
    expect(await loadProviders(pool, first)).toEqual([
      { providerId: id, keysAdded: 1, keysRevoked: 0, activeKeys: 1 },
    ]);
    const setup = await readProviderSetup(pool, id, env);
    expect(setup).toMatchObject({
      client: {
        provider: id,
        baseUrl: 'https://partner.example/api',
        headers: { 'x-partner-key': 'partner-secret-value' },
        timeouts: { readMs: 1234 },
      },
      currencies: { btc: 'BTC', eth: 'ETH' },
      enabled: true,
      pollIntervalSeconds: 30,
    });
    expect(setup!.payloadKeys).toEqual([
      {
        keyId: 'sig-1',
        curve: 'secp256k1',
        publicKey: K1,
        validFrom: '2025-01-01T00:00:00+00:00',
        validTo: '2026-01-01T00:00:00+00:00',
      },
    ]);
    expect(mapStatus(setup!.statusMapping, 'finished')).toMatchObject({ status: 'FINISHED', final: true });
    expect(mapStatus(setup!.statusMapping, 'UNKNOWN')).toBeUndefined();

    // Reload: a second key added, the first revoked by the file, mappings replaced, payload keys gone.
    const second = parseProvidersFile(
      file(
        `    currencies: { btc: BTC }\n    statusMap: { done: FINISHED }\n    finalStatuses: [FINISHED]`,
        `      - { keyId: k1, sha256: "${k1.sha256}", revokedAt: "2026-02-01T00:00:00Z" }\n      - { keyId: k2, sha256: "${k2.sha256}" }`,
      ).replace(/    payloadKeys:\n.*\n/, ''),
      { env },
    );
    expect(await loadProviders(pool, second)).toEqual([
      { providerId: id, keysAdded: 1, keysRevoked: 1, activeKeys: 1 },
    ]);
    const after = await readProviderSetup(pool, id);
    expect(after!.currencies).toEqual({ btc: 'BTC' });
    expect(after!.payloadKeys).toEqual([]);
    expect(mapStatus(after!.statusMapping, 'done')).toMatchObject({ status: 'FINISHED', final: true });
    expect(mapStatus(after!.statusMapping, 'finished')).toBeUndefined();
    expect(mapStatus(after!.statusMapping, 'REFUNDED')).toMatchObject({ final: false });
    const index = new ApiKeyIndex((await readRegistry(pool)).keys);
    expect(index.authenticate(k1.key)).toBeUndefined();
    expect(index.authenticate(k2.key)).toEqual({ providerId: id, keyId: 'k2' });

    // A reload that lists k1 without revokedAt does not bring it back.
    await loadProviders(
      pool,
      parseProvidersFile(file('', `      - { keyId: k1, sha256: "${k1.sha256}" }`), { env }),
    );
    expect(new ApiKeyIndex((await readRegistry(pool)).keys).authenticate(k1.key)).toBeUndefined();
    expect(await allPlatformText(pool)).not.toContain(k1.key);
  });

  it('refuses a key id whose digest changed, or a digest another provider holds, and writes nothing', async () => {
    const a = uniqueName('clash-a');
    const b = uniqueName('clash-b');
    const key = generateApiKey();
    const entry = (id: string, keyId: string, sha256: string, base = 'https://x.example') =>
      `  - { id: ${id}, client: { baseUrl: "${base}" }, webhookKeys: [{ keyId: ${keyId}, sha256: "${sha256}" }] }`;
    await loadProviders(pool, parseProvidersFile(`providers:\n${entry(a, 'k', key.sha256)}`));
    const count = async () =>
      (
        await pool.query(`select (select count(*) from platform.providers)::int as p,
        (select count(*) from platform.provider_api_keys)::int as k,
        (select string_agg(base_url, ',') from platform.providers where id = '${a}') as url`)
      ).rows[0];
    const before = await count();
    const attempt = (text: string) =>
      loadProviders(pool, parseProvidersFile(`providers:\n${text}`)).then(
        () => undefined,
        (e: unknown) => e,
      );
    const changed = await attempt(entry(a, 'k', generateApiKey().sha256, 'https://changed.example'));
    expect(changed).toBeInstanceOf(ProvidersFileError);
    expect((changed as ProvidersFileError).problems[0]).toMatch(/stored with a different digest/);
    const stolen = await attempt(entry(b, 'other', key.sha256));
    expect((stolen as ProvidersFileError).problems[0]).toMatch(new RegExp(`already stored as ${a}/k`));
    expect(await count()).toEqual(before);
  });

  it('provider add / rotate-key / revoke-key / list: keys printed once, stored as digests, rotation keeps old keys', async () => {
    const id = uniqueName('cli');
    const add = capture();
    expect(
      await main(['provider', 'add', id, '--base-url', 'https://cli.example/v2', '--name', 'CLI'], add),
    ).toBe(0);
    const firstKey = add.text().match(/slk_[A-Za-z0-9_-]{43}/)?.[0];
    expect(firstKey).toBeDefined();
    expect(add.text()).toMatch(/shown once/);
    expect(await allPlatformText(pool)).not.toContain(firstKey);

    const cache = new ProviderRegistryCache(pool, { refreshMs: 60_000 });
    await cache.start();
    try {
      expect(cache.snapshot().keys.authenticate(firstKey)?.providerId).toBe(id);
      const runtime = cache.snapshot().providers.get(id)!;
      expect(runtime.rateLimit).toEqual({ perSecond: 50, burst: 100 });
      // EXPIRED is closed but reopenable by default; FINISHED and REFUNDED are final.
      expect(mapStatus(runtime.statusMapping, 'EXPIRED')).toMatchObject({
        statusClass: 'closed',
        final: false,
      });
      expect(mapStatus(runtime.statusMapping, 'REFUNDED')).toMatchObject({
        statusClass: 'final',
        final: true,
      });

      const rotate = capture();
      expect(await main(['provider', 'rotate-key', id], rotate)).toBe(0);
      const secondKey = rotate.text().match(/slk_[A-Za-z0-9_-]{43}/)?.[0];
      expect(secondKey).not.toBe(firstKey);
      await cache.refresh();
      expect(cache.snapshot().keys.authenticate(firstKey)?.providerId).toBe(id); // both valid
      expect(cache.snapshot().keys.authenticate(secondKey)?.providerId).toBe(id);

      const revokeOld = capture();
      expect(await main(['provider', 'rotate-key', id, '--revoke-old'], revokeOld)).toBe(0);
      const thirdKey = revokeOld.text().match(/slk_[A-Za-z0-9_-]{43}/)?.[0];
      expect(revokeOld.text()).toMatch(/revoked: k\d+/);
      await cache.refresh();
      expect(cache.snapshot().keys.authenticate(firstKey)).toBeUndefined();
      expect(cache.snapshot().keys.authenticate(secondKey)).toBeUndefined();
      const third = cache.snapshot().keys.authenticate(thirdKey);
      expect(third?.providerId).toBe(id);

      const revoke = capture();
      expect(await main(['provider', 'revoke-key', id, third!.keyId], revoke)).toBe(0);
      await cache.refresh();
      expect(cache.snapshot().keys.authenticate(thirdKey)).toBeUndefined();
      expect(await main(['provider', 'revoke-key', id, third!.keyId], capture())).toBe(1);

      const list = capture();
      expect(await main(['provider', 'list'], list)).toBe(0);
      const shown = list.text();
      expect(shown).toContain(id);
      expect(shown).toMatch(/0 active: -; 3 revoked/);
      const json = capture();
      expect(await main(['provider', 'list', '--json'], json)).toBe(0);
      const mine = (JSON.parse(json.text()) as { id: string; webhookKeys: unknown[] }[]).find(
        (p) => p.id === id,
      );
      expect(mine?.webhookKeys).toHaveLength(3);
      const digests = (
        await pool.query<{ sha256: string }>(
          'select sha256 from platform.provider_api_keys where provider_id = $1',
          [id],
        )
      ).rows.map((r) => r.sha256);
      expect(digests).toHaveLength(3);
      for (const secret of [firstKey!, secondKey!, thirdKey!, ...digests]) {
        expect(shown).not.toContain(secret);
        expect(json.text()).not.toContain(secret);
      }
    } finally {
      cache.stop();
    }
    const again = capture();
    expect(await main(['provider', 'add', id, '--base-url', 'https://cli.example'], again)).toBe(1);
    expect(again.text()).toMatch(/already exists/);
    expect(await main(['provider', 'rotate-key', uniqueName('nobody')], capture())).toBe(1);
  });

  it('stores partner credentials as ${ENV} references; each process resolves them; list and logs never show them', async () => {
    const id = uniqueName('secret');
    const secret = `s3cret-${uniqueName('v')}`;
    const env = { PARTNER_TOKEN_X: secret };
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) });
    const dir = mkdtempSync(join(tmpdir(), 'providers-'));
    const path = join(dir, 'providers.yaml');
    writeFileSync(
      path,
      `providers:\n  - { id: ${id}, client: { baseUrl: "https://p.example", headers: { Authorization: "Bearer \${PARTNER_TOKEN_X}" } } }\n`,
    );
    await loadProvidersFileIfSet(pool, path, logger, env);
    // Stored as written: the reference, never the value.
    const stored = await pool.query(`select auth_headers from platform.providers where id = $1`, [id]);
    expect(stored.rows[0].auth_headers).toEqual({ authorization: 'Bearer ${PARTNER_TOKEN_X}' });
    expect(await allPlatformText(pool)).not.toContain(secret);
    // A process that calls the partner resolves from its own environment...
    expect((await readProviderSetup(pool, id, env))!.client.headers).toEqual({
      authorization: `Bearer ${secret}`,
    });
    const clients = new ProviderClients(pool, { refreshMs: 60_000, env });
    expect((await clients.get(id))!.setup.client.headers).toEqual({ authorization: `Bearer ${secret}` });
    // ...one without it is refused, naming the variable only; one that needs no credential gets none.
    await expect(readProviderSetup(pool, id, {})).rejects.toThrow(
      new UnresolvedCredentialError(
        `provider ${id}: header authorization needs environment variable PARTNER_TOKEN_X, not set in this process`,
      ),
    );
    expect((await readProviderSetup(pool, id))!.client.headers).toBeUndefined();
    const problems = await checkCredentials(pool, logger, {});
    expect(problems).toContain(
      `provider ${id}: header authorization needs environment variable PARTNER_TOKEN_X, not set in this process`,
    );
    const mine = (list: string[]) => list.filter((m) => m.startsWith(`provider ${id}:`));
    expect(mine(await checkCredentials(pool, logger, { ...process.env, ...env }))).toEqual([]);
    // provider list (text and JSON) and every log line: no value.
    process.env.PARTNER_TOKEN_X = secret;
    try {
      for (const args of [
        ['provider', 'list'],
        ['provider', 'list', '--json'],
      ]) {
        const list = capture();
        expect(await main(args, list)).toBe(0);
        expect(list.text()).toContain(id);
        expect(list.text()).not.toContain(secret);
      }
    } finally {
      delete process.env.PARTNER_TOKEN_X;
    }
    expect(lines.join('\n')).toContain('PARTNER_TOKEN_X');
    expect(lines.join('\n')).not.toContain(secret);
  });

  it('refuses a header secret written in clear and credentials in a baseUrl, naming each', () => {
    const id = uniqueName('hdr');
    const refused = (() => {
      try {
        parseProvidersFile(
          `providers:\n  - { id: ${id}, client: { baseUrl: "https://u:pw@h.example", headers: { authorization: "Bearer sekrit-token" } } }`,
        );
        return undefined;
      } catch (e) {
        return e as ProvidersFileError;
      }
    })();
    expect(refused).toBeInstanceOf(ProvidersFileError);
    expect(refused!.message).toMatch(/headers\.authorization: a value written in clear/);
    expect(refused!.message).toMatch(/baseUrl: must not carry credentials \(user:pass@\)/);
    expect(refused!.message).not.toMatch(/sekrit-token|:pw@/);
  });

  it('provider list shows header names, never their values (a literal accepted only under allowLiteralSecrets)', async () => {
    const id = uniqueName('hdr');
    const [def] = parseProvidersFile(
      `allowLiteralSecrets: true\nproviders:\n  - { id: ${id}, client: { baseUrl: "https://h.example", headers: { authorization: "Bearer sekrit-token" } } }`,
    );
    expect(def!.literalHeaders).toEqual(['authorization']);
    await loadProviders(pool, [def!]);
    const summary = (await listProviders(pool)).find((p) => p.id === id)!;
    expect(summary.authHeaderNames).toEqual(['authorization']);
    expect(JSON.stringify(summary)).not.toMatch(/sekrit-token/);
    const list = capture();
    await main(['provider', 'list'], list);
    expect(list.text()).not.toContain('sekrit-token');
  });

  it('provider load: --check lists every problem (exit 2); a good file is loaded', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'providers-'));
    const bad = join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      'providers:\n  - id: UPPER\n    client: { baseUrl: nope }\n    rateLimit: { perSecond: 0 }\n',
    );
    const io = capture();
    expect(await main(['provider', 'load', '--file', bad, '--check'], io)).toBe(2);
    expect(io.err.join('\n')).toMatch(/id: must be lower-case[\s\S]*baseUrl: must be a URL[\s\S]*perSecond/);
    const id = uniqueName('load');
    const good = join(dir, 'good.yaml');
    writeFileSync(good, `providers:\n  - id: ${id}\n    client: { baseUrl: "https://good.example" }\n`);
    const check = capture();
    expect(await main(['provider', 'load', '--file', good, '--check'], check)).toBe(0);
    expect((await pool.query('select 1 from platform.providers where id = $1', [id])).rowCount).toBe(0);
    const load = capture();
    expect(await main(['provider', 'load', '--file', good], load)).toBe(0);
    expect(load.text()).toContain(`${id}: loaded`);
    expect((await pool.query('select managed_by from platform.providers where id = $1', [id])).rows).toEqual([
      { managed_by: 'file' },
    ]);
  });

  it('db migrate applies the platform migrations and the projection ones', async () => {
    const schema = uniqueName('migrated', '_');
    const io = capture();
    expect(await main(['db', 'migrate', '--schema', schema], io)).toBe(0);
    expect(io.out).toEqual([
      'migrations applied to schema platform',
      `migrations applied to schema ${schema}`,
    ]);
    const tables = await pool.query<{ n: number }>(
      `select count(*)::int as n from information_schema.tables where table_schema = $1 and table_name = 'swaps'`,
      [schema],
    );
    expect(tables.rows[0]!.n).toBe(1);
    const journal = await pool.query<{ n: number }>(
      'select count(*)::int as n from platform.__drizzle_migrations',
    );
    expect(journal.rows[0]!.n).toBeGreaterThanOrEqual(1);
  });

  it('recordCreatedSwap: the gateway record, idempotent', async () => {
    const swapId = uniqueName('swap');
    const rec = { swapId, providerId: 'p', createdAt: '2026-11-01T12:00:00.000Z' };
    await recordCreatedSwap(pool, rec);
    await recordCreatedSwap(pool, rec);
    const rows = await pool.query(
      'select swap_id, provider_id, created_at from platform.created_swaps where swap_id = $1',
      [swapId],
    );
    expect(rows.rows).toEqual([{ swap_id: swapId, provider_id: 'p', created_at: '2026-11-01 12:00:00+00' }]);
  });
});
