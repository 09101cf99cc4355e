import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import {
  createTestClient,
  createWalletClient,
  erc20Abi,
  http,
  publicActions,
  type Abi,
  type Address,
  type Hash,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hardhat } from 'viem/chains';
import {
  ChainSourcesFileError,
  parseChainSources,
  type ChainCurrencyDefinition,
} from '../../src/chain/config.ts';
import { EvmChainClient } from '../../src/chain/evm.ts';
import { verifyChainSources } from '../../src/chain/index.ts';
import type { TxLookup } from '../../src/chain/lookup.ts';
import { chainChecks } from '../../src/reconciler/chain-checks.ts';
import type { ChainObservation } from '../../src/reconciler/types.ts';
import { DEV_KEYS, startEvmNode, type EvmNode } from '../../scripts/chain/evm-node.ts';
import { BASE_FINAL, input } from '../reconciler/support.ts';

/**
 * The EVM chain rules on a real local node (Hardhat's EDR, started by scripts/chain/evm-node.ts): real
 * transactions, an ERC-20 deployed from OpenZeppelin's shipped bytecode (no compiler), each rule looked up
 * over JSON-RPC with viem and judged by the pure chain.payout check.
 */
const require = createRequire(import.meta.url);
const TOKEN = JSON.parse(
  readFileSync(
    require.resolve('@openzeppelin/contracts/build/contracts/ERC20PresetMinterPauser.json'),
    'utf8',
  ),
) as { abi: Abi; bytecode: Hex };
const mintAbi = [
  {
    type: 'function',
    name: 'mint',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'amount', type: 'uint256' },
    ],
    outputs: [],
  },
] as const;

const USER = '0x00000000000000000000000000000000000000a1' as Address;
const OTHER = '0x00000000000000000000000000000000000000b2' as Address;

