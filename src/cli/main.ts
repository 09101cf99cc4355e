import { commands } from './commands/index.ts';
import { processIo, UsageError, type CliIo } from './command.ts';
import { ConfigError } from '../config/config.ts';

function help(io: CliIo): void {
  io.stdout('usage: swap-ledger <command> [options]\n');
  for (const c of commands) io.stdout(`  ${c.usage}\n      ${c.summary}`);
}

/** Dispatches on the longest matching command path. Exit codes: 0 ok, 1 failure, 2 usage or input error. */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
    help(io);
    return argv.length === 0 ? 2 : 0;
  }
  const match = [...commands]
    .sort((a, b) => b.words.length - a.words.length)
    .find((c) => c.words.every((w, i) => argv[i] === w));
  if (!match) {
    io.stderr(`swap-ledger: unknown command "${argv.join(' ')}"; run "swap-ledger help"`);
    return 2;
  }
  try {
    return await match.run(argv.slice(match.words.length), io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`swap-ledger ${match.words.join(' ')}: ${e.message}; usage: swap-ledger ${match.usage}`);
      return 2;
    }
    if (e instanceof ConfigError) {
      io.stderr(e.message);
      return 2;
    }
    io.stderr(`swap-ledger ${match.words.join(' ')}: ${(e as Error).message}`);
    return 1;
  }
}
