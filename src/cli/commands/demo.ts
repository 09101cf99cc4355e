import { parseOptions, UsageError, runUntilSignal, type Command } from '../command.ts';
import { createLogger } from '../../observability/log.ts';
import { demoOptionsFromEnv, startDemo } from '../../demo/run.ts';

export const demoRunCommand: Command = {
  words: ['demo', 'run'],
  usage: 'demo run',
  summary:
    'the demo partner (simulator) and a stream of demo swaps through the gateway; started by "up" (DEMO_* variables)',
  async run(args, io) {
    const { positionals } = parseOptions(args, { values: [] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    let options;
    try {
      options = demoOptionsFromEnv(process.env);
    } catch (e) {
      io.stderr((e as Error).message);
      return 2;
    }
    const logger = createLogger({ name: 'demo' });
    const demo = await startDemo(options, logger);
    return runUntilSignal(demo, logger, 'demo');
  },
};
