import type { ChainCurrencyDefinition, ChainSources } from './config.ts';
import { ChainSourcesFileError, sourceUrl } from './config.ts';
import { EvmChainClient } from './evm.ts';
import type { ChainClient } from './lookup.ts';
import { EsploraChainClient } from './utxo.ts';

export * from './config.ts';
export * from './lookup.ts';
export { EvmChainClient } from './evm.ts';
export { EsploraChainClient, txidOfRaw, outputAddress, UTXO_NETWORK } from './utxo.ts';

/** One client per configured source (each with its own rate limit), its URL read from the environment. */
export function chainClients(
  sources: ChainSources,
  env: NodeJS.ProcessEnv = process.env,
): Map<string, ChainClient> {
  const clients = new Map<string, ChainClient>();
  for (const s of sources.sources.values()) {
    const url = sourceUrl(s, env);
    clients.set(s.name, s.family === 'evm' ? new EvmChainClient(s, url) : new EsploraChainClient(s, url));
  }
  return clients;
}

/**
 * Holds the configuration to what the chains say, before any lookup: each token's decimals() (amounts are
 * counted in the configured decimals: a wrong figure would misread every amount by powers of ten) and each
 * EVM source's chain id where configured. A disagreement is a configuration error naming both figures
 * (ChainSourcesFileError: `chain watch` exits 2); a source that cannot be read throws its ChainSourceError
 * (the watcher does not start, and its supervisor starts it again later).
 */
export async function verifyChainSources(
  sources: ChainSources,
  clients: ReadonlyMap<string, ChainClient>,
): Promise<void> {
  const problems: string[] = [];
  for (const s of sources.sources.values()) {
    const client = clients.get(s.name);
    if (!(client instanceof EvmChainClient) || s.chainId === null) continue;
    const served = await client.nodeChainId();
    if (served !== s.chainId)
      problems.push(
        `sources.${s.name}.chainId: the file says ${s.chainId}, the node at ${s.urlEnv} serves chain ${served}`,
      );
  }
  for (const c of sources.currencies.values()) {
    const client = clients.get(c.source.name);
    if (c.asset === 'native' || !(client instanceof EvmChainClient)) continue;
    const onChain = await client.tokenDecimals(c.asset);
    if (onChain !== c.decimals)
      problems.push(
        `currencies.${c.currency}.asset.decimals: the file says ${c.decimals}, the contract ${c.asset} says decimals() = ${onChain} on ${c.source.name}`,
      );
  }
  if (problems.length > 0) throw new ChainSourcesFileError(problems);
}

export type { ChainCurrencyDefinition };
