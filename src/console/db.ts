import pg from 'pg';
import type { Admin } from 'kafkajs';
import { assertIdentifier, warnOfIdleConnectionErrors } from '../db/client.ts';
import { FINANCE_ROLE } from '../ledger/finance-views.ts';
import type { Logger } from '../observability/log.ts';

/**
 * The console's only way to the data. Every session is read-only (`default_transaction_read_only`), so no
 * page can write whatever its SQL; finance figures are read through the finance views under the
 * read-only finance role (`set local role`), as finance's own logins would.
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
            { err: (e as Error).message },
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
