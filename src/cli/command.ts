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
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Parses `--name value` and `--flag` options; refuses unknown ones so a typo never runs with defaults. */
export function parseOptions<const V extends string, const F extends string = never>(
  args: string[],
  spec: { values: readonly V[]; flags?: readonly F[] },
): { values: Partial<Record<V, string>>; flags: Partial<Record<F, boolean>>; positionals: string[] } {
  const values: Partial<Record<V, string>> = {};
  const flags: Partial<Record<F, boolean>> = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const [rawName, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if ((spec.flags as readonly string[] | undefined)?.includes(rawName)) {
      flags[rawName as F] = true;
    } else if ((spec.values as readonly string[]).includes(rawName)) {
      const value = inline ?? args[++i];
      if (value === undefined) throw new UsageError(`--${rawName} needs a value`);
      values[rawName as V] = value;
    } else {
      throw new UsageError(`unknown option --${rawName}`);
    }
  }
  return { values, flags, positionals };
}
