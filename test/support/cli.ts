import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/swap-ledger.mjs', import.meta.url));

type CliEnv = Record<string, string | string[] | undefined>;
type CliResult = { code: number | null; stdout: string; stderr: string };

function flatEnv(env: CliEnv): Record<string, string> {
  const flat: Record<string, string> = { PATH: process.env.PATH ?? '' };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(',') : v;
  return flat;
}

/** Runs `swap-ledger <args>` as a process, the way an operator would, with only the given environment. */
export function runCli(args: string[], env: CliEnv): Promise<CliResult> {
  const flat = flatEnv(env);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: flat, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The same command through the CLI's own `main` in this process: its exit code and the lines it prints
 * (not its pino log lines, which go to fd 1). A process start loads every source through tsx (seconds on a
 * loaded machine), so a file keeps one `runCli` per command as its smoke test and checks the rest here.
 * The environment is the given one (and the runner's) while the command runs; a file's tests run one at a time.
 */
export async function runCliInProcess(args: string[], env: CliEnv): Promise<CliResult> {
  const { main } = await import('../../src/cli/main.ts');
  const saved = process.env;
  const out: string[] = [];
  const err: string[] = [];
  // The runner's own variables stay (vitest reads them while the command runs); no configuration leaks in.
  const runner = Object.entries(saved).filter(([k]) => /^(VITEST|NODE_|TZ$|FORCE_COLOR$|NO_COLOR$)/.test(k));
  process.env = { ...Object.fromEntries(runner), ...flatEnv(env) };
  try {
    const code = await main(args, {
      stdout: (line) => out.push(line + '\n'),
      stderr: (line) => err.push(line + '\n'),
    });
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    process.env = saved;
  }
}
