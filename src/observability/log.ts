import { destination, pino, type Logger } from 'pino';

export type { Logger };

/**
 * The project's logger. Secrets never reach it: API keys, auth headers and passwords in URLs are
 * redacted wherever they appear in a logged object.
 */
export function createLogger(
  options: {
    level?: string;
    name?: string;
    /** A file instead of stdout (the benchmark's /dev/null). */ destination?: string;
  } = {},
): Logger {
  const stream = options.destination ? destination({ dest: options.destination, sync: true }) : undefined;
  return pino(
    {
      name: options.name ?? 'swap-ledger',
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      redact: {
        paths: [
          'apiKey',
          '*.apiKey',
          'headers["x-api-key"]',
          '*.headers["x-api-key"]',
          'headers.authorization',
          '*.headers.authorization',
          'password',
          '*.password',
        ],
        censor: '[redacted]',
      },
    },
    stream,
  );
}

/** Removes the password of a connection URL before it is shown anywhere. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '[unparseable url]';
  }
}
