import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createWalletClient,
  getContractAddress,
  http,
  publicActions,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hardhat } from 'viem/chains';
import type { Logger } from '../observability/log.ts';
import { startDemoEsplora, type DemoEsplora } from './esplora.ts';
import { DEV_KEYS, rpcAnswers, startEvmNode, type EvmNode } from './evm-node.ts';

/**
 * The demo's chains, so `npm start` shows the chain as a witness: Hardhat's node (EDR) for ETH and two
 * ERC-20 tokens (USDT, BAT), the demo Esplora server for BTC and LTC. Every currency the demo's swaps pay
 * in or out has a source here (plan.ts keeps to them); the file `up` writes is an ordinary chain sources file.
 */

/** The deployer (Hardhat's first development account): its first two transactions on a fresh chain. */
export const DEPLOYER = privateKeyToAccount(DEV_KEYS[0]);

/** Partner currency id -> what pays it on the demo chains; the platform id is the sources file's key. */
export const DEMO_CHAIN_ASSETS = {
  eth: { platform: 'ETH', kind: 'native', decimals: 18 },
  // Contract addresses are those of the deployer's nonce 0 and 1: known before the node starts.
  usdt: { platform: 'USDT', kind: 'erc20', decimals: 6, contract: tokenAddress(0) },
  bat: { platform: 'BAT', kind: 'erc20', decimals: 18, contract: tokenAddress(1) },
  btc: { platform: 'BTC', kind: 'utxo', decimals: 8, network: 'bitcoin' },
  ltc: { platform: 'LTC', kind: 'utxo', decimals: 8, network: 'litecoin' },
} as const;
export type DemoChainCurrency = keyof typeof DEMO_CHAIN_ASSETS;
export const isDemoChainCurrency = (id: string): id is DemoChainCurrency => id in DEMO_CHAIN_ASSETS;

function tokenAddress(nonce: number): Address {
  return getContractAddress({ from: DEPLOYER.address, nonce: BigInt(nonce) }).toLowerCase() as Address;
}

/** The URLs of the demo chains, as the environment variables the sources file names. */
export function demoChainUrls(ports: { evm: number; esplora: number }): Record<string, string> {
  return {
    DEMO_EVM_RPC_URL: `http://127.0.0.1:${ports.evm}`,
    DEMO_BTC_ESPLORA_URL: `http://127.0.0.1:${ports.esplora}/bitcoin`,
    DEMO_LTC_ESPLORA_URL: `http://127.0.0.1:${ports.esplora}/litecoin`,
  };
}

/** Writes the demo's chain sources file into `dir`; answers its path. One confirmation: the node mines per transaction. */
export function writeDemoChainSources(dir: string): string {
  const file = join(dir, 'chain-sources.yaml');
  const line = (id: DemoChainCurrency) => {
    const a = DEMO_CHAIN_ASSETS[id];
    const source = a.kind === 'utxo' ? `${a.network}-demo` : 'ethereum-demo';
    const asset =
      a.kind === 'erc20'
        ? `asset: { contract: "${a.contract}", decimals: ${a.decimals} }`
        : `asset: native, decimals: ${a.decimals}`;
    return `  ${a.platform}: { source: ${source}, confirmations: 1, ${asset}, deadlineMinutes: 30 }`;
  };
  writeFileSync(
    file,
    [
      '# Written by `swap-ledger up` for the demo: its local chains (README "Chain evidence").',
      'sources:',
      '  ethereum-demo: { family: evm, urlEnv: DEMO_EVM_RPC_URL, ratePerSecond: 200, timeoutMs: 5000 }',
      '  bitcoin-demo: { family: utxo, urlEnv: DEMO_BTC_ESPLORA_URL, network: bitcoin, ratePerSecond: 200, timeoutMs: 5000 }',
      '  litecoin-demo: { family: utxo, urlEnv: DEMO_LTC_ESPLORA_URL, network: litecoin, ratePerSecond: 200, timeoutMs: 5000 }',
      'currencies:',
      ...(Object.keys(DEMO_CHAIN_ASSETS) as DemoChainCurrency[]).map(line),
      '',
    ].join('\n'),
  );
  return file;
}

/**
 * The demo's ERC-20 (DemoToken.sol: OpenZeppelin's minter preset with the currency's decimals), compiled once
 * into demo-token.json (scripts/chain/compile-demo-token.ts): its deployer may mint.
 */
export function demoTokenArtifact(): { abi: Abi; bytecode: Hex } {
  return JSON.parse(readFileSync(new URL('./demo-token.json', import.meta.url), 'utf8')) as {
    abi: Abi;
    bytecode: Hex;
  };
}

export const deployerWallet = (url: string) =>
  createWalletClient({ account: DEPLOYER, chain: hardhat, transport: http(url) }).extend(publicActions);

/**
 * Deploys the demo tokens where they are not yet (a node left from an earlier start keeps them), each with
 * its currency's decimals (USDT 6, BAT 18): the watcher reads decimals() at start and refuses a file that
 * says otherwise.
 */
async function deployTokens(url: string): Promise<void> {
  const wallet = deployerWallet(url);
  const tokens = [DEMO_CHAIN_ASSETS.usdt, DEMO_CHAIN_ASSETS.bat];
  for (const [i, token] of tokens.entries()) {
    const code = await wallet.getCode({ address: token.contract });
    if (code && code !== '0x') continue;
    const nonce = await wallet.getTransactionCount({ address: DEPLOYER.address });
    if (nonce !== i)
      throw new Error(
        `the deployer's nonce is ${nonce}, not ${i}: this node is not a fresh demo chain (${token.platform} cannot be deployed at ${token.contract})`,
      );
    const { abi, bytecode } = demoTokenArtifact();
    const hash = await wallet.deployContract({
      abi,
      bytecode,
      args: [token.platform, token.platform, token.decimals],
    });
    await wallet.waitForTransactionReceipt({ hash });
  }
}

export interface DemoChain {
  readonly urls: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts (or finds on its port) the EVM node, deploys the tokens, starts the demo Esplora server. */
export async function startDemoChain(
  ports: { evm: number; esplora: number },
  logger: Logger,
): Promise<DemoChain> {
  const urls = demoChainUrls(ports);
  let node: EvmNode | undefined;
  let esplora: DemoEsplora | undefined;
  try {
    if (await rpcAnswers(urls.DEMO_EVM_RPC_URL!))
      logger.warn({ url: urls.DEMO_EVM_RPC_URL }, 'an EVM node already answers on the port: using it');
    else node = await startEvmNode({ port: ports.evm });
    await deployTokens(urls.DEMO_EVM_RPC_URL!);
    esplora = await startDemoEsplora({ port: ports.esplora, chains: ['bitcoin', 'litecoin'] });
  } catch (e) {
    await esplora?.close();
    await node?.stop();
    throw e;
  }
  logger.info(
    {
      evm: urls.DEMO_EVM_RPC_URL,
      esplora: esplora.url,
      usdt: DEMO_CHAIN_ASSETS.usdt.contract,
      bat: DEMO_CHAIN_ASSETS.bat.contract,
    },
    'demo chains ready: EVM node (Hardhat EDR) with USDT and BAT, Esplora for bitcoin and litecoin',
  );
  return {
    urls,
    async stop() {
      await esplora?.close();
      await node?.stop();
    },
  };
}
