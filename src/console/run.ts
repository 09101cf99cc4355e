import type { Config } from '../config/config.ts';
import { createKafka } from '../events/kafka.ts';
import { openAppender } from '../events/open.ts';
import type { EventAppender } from '../events/producer.ts';
import type { SwapEvent } from '../events/types.ts';
import type { Logger } from '../observability/log.ts';
import { ConsoleDb } from './db.ts';
import { buildConsoleServer } from './server.ts';
import { WorkerHealthBoard } from './workers.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';

export interface RunningConsole {
  readonly url: string;
  stop(): Promise<void>;
}

export class ConsoleConfigError extends InputRefusedError {
  override name = 'ConsoleConfigError';
}

export async function startConsole(
  config: Pick<
    Config,
    | 'DATABASE_URL'
    | 'KAFKA_BROKERS'
    | 'KAFKA_CLIENT_ID'
    | 'EVENTS_TOPIC'
    | 'PROJECTION_SCHEMA'
    | 'CONSOLE_HOST'
    | 'CONSOLE_PORT'
    | 'CONSOLE_KEY_DIGESTS'
    | 'CONSOLE_WORKER_HEALTH'
  > &
    Partial<
      Pick<
        Config,
        | 'HTTP_REQUEST_TIMEOUT_MS'
        | 'CONSOLE_OPERATOR_KEY_DIGESTS'
        | 'CONSOLE_APPROVER_KEY_DIGESTS'
        | 'CONSOLE_TRUST_PROXY'
        | 'SCHEMA_REGISTRY_URL'
        | 'KAFKA_SEND_TIMEOUT_MS'
      >
    >,
  logger: Logger,
  options: { financeSchema: string },
): Promise<RunningConsole> {
  const keys = {
    viewer: config.CONSOLE_KEY_DIGESTS,
    operator: config.CONSOLE_OPERATOR_KEY_DIGESTS ?? [],
    approver: config.CONSOLE_APPROVER_KEY_DIGESTS ?? [],
  };
  if (Object.values(keys).every((k) => k.length === 0))
    throw new ConsoleConfigError(
      'CONSOLE_KEY_DIGESTS, CONSOLE_OPERATOR_KEY_DIGESTS and CONSOLE_APPROVER_KEY_DIGESTS list no login key: the console refuses to start open',
    );
  const admin = createKafka({
    brokers: config.KAFKA_BROKERS,
    clientId: `${config.KAFKA_CLIENT_ID}-console`,
  }).admin();
  await admin.connect();
  const db = await ConsoleDb.open(
    config.DATABASE_URL,
    config.PROJECTION_SCHEMA,
    options.financeSchema,
    logger,
    {
      admin,
      topic: config.EVENTS_TOPIC,
    },
  ).catch(async (e: unknown) => {
    await admin.disconnect();
    throw e;
  });
  // Case actions append through the appender, opened at the first one: a console only read never opens it.
  let appender: Promise<EventAppender> | undefined;
  const registry = config.SCHEMA_REGISTRY_URL;
  const appendCaseEvent = registry
    ? async (event: SwapEvent) => {
        appender ??= openAppender(
          {
            ...config,
            SCHEMA_REGISTRY_URL: registry,
            KAFKA_SEND_TIMEOUT_MS: config.KAFKA_SEND_TIMEOUT_MS ?? 5000,
          },
          'console',
          logger,
        ).catch((e: unknown) => {
          appender = undefined;
          throw e;
        });
        await (await appender).append(event);
      }
    : undefined;
  const app = await buildConsoleServer({
    ...(appendCaseEvent ? { appendCaseEvent } : {}),
    db,
    keys,
    trustProxy: config.CONSOLE_TRUST_PROXY ?? false,
    logger,
    workers: new WorkerHealthBoard(config.CONSOLE_WORKER_HEALTH),
    ...(config.HTTP_REQUEST_TIMEOUT_MS !== undefined
      ? { requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS }
      : {}),
  });
  try {
    await app.listen({ host: config.CONSOLE_HOST, port: config.CONSOLE_PORT });
  } catch (e) {
    await db.close();
    await admin.disconnect();
    throw e;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.CONSOLE_PORT;
  const host = config.CONSOLE_HOST.includes(':') ? `[${config.CONSOLE_HOST}]` : config.CONSOLE_HOST;
  return {
    url: `http://${host}:${port}`,
    async stop() {
      await app.close();
      await (await appender?.catch(() => undefined))?.stop();
      await db.close();
      await admin.disconnect();
    },
  };
}
