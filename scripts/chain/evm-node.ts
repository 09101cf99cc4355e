/**
 * The local EVM node (Hardhat's EDR, src/demo/evm-node.ts) as a command: `tsx scripts/chain/evm-node.ts [port]`
 * runs one until Ctrl-C. The chain tests import it from here.
 */
import { fileURLToPath } from 'node:url';
import { startEvmNode } from '../../src/demo/evm-node.ts';

export { DEV_KEYS, startEvmNode, type EvmNode } from '../../src/demo/evm-node.ts';

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const node = await startEvmNode(process.argv[2] ? { port: Number(process.argv[2]) } : {});
  console.log(`local EVM node at ${node.url} (Ctrl-C stops it)`);
  const end = () => void node.stop().then(() => process.exit(0));
  process.once('SIGINT', end);
  process.once('SIGTERM', end);
}
