import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import {
  ChainSourcesFileError,
  loadChainSources,
  parseChainSources,
  sourceLabel,
  sourceUrl,
} from '../../src/chain/config.ts';

describe('chain sources file', () => {
  const doc = {
    sources: {
      ethereum: { family: 'evm', urlEnv: 'ETH_RPC_URL', ratePerSecond: 10 },
      bitcoin: { family: 'utxo', urlEnv: 'BTC_ESPLORA_URL', network: 'bitcoin' },
    },
    currencies: {
      ETH: { source: 'ethereum', confirmations: 12, asset: 'native', decimals: 18, deadlineMinutes: 120 },
      USDT: {
        source: 'ethereum',
        confirmations: 12,
        asset: { contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 },
      },
      BTC: { source: 'bitcoin', confirmations: 2, decimals: 8 },
      XRP: { source: 'ethereum', confirmations: 1, decimals: 6, memo: true },
    },
  };

  it('maps platform currencies to a source, depth, asset and deadline (defaults filled)', () => {
    const s = parseChainSources(doc);
    expect(s.currencies.get('USDT')).toMatchObject({
      asset: '0xdac17f958d2ee523a2206206994597c13d831ec7',
      decimals: 6,
      deadlineMinutes: 1440,
    });
    expect(s.currencies.get('BTC')).toMatchObject({
      asset: 'native',
      confirmations: 2,
      source: { family: 'utxo', network: 'bitcoin' },
    });
    expect(s.currencies.get('XRP')!.memo).toBe(true);
    expect(sourceLabel(s.sources.get('ethereum')!)).toBe('evm-rpc ethereum (ETH_RPC_URL)');
  });

  it('the final bound, the answer size cap and the chain id: defaults, and each refused out of range', () => {
    const s = parseChainSources(doc);
    expect(s.currencies.get('ETH')).toMatchObject({ lookAfterDeadlineMinutes: 1440 });
    expect(s.sources.get('ethereum')).toMatchObject({ maxResponseBytes: 8 * 1024 * 1024, chainId: null });
    const set = parseChainSources({
      sources: { ethereum: { family: 'evm', urlEnv: 'E', maxResponseBytes: 4096, chainId: 1 } },
      currencies: {
        ETH: { source: 'ethereum', confirmations: 1, decimals: 18, lookAfterDeadlineMinutes: 0 },
      },
    });
    expect(set.sources.get('ethereum')).toMatchObject({ maxResponseBytes: 4096, chainId: 1 });
    expect(set.currencies.get('ETH')!.lookAfterDeadlineMinutes).toBe(0);
    let err: unknown;
    try {
      parseChainSources({
        sources: {
          ethereum: { family: 'evm', urlEnv: 'E', maxResponseBytes: 10, chainId: 0 },
          bitcoin: { family: 'utxo', urlEnv: 'B', chainId: 1 },
        },
        currencies: {
          ETH: { source: 'ethereum', confirmations: 1, decimals: 18, lookAfterDeadlineMinutes: -1 },
        },
      });
    } catch (e) {
      err = e;
    }
    const problems = (err as ChainSourcesFileError).problems.join('\n');
    expect(problems).toMatch(/sources\.ethereum\.maxResponseBytes: an integer from 1024/);
    expect(problems).toMatch(/sources\.ethereum\.chainId: a positive integer/);
    expect(problems).toMatch(/sources\.bitcoin\.chainId: only for evm sources/);
    expect(problems).toMatch(/currencies\.ETH\.lookAfterDeadlineMinutes: an integer from 0/);
  });

  it('lists every problem at once, never a URL', () => {
    const bad = {
      sources: { x: { family: 'solana', url: 'https://key@node' } },
      currencies: { ETH: { source: 'nope', confirmations: 0, asset: { contract: '0x12' } } },
    };
    let err: unknown;
    try {
      parseChainSources(bad);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ChainSourcesFileError);
    const problems = (err as ChainSourcesFileError).problems.join('\n');
    expect(problems).toMatch(/sources\.x\.family: must be evm or utxo/);
    expect(problems).toMatch(/sources\.x\.url: unknown key/);
    expect(problems).toMatch(/urlEnv: must name the environment variable/);
    expect(problems).toMatch(/currencies\.ETH\.source/);
    expect(problems).toMatch(/currencies\.ETH\.confirmations/);
    expect(problems).toMatch(/asset\.contract/);
    expect(problems).not.toContain('key@node');
  });

  it('reads the URL from the environment by reference, naming only the variable', () => {
    const s = parseChainSources(doc).sources.get('ethereum')!;
    expect(sourceUrl(s, { ETH_RPC_URL: 'https://node.example/v1/secret/' })).toBe(
      'https://node.example/v1/secret',
    );
    expect(() => sourceUrl(s, {})).toThrow(/ETH_RPC_URL is not set/);
    expect(() => sourceUrl(s, { ETH_RPC_URL: 'ftp://secret' })).toThrow(/ETH_RPC_URL must be http/);
    try {
      sourceUrl(s, { ETH_RPC_URL: 'ftp://secret' });
    } catch (e) {
      expect((e as Error).message).not.toContain('secret');
    }
  });

  it('the shipped example (config/chains.example.yaml) is a valid file', () => {
    const s = loadChainSources(fileURLToPath(new URL('../../config/chains.example.yaml', import.meta.url)));
    expect([...s.currencies.keys()]).toEqual(['ETH', 'USDT', 'BTC', 'LTC']);
    expect(loadChainSources('').currencies.size).toBe(0);
  });
});
