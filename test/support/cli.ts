import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/swap-ledger.mjs', import.meta.url));

/** Runs `swap-ledger <args>` as a process, the way an operator would, with only the given environment. */
export function runCli(
  args: string[],
  env: Record<string, string | string[] | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const flat: Record<string, string> = { PATH: process.env.PATH ?? '' };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(',') : v;
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
