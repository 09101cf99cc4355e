import type { ChainCurrencyDefinition, ChainSources } from './config.ts';
import { sourceUrl } from './config.ts';
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

export type { ChainCurrencyDefinition };
