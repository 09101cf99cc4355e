import pg from 'pg';
import { createLogger, type Logger } from '../observability/log.ts';
import { assertIdentifier } from './identifier.ts';

// In its own module, so the CLI's option parsing checks a name without loading pg and drizzle.
export { assertIdentifier };

// numeric and bigint come back as text: money must never become a JS number on the way out either.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => v);
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);
// Times stay text as well: the fold copies them, never computes with them, and replay must not shift them.
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, (v) => v);

export interface PoolOptions {
  /** The only schema unqualified names resolve to: the live projection, or a replay's fresh one. */
  searchPath?: string;
  max?: number;
  applicationName?: string;
  /** false: commits do not wait for the WAL flush (a crash may lose the last commits, never half of one). */
  synchronousCommit?: boolean;
  /**
   * Most milliseconds to wait for a connection (a new one, or a free one of a busy pool); none: no limit.
   * An edge that answers callers sets it, so a database that does not answer gives a 503, not a hang.
   */
  connectTimeoutMs?: number;
}

let idleErrors: Logger | undefined;

/**
 * Every connection of a pool that the server ends (a restart, an administrator's terminate, a dropped
 * database) is logged at warn instead of ending the process:
 * - an idle one is taken out of the pool, which then emits 'error' (pg-pool listens on idle clients only);
 * - one checked out of the pool (a transaction, a query between two statements) emits 'error' on the
 *   client itself, which pg-pool leaves without a listener while it is out: with none, Node throws it from
 *   the socket's handler and a worker dies of a Postgres restart (57P01). Every client gets a listener as
 *   it connects; its statement fails with the connection's error, and on release the pool drops it.
 * The pool opens another connection when one is needed.
 */
export function warnOfIdleConnectionErrors(pool: pg.Pool, logger: () => Logger): void {
  warnOfConnectionErrors(
    pool,
    logger,
    'the server closed an idle database connection; the pool opens another when one is needed',
  );
  // Idle clients are the pool's to report (above); only those out of the pool are reported here.
  const out = new WeakSet<pg.PoolClient>();
  pool.on('acquire', (client) => out.add(client));
  pool.on('release', (_err, client) => out.delete(client));
  pool.on('remove', (client) => out.delete(client));
  pool.on('connect', (client) =>
    client.on('error', (err) => {
      if (!out.has(client)) return;
      logger().warn(
        { err },
        'the server closed a database connection in use; its statement fails, the pool opens another',
      );
    }),
  );
}

function warnOfConnectionErrors(
  emitter: { on(event: 'error', listener: (err: Error) => void): unknown },
  logger: () => Logger,
  message: string,
): void {
  emitter.on('error', (err) => logger().warn({ err }, message));
}

const dbLogger = () => (idleErrors ??= createLogger({ name: 'db' }));

/**
 * A connected client of its own, for a session-scoped hold (a migration's advisory lock) or a one-off
 * command's few statements. A server that ends it while no statement runs makes it emit 'error', which
 * with no listener would end the process as a pool's does: it is logged at warn, and the client's next
 * statement fails with the connection's error instead.
 */
export async function connectClient(
  databaseUrl: string,
  config: Omit<pg.ClientConfig, 'connectionString'> = {},
  logger: () => Logger = dbLogger,
): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl, ...config });
  warnOfConnectionErrors(
    client,
    logger,
    'the server closed a database connection between statements; its next statement fails',
  );
  try {
    await client.connect();
  } catch (e) {
    await client.end().catch(() => {});
    throw e;
  }
  return client;
}

export function createPool(databaseUrl: string, options: PoolOptions = {}): pg.Pool {
  const searchPath = options.searchPath ? assertIdentifier(options.searchPath) : undefined;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'swap-ledger',
    ...(options.connectTimeoutMs !== undefined ? { connectionTimeoutMillis: options.connectTimeoutMs } : {}),
    // UTC, so timestamps read back as text are the same in every session (checksums depend on it).
    options: [
      '-c TimeZone=UTC',
      ...(searchPath ? [`-c search_path=${searchPath}`] : []),
      ...(options.synchronousCommit === false ? ['-c synchronous_commit=off'] : []),
    ].join(' '),
  });
  warnOfIdleConnectionErrors(pool, dbLogger);
  return pool;
}