describe('EVM chain source on a real local node', () => {
  let node: EvmNode;
  let wallet: ReturnType<typeof walletFor>;
  let test: ReturnType<typeof createTestClient>;
  let usd: Address;
  let otherToken: Address;
  let eth: ChainCurrencyDefinition;
  let usdc: ChainCurrencyDefinition;
  let client: EvmChainClient;

  const walletFor = (url: string) =>
    createWalletClient({
      account: privateKeyToAccount(DEV_KEYS[0]),
      chain: hardhat,
      transport: http(url),
    }).extend(publicActions);

  async function deployToken(name: string): Promise<Address> {
    const hash = await wallet.deployContract({
      abi: TOKEN.abi,
      bytecode: TOKEN.bytecode,
      args: [name, name],
    });
    const receipt = await wallet.waitForTransactionReceipt({ hash });
    const address = receipt.contractAddress!;
    await wallet.waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address,
        abi: mintAbi,
        functionName: 'mint',
        args: [wallet.account.address, 10n ** 15n],
      }),
    });
    return address;
  }

  const mine = (blocks: number) => test.mine({ blocks });
  const payToken = async (token: Address, to: Address, amount: bigint, gas?: bigint): Promise<Hash> => {
    const hash = await wallet.writeContract({
      address: token,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [to, amount],
      ...(gas ? { gas } : {}),
    });
    await wallet.waitForTransactionReceipt({ hash });
    return hash;
  };
  const payNative = async (to: Address, value: bigint): Promise<Hash> => {
    const hash = await wallet.sendTransaction({ to, value });
    await wallet.waitForTransactionReceipt({ hash });
    return hash;
  };

  /** The lookup as an observation, judged as a FINISHED swap's payout of `reported` to USER. */
  function judge(l: TxLookup, txid: string, currency: ChainCurrencyDefinition, reported: string) {
    const o: ChainObservation = {
      ...l,
      role: 'payout',
      txid,
      currency: currency.currency,
      chain: currency.source.name,
      family: 'evm',
      requiredConfirmations: currency.confirmations,
      asset: currency.asset,
      decimals: currency.decimals,
      source: 'test',
      deadlinePassed: false,
      observedAt: '2026-11-27T00:00:00.000Z',
      eventId: '0192f0a0-0000-7000-8000-000000000001',
    };
    const i = {
      ...input({
        request: { payoutAddress: USER, payloadCurrencyTo: currency.currency },
        decoded: { payout_address: USER, currency_to: currency.currency },
        final: { payoutTransactionId: txid, amount: reported },
      }),
      chain: { sourced: [currency.currency], observations: [o] },
    };
    return chainChecks(i, 'FINISHED').find((c) => c.name === 'chain.payout')!;
  }

  beforeAll(async () => {
    node = await startEvmNode();
    wallet = walletFor(node.url);
    test = createTestClient({ chain: hardhat, mode: 'hardhat', transport: http(node.url) });
    usd = await deployToken('TUSD');
    otherToken = await deployToken('OTHER');
    const sources = parseChainSources({
      sources: { local: { family: 'evm', urlEnv: 'LOCAL_EVM_URL', ratePerSecond: 1000, timeoutMs: 5000 } },
      currencies: {
        ETH: { source: 'local', confirmations: 3, asset: 'native', decimals: 18 },
        TUSD: { source: 'local', confirmations: 3, asset: { contract: usd, decimals: 6 } },
      },
    });
    eth = sources.currencies.get('ETH')!;
    usdc = sources.currencies.get('TUSD')!;
    client = new EvmChainClient(eth.source, node.url);
  }, 120_000);

  afterAll(async () => {
    await node?.stop();
  });

  it('native: the right payment, once at depth, is MATCHED; before it, awaiting the chain', async () => {
    const hash = await payNative(USER, 10n ** 18n);
    const shallow = await client.lookup(hash, eth);
    expect(shallow).toMatchObject({ status: 'pending', confirmations: 1, proven: true });
    expect(judge(shallow, hash, eth, '1').verdict).toBe('UNVERIFIABLE');
    await mine(2);
    const deep = await client.lookup(hash, eth);
    expect(deep).toMatchObject({
      status: 'found',
      confirmations: 3,
      transfers: [{ asset: 'native', recipient: USER, amount: (10n ** 18n).toString() }],
    });
    expect(judge(deep, hash, eth, '1').verdict).toBe('MATCHED');
  });

  it('native: a short payment and a payment to another address are MISMATCHes', async () => {
    const short = await payNative(USER, 5n * 10n ** 17n);
    const elsewhere = await payNative(OTHER, 10n ** 18n);
    await mine(3);
    expect(judge(await client.lookup(short, eth), short, eth, '1')).toMatchObject({
      verdict: 'MISMATCH',
      delta: `-${5n * 10n ** 17n}`,
    });
    const wrong = judge(await client.lookup(elsewhere, eth), elsewhere, eth, '1');
    expect(wrong.verdict).toBe('MISMATCH');
    expect(wrong.detail).toContain('does not pay the signed payout address');
  });

  it('a transaction still in the mempool is pending with no confirmations, then found once mined deep', async () => {
    await test.setAutomine(false);
    let hash: Hash;
    try {
      hash = await wallet.sendTransaction({ to: USER, value: 10n ** 18n });
      expect(await client.lookup(hash, eth)).toMatchObject({
        status: 'pending',
        confirmations: 0,
        block: null,
      });
      await mine(3);
    } finally {
      await test.setAutomine(true);
    }
    expect(judge(await client.lookup(hash, eth), hash, eth, '1').verdict).toBe('MATCHED');
  });

  it('ERC-20: the configured token to the address, at depth: MATCHED; unconfirmed before', async () => {
    const hash = await payToken(usd, USER, 2_500_000n);
    const shallow = await client.lookup(hash, usdc);
    expect(judge(shallow, hash, usdc, '2.5').verdict).toBe('UNVERIFIABLE');
    await mine(2);
    const deep = await client.lookup(hash, usdc);
    expect(deep.transfers).toEqual([
      { asset: usd.toLowerCase(), recipient: USER, amount: '2500000', index: 0 },
    ]);
    expect(judge(deep, hash, usdc, '2.5').verdict).toBe('MATCHED');
  });

  it('ERC-20: short, to another address, or in another token: MISMATCH', async () => {
    const short = await payToken(usd, USER, 2_000_000n);
    const elsewhere = await payToken(usd, OTHER, 2_500_000n);
    const wrongToken = await payToken(otherToken, USER, 2_500_000n);
    await mine(3);
    expect(judge(await client.lookup(short, usdc), short, usdc, '2.5')).toMatchObject({
      verdict: 'MISMATCH',
      delta: '-500000',
    });
    expect(judge(await client.lookup(elsewhere, usdc), elsewhere, usdc, '2.5').detail).toMatch(
      /does not pay the signed payout address/,
    );
    const token = judge(await client.lookup(wrongToken, usdc), wrongToken, usdc, '2.5');
    expect(token.verdict).toBe('MISMATCH');
    expect(token.detail).toMatch(/another asset/);
  });

  it('ERC-20: a reverted transfer (more than the balance) paid nothing: MISMATCH', async () => {
    const hash = await payToken(usd, USER, 10n ** 30n, 200_000n);
    await mine(3);
    const l = await client.lookup(hash, usdc);
    expect(l).toMatchObject({ status: 'reverted', transfers: [], proven: true });
    expect(judge(l, hash, usdc, '2.5').verdict).toBe('MISMATCH');
  });

  it('an unknown hash is not found (awaiting the chain until the deadline)', async () => {
    const unknown = `0x${'42'.repeat(32)}`;
    const l = await client.lookup(unknown, eth);
    expect(l).toMatchObject({ status: 'not_found', proven: false });
    expect(judge(l, unknown, eth, '1').verdict).toBe('UNVERIFIABLE');
  });

  it('a contract paying out: a token it pays is seen (its Transfer log), native value it pays by an internal call is said unseen', async () => {
    // OpenZeppelin's PaymentSplitter: release() pays the payee from the contract, an internal call.
    const splitter = JSON.parse(
      readFileSync(require.resolve('@openzeppelin/contracts/build/contracts/PaymentSplitter.json'), 'utf8'),
    ) as { abi: Abi; bytecode: Hex };
    const deployed = await wallet.waitForTransactionReceipt({
      hash: await wallet.deployContract({
        abi: splitter.abi,
        bytecode: splitter.bytecode,
        args: [[USER], [1n]],
        value: 10n ** 18n,
      }),
    });
    const contract = deployed.contractAddress!;
    await payToken(usd, contract, 2_500_000n);
    const release = async (args: readonly unknown[]) => {
      const hash = await wallet.writeContract({
        address: contract,
        abi: splitter.abi,
        functionName: 'release',
        args,
      });
      await wallet.waitForTransactionReceipt({ hash });
      return hash;
    };
    const native = await release([USER]);
    const token = await release([usd, USER]);
    await mine(3);
    const nativeSeen = await client.lookup(native, eth);
    // The flag is a field; the detail is prose and no longer carries a marker for the checks to parse.
    expect(nativeSeen).toMatchObject({ status: 'found', transfers: [], contractCall: true });
    expect(nativeSeen.detail ?? '').not.toContain('a contract call');
    const t = judge(await client.lookup(token, usdc), token, usdc, '2.5');
    expect(t.verdict).toBe('MATCHED');
  });

  it("records the block time, the fee (gasUsed x effectiveGasPrice), each token transfer's log index and a contract call", async () => {
    const native = await payNative(USER, 7n);
    const token = await payToken(usd, USER, 3_000_000n);
    await mine(3);
    for (const [hash, currency] of [
      [native, eth],
      [token, usdc],
    ] as const) {
      const receipt = await wallet.getTransactionReceipt({ hash });
      const block = await wallet.getBlock({ blockNumber: receipt.blockNumber });
      const l = await client.lookup(hash, currency);
      expect(l).toMatchObject({
        status: 'found',
        blockTime: new Date(Number(block.timestamp) * 1000).toISOString(),
        fee: (receipt.gasUsed * receipt.effectiveGasPrice).toString(),
        contractCall: hash === token,
      });
      if (hash === native)
        expect(l.transfers).toEqual([{ asset: 'native', recipient: USER, amount: '7', index: null }]);
      else
        expect(l.transfers).toEqual([
          { asset: usd.toLowerCase(), recipient: USER, amount: '3000000', index: receipt.logs[0]!.logIndex },
        ]);
    }
    expect(BigInt((await client.lookup(native, eth)).fee!)).toBeGreaterThan(0n);
  });

  it("a node answering with another transaction's receipt, or a transaction of another chain id, is refused", async () => {
    const hash = await payNative(USER, 9n);
    await mine(3);
    const other = await payNative(OTHER, 9n);
    let lie: 'receipt' | 'chainId' | 'none' = 'none';
    // A lying front of the real node: it rewrites one field of the node's own answer.
    const liar: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', async () => {
        const upstream = await fetch(node.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        const answer = (await upstream.json()) as { result?: Record<string, unknown> } | unknown[];
        const call = JSON.parse(body) as { method: string } | { method: string }[];
        const one = (a: { result?: Record<string, unknown> }, c: { method: string }) => {
          if (lie === 'receipt' && c.method === 'eth_getTransactionReceipt' && a.result)
            a.result.transactionHash = other;
          if (lie === 'chainId' && c.method === 'eth_getTransactionByHash' && a.result)
            a.result.chainId = '0x1';
        };
        if (Array.isArray(answer))
          answer.forEach((a, i) => one(a as never, (call as { method: string }[])[i]!));
        else one(answer, call as { method: string });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((r) => liar.listen(0, '127.0.0.1', r));
    try {
      const front = new EvmChainClient(
        eth.source,
        `http://127.0.0.1:${(liar.address() as { port: number }).port}`,
      );
      expect(await front.lookup(hash, eth)).toMatchObject({ status: 'found', proven: true });
      lie = 'receipt';
      const r = await front.lookup(hash, eth);
      expect(r).toMatchObject({ status: 'refused', transfers: [], proven: false, block: null });
      expect(r.detail).toContain(`receipt names another transaction (${other})`);
      lie = 'chainId';
      const c = await front.lookup(hash, eth);
      expect(c).toMatchObject({ status: 'refused', transfers: [] });
      expect(c.detail).toMatch(/a transaction of chain id 1, not of chain 31337/);
    } finally {
      await new Promise((r) => liar.close(r));
    }
  });

  it('at start, a token whose decimals() differ from the file, or a node of another chain id, is refused naming both figures', async () => {
    const doc = (decimals: number, chainId?: number) =>
      parseChainSources({
        sources: { local: { family: 'evm', urlEnv: 'LOCAL_EVM_URL', ...(chainId ? { chainId } : {}) } },
        currencies: { TUSD: { source: 'local', confirmations: 3, asset: { contract: usd, decimals } } },
      });
    const clientsOf = (s: ReturnType<typeof doc>) =>
      new Map([['local', new EvmChainClient(s.sources.get('local')!, node.url)]]);
    // OpenZeppelin's preset token says 18.
    const wrong = doc(6);
    const refusal = await verifyChainSources(wrong, clientsOf(wrong)).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ChainSourcesFileError);
    expect((refusal as Error).message).toContain(
      `currencies.TUSD.asset.decimals: the file says 6, the contract ${usd.toLowerCase()} says decimals() = 18`,
    );
    const right = doc(18, 31337);
    await expect(verifyChainSources(right, clientsOf(right))).resolves.toBeUndefined();
    const otherChain = doc(18, 1);
    await expect(verifyChainSources(otherChain, clientsOf(otherChain))).rejects.toThrow(
      /sources\.local\.chainId: the file says 1, the node at LOCAL_EVM_URL serves chain 31337/,
    );
  });

  it('a redirect is refused, not followed; an answer over maxResponseBytes is refused', async () => {
    const hash = await payNative(USER, 11n);
    const mover: Server = createServer((_req, res) => {
      res.writeHead(307, { location: node.url });
      res.end();
    });
    await new Promise<void>((r) => mover.listen(0, '127.0.0.1', r));
    try {
      const moved = new EvmChainClient(
        eth.source,
        `http://127.0.0.1:${(mover.address() as { port: number }).port}`,
      );
      await expect(moved.lookup(hash, eth)).rejects.toThrow(/answered a redirect \(307\): refused/);
    } finally {
      await new Promise((r) => mover.close(r));
    }
    // A receipt of a few hundred bytes is over a 1 KiB cap with its block header.
    const small = new EvmChainClient({ ...eth.source, maxResponseBytes: 1024 }, node.url);
    await expect(small.lookup(hash, eth)).rejects.toThrow(/over 1024 bytes: refused/);
  });

  it('a node that does not answer is a source error, never an observation', async () => {
    const dead = new EvmChainClient({ ...eth.source, timeoutMs: 500 }, 'http://127.0.0.1:9');
    await expect(dead.lookup(`0x${'42'.repeat(32)}`, eth)).rejects.toThrow(/failed/);
  });
});
