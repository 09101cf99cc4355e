import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Admin } from 'kafkajs';
import { assertIdentifier, connectClient, warnOfIdleConnectionErrors } from '../db/client.ts';
import { PLATFORM_SCHEMA } from '../db/platform-schema.ts';
import { FINANCE_ROLE } from '../ledger/finance-views.ts';
import type { Logger } from '../observability/log.ts';

/** The login the console reads with: SELECT on the projection and platform tables, nothing else. */
export const CONSOLE_READER_ROLE = 'swap_ledger_console_reader';

/**
 * Creates (or refreshes) the reader login and its grants, through the writers' login, and returns the URL
 * the console reads with. A session default can be lifted by any statement; a role's missing privilege
 * cannot. Done at console start, not in a migration: the projection schema is chosen by PROJECTION_SCHEMA.
 * The password is derived from the writers' URL, so every console on that database agrees on it and only a
 * holder of that URL can derive it.
 */
export async function provisionConsoleReader(
  databaseUrl: string,
  live: string,
  finance: string,
): Promise<string> {
  assertIdentifier(live);
  assertIdentifier(finance);
  const password = createHash('sha256').update(`${CONSOLE_READER_ROLE}\n${databaseUrl}`).digest('base64url');
  const client = await connectClient(databaseUrl);
  try {
    await client.query('begin');
    // Consoles (and test files) starting together would race on the catalog rows a grant updates.
    await client.query(`select pg_advisory_xact_lock(hashtext('${CONSOLE_READER_ROLE}'))`);
    const exists = await client.query('select 1 from pg_roles where rolname = $1', [CONSOLE_READER_ROLE]);
    await client.query(
      `${exists.rowCount ? 'alter' : 'create'} role ${CONSOLE_READER_ROLE} login nosuperuser nocreatedb
       nocreaterole noinherit noreplication nobypassrls password '${password}'`,
    );
    for (const schema of [live, PLATFORM_SCHEMA]) {
      await client.query(`grant usage on schema ${schema} to ${CONSOLE_READER_ROLE}`);
      await client.query(`grant select on all tables in schema ${schema} to ${CONSOLE_READER_ROLE}`);
      // Tables a later migration adds (by the writers' login) are readable without a console restart.
      await client.query(
        `alter default privileges in schema ${schema} grant select on tables to ${CONSOLE_READER_ROLE}`,
      );
    }
    // Finance views are read under the finance role (itself read-only), when it exists.
    const financeRole = await client.query('select 1 from pg_roles where rolname = $1', [FINANCE_ROLE]);
    if (financeRole.rowCount) await client.query(`grant ${FINANCE_ROLE} to ${CONSOLE_READER_ROLE}`);
    await client.query('commit');
  } catch (e) {
    await client.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    await client.end();
  }
  const url = new URL(databaseUrl);
  url.username = CONSOLE_READER_ROLE;
  url.password = password;
  return url.toString();
}

/**
 * The console's only way to the data. `ConsoleDb.open` reads through CONSOLE_READER_ROLE, a login with no
 * write privilege; every session is also read-only (`default_transaction_read_only`). Finance figures are
 * read through the finance views under the read-only finance role (`set local role`), as finance's own
 * logins would.
 */
export class ConsoleDb {
  private readonly pool: pg.Pool;
  private financeRole = true;

  constructor(
    databaseUrl: string,
    readonly live: string,
    readonly finance: string,
    private readonly logger: Logger,
    readonly kafka?: { admin: Admin; topic: string },
  ) {
    assertIdentifier(live);
    assertIdentifier(finance);
    this.pool = new pg.Pool({
      connectionString: databaseUrl,
      max: 4,
      application_name: 'swap-ledger-console',
      options: `-c TimeZone=UTC -c search_path=${live} -c default_transaction_read_only=on -c statement_timeout=10000`,
    });
    warnOfIdleConnectionErrors(this.pool, () => logger);
  }

  /** A console reading through CONSOLE_READER_ROLE (created or refreshed first). */
  static async open(
    databaseUrl: string,
    live: string,
    finance: string,
    logger: Logger,
    kafka?: { admin: Admin; topic: string },
  ): Promise<ConsoleDb> {
    const readerUrl = await provisionConsoleReader(databaseUrl, live, finance);
    return new ConsoleDb(readerUrl, live, finance, logger, kafka);
  }

  /** The read-only pool itself, for the shared readers that take one (src/ops/cases.ts). */
  get reader(): pg.Pool {
    return this.pool;
  }

  /** Projection and platform tables (operations, journal): read-only session, the service role. */
  async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    return (await this.pool.query<R>(sql, params)).rows;
  }

  /** A finance view, under the finance role when this login may take it. */
  async financeQuery<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    const client = await this.pool.connect();
    try {
      await client.query('begin read only');
      if (this.financeRole) {
        try {
          await client.query('savepoint role');
          await client.query(`set local role ${FINANCE_ROLE}`);
        } catch (e) {
          await client.query('rollback to savepoint role');
          this.financeRole = false;
          this.logger.warn(
            { err: e },
            `cannot take role ${FINANCE_ROLE}; finance views are read with the console's own (read-only) login`,
          );
        }
      }
      const rows = (await client.query<R>(sql, params)).rows;
      await client.query('commit');
      return rows;
    } catch (e) {
      await client.query('rollback').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  }

  /** Whether finance reads run under the read-only role (shown on the operations page). */
  get usesFinanceRole(): boolean {
    return this.financeRole;
  }

  withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.pool.connect().then(async (client) => {
      try {
        return await work(client);
      } finally {
        client.release();
      }
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
