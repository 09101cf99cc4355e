import type { Command } from '../command.ts';
import { parseOptions, UsageError, runUntilSignal } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createLogger } from '../../observability/log.ts';
import { startProjector } from '../../projector/run.ts';

/**
 * Fault points for crash tests (PROJECTOR_CRASH_AT=mid-batch|before-commit, PROJECTOR_CRASH_AFTER=n):
 * the process kills itself with SIGKILL inside the n-th batch's transaction, as a power cut would.
 */
function crashHooks(env: NodeJS.ProcessEnv) {
  const point = env.PROJECTOR_CRASH_AT;
  if (point !== 'mid-batch' && point !== 'before-commit') return undefined;
  let remaining = Number(env.PROJECTOR_CRASH_AFTER ?? '1');
  const crash = () => {
    if (--remaining <= 0) process.kill(process.pid, 'SIGKILL');
  };
  return point === 'mid-batch' ? { midBatch: crash } : { beforeCommit: crash };
}

export const projectorRunCommand: Command = {
  words: ['projector', 'run'],
  usage: 'projector run [--schema <name>] [--group <id>] [--max-batch <events>]',
  summary: 'fold the events topic into Postgres as a consumer-group member, until SIGTERM',
  async run(args) {
    const { values } = parseOptions(args, { values: ['schema', 'group', 'max-batch'] });
    const maxBatch = values['max-batch'] === undefined ? undefined : Number(values['max-batch']);
    if (maxBatch !== undefined && !(Number.isInteger(maxBatch) && maxBatch > 0)) {
      throw new UsageError('--max-batch must be a whole number > 0');
    }
    const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const logger = createLogger({ level: config.LOG_LEVEL, name: 'projector' });
    const hooks = crashHooks(process.env);
    const running = await startProjector(
      { ...config, PROJECTION_SCHEMA: values.schema ?? config.PROJECTION_SCHEMA },
      logger,
      {
        ...(hooks ? { hooks } : {}),
        ...(values.group ? { groupId: values.group } : {}),
        ...(maxBatch ? { maxBatchEvents: maxBatch } : {}),
        onBatch: (b) =>
          logger.info(
            { partition: b.partition, events: b.events, next: b.nextOffset.toString() },
            'batch committed',
          ),
      },
    );
    return runUntilSignal(running, logger, 'projector');
  },
};
