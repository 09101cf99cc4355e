/**
 * Whether an error means the database cannot be reached or is going away (a restart, a failover, an
 * administrator's terminate), as opposed to a refusal of the statement itself: the caller may try again
 * in a moment. The edges answer these with 503 and Retry-After, never 500.
 */

/** SQLSTATE classes and codes of a server that is not there, or not for long. */
const UNAVAILABLE_CODES = new Set([
  '57P01', // admin_shutdown: terminating connection due to administrator command
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the database system is starting up / shutting down / in recovery
  '53300', // too_many_connections
  '08000', // connection_exception
  '08001', // sqlclient_unable_to_establish_sqlconnection
  '08003', // connection_does_not_exist
  '08004', // sqlserver_rejected_establishment_of_sqlconnection
  '08006', // connection_failure
]);

/** Errors of the socket under the connection (Node's codes). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTCONN',
]);

/** What `pg` and `pg-pool` throw, without a code, when the connection ends or cannot be had in time. */
const MESSAGES = [
  /^Connection terminated/i, // "Connection terminated unexpectedly", "... due to connection timeout"
  /^timeout exceeded when trying to connect/i,
  /^Client has encountered a connection error and is not queryable/i,
  /^Client was closed and is not queryable/i,
  /the database system is (starting up|shutting down|in recovery)/i,
  /^terminating connection due to administrator command/i,
];

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const { code, message, errors } = e as { code?: unknown; message?: unknown; errors?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || SOCKET_CODES.has(code))) return true;
    if (typeof message === 'string' && MESSAGES.some((m) => m.test(message))) return true;
    // An AggregateError (a connect to several addresses, each refused): any of them.
    if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
