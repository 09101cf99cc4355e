/**
 * The local EVM node of the demo and the chain tests: Hardhat's node (EDR), installed from the npm registry
 * with the project (devDependency `hardhat`), on loopback, a fresh chain each start. `startEvmNode()` starts
 * it (on a free port unless told) and answers once eth_blockNumber does; `stop()` ends it, and so does the end
 * of this process, however it ends (exit-with-parent.cjs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { settledWithin } from '../lifecycle/stop.ts';
import { freePort } from './port.ts';

const CONFIG = fileURLToPath(new URL('./hardhat.config.cjs', import.meta.url));
const WATCHDOG = fileURLToPath(new URL('./exit-with-parent.cjs', import.meta.url));

/** The node's funded development accounts (Hardhat's well-known test keys: public, never for real money). */
export const DEV_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
] as const;

export interface EvmNode {
  url: string;
  stop(): Promise<void>;
}

/** Where Hardhat's CLI is, or undefined when the devDependency is not installed (a production install). */
export function hardhatCli(): string | undefined {
  try {
    return join(
      dirname(createRequire(import.meta.url).resolve('hardhat/package.json')),
      'internal/cli/cli.js',
    );
  } catch {
    return undefined;
  }
}

export async function rpcAnswers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
      signal: AbortSignal.timeout(1000),
    });
    return res.ok;
  } catch {
    return false;
  }
}

export async function startEvmNode(opts: { port?: number; timeoutMs?: number } = {}): Promise<EvmNode> {
  const cli = hardhatCli();
  if (!cli) throw new Error('the local EVM node needs the devDependency "hardhat" (npm install)');
  const port = opts.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--require',
      WATCHDOG,
      cli,
      'node',
      '--config',
      CONFIG,
      '--hostname',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    {
      cwd: dirname(CONFIG),
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', DO_NOT_TRACK: '1' },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  // The channel only tells the node when this process is gone; it must not keep this one alive.
  child.channel?.unref();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await settledWithin(exited, 5000);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  while (!(await rpcAnswers(url))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the local EVM node did not start on ${url}:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, stop };
}
