/**
 * Compiles the demo's ERC-20 (src/demo/DemoToken.sol) into src/demo/demo-token.json (abi and bytecode) with
 * solc-js from node_modules (installed with Hardhat): `tsx scripts/chain/compile-demo-token.ts`. The artifact
 * is committed, so the demo and the tests deploy without a compiler.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const solc = require('solc') as { compile(input: string, opts: object): string };
const demo = fileURLToPath(new URL('../../src/demo/', import.meta.url));
const modules = dirname(dirname(require.resolve('@openzeppelin/contracts/package.json')));

const input = {
  language: 'Solidity',
  sources: { 'DemoToken.sol': { content: readFileSync(join(demo, 'DemoToken.sol'), 'utf8') } },
  settings: {
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};
const output = JSON.parse(
  solc.compile(JSON.stringify(input), {
    import: (path: string) => {
      try {
        return { contents: readFileSync(join(modules, path), 'utf8') };
      } catch (e) {
        return { error: (e as Error).message };
      }
    },
  }),
) as {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: unknown; evm: { bytecode: { object: string } } }>>;
};
const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
if (errors.length > 0) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}
const token = output.contracts['DemoToken.sol']!.DemoToken!;
writeFileSync(
  join(demo, 'demo-token.json'),
  `${JSON.stringify({ abi: token.abi, bytecode: `0x${token.evm.bytecode.object}` })}\n`,
);
console.log('src/demo/demo-token.json written');
