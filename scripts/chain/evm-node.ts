/**
 * The local EVM node of the chain tests and the demo: Hardhat's node (EDR), installed from the npm registry
 * with the project (devDependency `hardhat`), on loopback, a fresh chain each start. `startEvmNode()` starts
 * it on a free port and answers once eth_blockNumber does; `stop()` ends it (and the OS does when this
 * process ends: it is a child). As a command (`tsx scripts/chain/evm-node.ts [port]`) it runs until Ctrl-C.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const CONFIG = fileURLToPath(new URL('./hardhat.config.cjs', import.meta.url));
const HARDHAT_CLI = join(
  dirname(createRequire(import.meta.url).resolve('hardhat/package.json')),
  'internal/cli/cli.js',
);

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

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function answers(url: string): Promise<boolean> {
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
  const port = opts.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    process.execPath,
    [HARDHAT_CLI, 'node', '--config', CONFIG, '--hostname', '127.0.0.1', '--port', String(port)],
    {
      cwd: dirname(CONFIG),
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', DO_NOT_TRACK: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  while (!(await answers(url))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the local EVM node did not start on ${url}:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, stop };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const node = await startEvmNode(process.argv[2] ? { port: Number(process.argv[2]) } : {});
  console.log(`local EVM node at ${node.url} (Ctrl-C stops it)`);
  const end = () => void node.stop().then(() => process.exit(0));
  process.once('SIGINT', end);
  process.once('SIGTERM', end);
}
