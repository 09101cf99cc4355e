import { parseArgs } from 'node:util';
import { whenStopRequested } from '../lifecycle/stop.ts';
import type { Logger } from '../observability/log.ts';
// The light modules, not db/client.ts and ledger/finance-views.ts: every command loads this one.
import { assertIdentifier } from '../db/identifier.ts';
import { FINANCE_SCHEMA } from '../ledger/finance-schema.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';

// Commands are written out one object each (words, usage, summary, option parsing): alike by design.
/** A CLI command: `words` is the command path (e.g. ['payload', 'verify']); `run` returns the exit code. */
export interface Command {
  readonly words: readonly string[];
  readonly usage: string;
  readonly summary: string;
  run(args: string[], io: CliIo): Promise<number>;
}

export interface CliIo {
  stdout(line: string): void;
  stderr(line: string): void;
}

export const processIo: CliIo = {
  stdout: (line) => process.stdout.write(line + '\n'),
  stderr: (line) => process.stderr.write(line + '\n'),
};

/** A usage mistake: printed as one line on stderr, exit code 2. */
export class UsageError extends InputRefusedError {
  override name = 'UsageError';
}

/** True when the arguments ask for help (`--help` or `-h` before any `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/** The text `swap-ledger <command> --help` prints. */
export function usageText(command: Command): string {
  return `usage: swap-ledger ${command.usage}\n\n  ${command.summary}`;
}

/** node:util's parse errors, reworded as one-line usage errors naming the option. */
function asUsageError(e: unknown, valueNames: readonly string[]): UsageError {
  const err = e as { code?: string; message?: string };
  const msg = String(err.message ?? e);
  const named = /'(-{1,2}[^' ]+)/.exec(msg)?.[1];
  const bare = named?.replace(/^-+/, '');
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(`unknown option ${named ?? msg}`);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (bare && valueNames.includes(bare) && /argument missing/.test(msg))
        return new UsageError(`--${bare} needs a value`);
      return new UsageError(bare ? `--${bare} takes no value` : msg);
    default:
      return new UsageError(msg.split('\n')[0]!);
  }
}

/**
 * Parses `--name value`, `--name=value` and `--flag` options with node:util's parseArgs; refuses unknown
 * ones so a typo never runs with defaults. `--help`/`-h` is answered by main before a command runs.
 */
export function parseOptions<const V extends string, const F extends string = never>(
  args: string[],
  spec: { values: readonly V[]; flags?: readonly F[] },
): { values: Partial<Record<V, string>>; flags: Partial<Record<F, boolean>>; positionals: string[] } {
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const v of spec.values) options[v] = { type: 'string' };
  for (const f of spec.flags ?? []) options[f] = { type: 'boolean' };
  // A value may start with "-" (base64url signatures, negative amounts): bind it to its option first,
  // since parseArgs' strict mode would call `--signature -abc` ambiguous.
  const bound: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      bound.push(...args.slice(i));
      break;
    }
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name && (spec.values as readonly string[]).includes(name) && i + 1 < args.length) {
      bound.push(`${arg}=${args[++i]!}`);
    } else bound.push(arg);
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: bound, options, strict: true, allowPositionals: true });
  } catch (e) {
    throw asUsageError(e, spec.values);
  }
  const values: Partial<Record<V, string>> = {};
  const flags: Partial<Record<F, boolean>> = {};
  for (const v of spec.values) {
    const value = parsed.values[v];
    if (typeof value === 'string') values[v] = value;
  }
  for (const f of spec.flags ?? []) if (parsed.values[f] === true) flags[f] = true;
  return { values, flags, positionals: parsed.positionals };
}

/** `--finance-schema <name>`, else the default finance schema: a SQL identifier, or a usage error. */
export function financeSchemaOption(value: string | undefined): string {
  const schema = value ?? FINANCE_SCHEMA;
  try {
    return assertIdentifier(schema);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** Starts a worker; a configuration it refuses (an error of one of `refused`) is said on stderr: undefined. */
export async function startOrRefuse<T>(
  io: CliIo,
  refused: readonly (abstract new (...args: never[]) => Error)[],
  start: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await start();
  } catch (e) {
    if (!refused.some((kind) => e instanceof kind)) throw e;
    io.stderr((e as Error).message);
    return undefined;
  }
}

/**
 * Keeps a started worker running until SIGTERM or SIGINT, then stops it: exit code 0. A signal that came
 * while it was starting (src/lifecycle/stop.ts) stops it as soon as it has started.
 */
export async function runUntilSignal(
  worker: { stop(): Promise<void> },
  logger: Logger,
  name: string,
): Promise<number> {
  const signal = await whenStopRequested();
  logger.info({ signal }, `stopping ${name}`);
  await worker.stop();
  return 0;
}
