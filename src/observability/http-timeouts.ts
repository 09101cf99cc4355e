import type { ServerOptions } from 'node:http';

/**
 * Deadlines of every HTTP listener (webhook, gateway, console, the ops listener): a request whose headers
 * and body have not all arrived within `requestTimeoutMs` of its first byte is answered 408 and its
 * connection closed, so an outsider cannot hold a connection open by sending a body slowly or never
 * finishing it. Node looks for such requests every TIMEOUT_CHECK_INTERVAL_MS, so the 408 comes at most that
 * much after the deadline (without it, Node's own defaults let an unfinished body wait five minutes and
 * more). A connection that never sends a request is closed by the same deadline.
 */

/** HTTP_REQUEST_TIMEOUT_MS unless configured. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** How often Node checks open requests against their deadline (its own default is 30 s). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1000;

/** The options a Fastify listener is built with (Fastify passes `http` on to node:http). */
export function listenerTimeouts(requestTimeoutMs: number = DEFAULT_REQUEST_TIMEOUT_MS): {
  requestTimeout: number;
  http: ServerOptions;
} {
  return {
    requestTimeout: requestTimeoutMs,
    http: {
      requestTimeout: requestTimeoutMs,
      // Headers within the same deadline (Node refuses a headers deadline longer than the request's).
      headersTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, requestTimeoutMs),
    },
  };
}
