import { allCommands, commandsNamed } from './commands/index.ts';
import { processIo, usageText, UsageError, wantsHelp, type CliIo } from './command.ts';
import { ConfigError } from '../config/config.ts';
import { startTracing } from '../observability/tracing-start.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';

async function help(io: CliIo): Promise<void> {
  io.stdout('usage: swap-ledger <command> [options]\n');
  for (const c of await allCommands()) io.stdout(`  ${c.usage}\n      ${c.summary}`);
}

/** One line: the error's first line, and the root cause's (drivers wrap the database's own message). */
function describe(e: unknown): string {
  const first = (x: unknown) =>
    String((x as Error)?.message ?? x)
      .split('\n')[0]!
      .slice(0, 300);
  let cause = (e as { cause?: unknown }).cause;
  while ((cause as { cause?: unknown } | undefined)?.cause) cause = (cause as { cause?: unknown }).cause;
  return cause ? `${first(e)}: ${first(cause)}` : first(e);
}

/** Dispatches on the longest matching command path. Exit codes: 0 ok, 1 failure, 2 usage or input error. */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
    await help(io);
    return argv.length === 0 ? 2 : 0;
  }
  // Only the module of the command's first word is loaded.
  const match = (await commandsNamed(argv[0]!))
    .sort((a, b) => b.words.length - a.words.length)
    .find((c) => c.words.every((w, i) => argv[i] === w));
  if (!match) {
    io.stderr(`swap-ledger: unknown command "${argv.join(' ')}"; run "swap-ledger help"`);
    return 2;
  }
  const rest = argv.slice(match.words.length);
  if (wantsHelp(rest)) {
    io.stdout(usageText(match));
    return 0;
  }
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; flushed before the command's exit.
  const tracing = await startTracing({ serviceName: `swap-ledger-${match.words.join('-')}` });
  try {
    return await match.run(rest, io);
  } catch (e) {
    // A refusal of what was given (usage, configuration, a setup file, an operator's input): exit 2.
    if (e instanceof InputRefusedError) {
      if (e instanceof UsageError)
        io.stderr(`swap-ledger ${match.words.join(' ')}: ${e.message}; usage: swap-ledger ${match.usage}`);
      else if (e instanceof ConfigError) io.stderr(e.message);
      else io.stderr(`swap-ledger ${match.words.join(' ')}: ${e.message}`);
      return 2;
    }
    io.stderr(`swap-ledger ${match.words.join(' ')}: ${describe(e)}`);
    return 1;
  } finally {
    await tracing?.shutdown().catch(() => undefined);
  }
}
