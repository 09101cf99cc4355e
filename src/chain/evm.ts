import { RequestPacer } from '../work/rate-limit.ts';
import {
  createPublicClient,
  erc20Abi,
  http,
  parseEventLogs,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Hash,
  type PublicClient,
} from 'viem';
import type { ChainTransfer } from '../events/types.ts';
import type { ChainCurrencyDefinition, ChainSourceDefinition } from './config.ts';
import { boundedFetch, sourceErrorIn } from './http.ts';
import {
  ChainSourceError,
  depthStatus,
  keepTransfers,
  notFound,
  refused,
  type ChainClient,
  type TxLookup,
} from './lookup.ts';

/**
 * EVM chains over the standard JSON-RPC (eth_getTransactionByHash, eth_getTransactionReceipt,
 * eth_blockNumber), with viem: no hand-made ABI or RLP. A mined transaction is trusted only once the node's
 * receipt names its hash; a failed one (status 0) pays nothing, whatever its value or logs said. Native value
 * is the transaction's value to its `to`; tokens are the ERC-20 Transfer logs (every contract's: a check
 * tells the configured one from another, so a payment in the wrong token is seen as such), each with its log
 * index. A transaction of another chain id, or a receipt naming another transaction, is `refused`: the source
 * is not answering for this transaction. The fee is gasUsed x effectiveGasPrice of the receipt; the block's
 * time its header's timestamp.
 */

const TXID = /^0x[0-9a-fA-F]{64}$/;

export class EvmChainClient implements ChainClient {
  private readonly client: PublicClient;
  private readonly limiter: RequestPacer;

  constructor(
    readonly source: ChainSourceDefinition,
    url: string,
  ) {
    this.client = createPublicClient({
      transport: http(url, {
        timeout: source.timeoutMs,
        retryCount: 0,
        fetchFn: boundedFetch(source.name, source.maxResponseBytes),
      }),
    });
    this.limiter = new RequestPacer(source.ratePerSecond);
  }

  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    await this.limiter.take();
    try {
      return await run();
    } catch (e) {
      if (e instanceof TransactionNotFoundError || e instanceof TransactionReceiptNotFoundError) throw e;
      const ours = sourceErrorIn(e);
      if (ours) throw new ChainSourceError(`${what} failed: ${ours.message}`);
      // viem's message names the URL: keep its first line's kind only (a URL may hold an API key).
      const name = (e as Error).name ?? 'Error';
      throw new ChainSourceError(`${this.source.name}: ${what} failed (${name})`);
    }
  }

  async lookup(txid: string, currency: ChainCurrencyDefinition): Promise<TxLookup> {
    if (!TXID.test(txid)) return notFound('not an EVM transaction hash (0x and 64 hex digits)');
    const hash = txid.toLowerCase() as Hash;
    let tx;
    try {
      tx = await this.call('eth_getTransactionByHash', () => this.client.getTransaction({ hash }));
    } catch (e) {
      if (e instanceof TransactionNotFoundError) return notFound(null);
      throw e;
    }
    if (tx.hash.toLowerCase() !== hash)
      return refused(`${this.source.name} answered another transaction (${tx.hash}) for ${txid}`);
    const chainId = await this.chainId();
    // A legacy transaction signed before EIP-155 names no chain; any other names the one it is valid on.
    if (tx.chainId !== undefined && tx.chainId !== chainId)
      return refused(
        `${this.source.name} answered a transaction of chain id ${tx.chainId}, not of chain ${chainId}`,
      );
    const contractCall = tx.input !== undefined && tx.input !== '0x';
    const native: ChainTransfer[] =
      tx.to && tx.value > 0n
        ? [{ asset: 'native', recipient: tx.to.toLowerCase(), amount: tx.value.toString(), index: null }]
        : [];
    if (tx.blockNumber === null || tx.blockHash === null)
      return {
        status: 'pending',
        confirmations: 0,
        block: null,
        blockHash: null,
        transfers: native,
        proven: false,
        detail: 'in the mempool, not mined',
        blockTime: null,
        fee: null,
        contractCall,
      };
    let receipt;
    try {
      receipt = await this.call('eth_getTransactionReceipt', () =>
        this.client.getTransactionReceipt({ hash }),
      );
    } catch (e) {
      if (e instanceof TransactionReceiptNotFoundError)
        throw new ChainSourceError(
          `${this.source.name}: a mined transaction without a receipt yet (${txid})`,
        );
      throw e;
    }
    if (receipt.transactionHash.toLowerCase() !== hash)
      return refused(
        `${this.source.name}'s receipt names another transaction (${receipt.transactionHash}) for ${txid}`,
      );
    const tip = await this.call('eth_blockNumber', () => this.client.getBlockNumber({ cacheTime: 0 }));
    const block = receipt.blockNumber;
    const header = await this.call('eth_getBlockByHash', () =>
      this.client.getBlock({ blockHash: receipt.blockHash }),
    );
    if (header.number !== block)
      throw new ChainSourceError(
        `${this.source.name}: block ${receipt.blockHash} is at ${header.number}, the receipt says ${block} (a reorganisation under way?)`,
      );
    const confirmations = tip >= block ? Number(tip - block + 1n) : 0;
    const base = {
      confirmations,
      block: Number(block),
      blockHash: receipt.blockHash.toLowerCase(),
      proven: true,
      blockTime: new Date(Number(header.timestamp) * 1000).toISOString(),
      fee: (receipt.gasUsed * receipt.effectiveGasPrice).toString(),
      contractCall,
    };
    if (receipt.status !== 'success')
      return {
        ...base,
        status: 'reverted',
        transfers: [],
        detail: 'the transaction failed (status 0): it paid nothing',
      };
    const tokens: ChainTransfer[] = parseEventLogs({
      abi: erc20Abi,
      eventName: 'Transfer',
      logs: receipt.logs,
      strict: true,
    }).map((log) => ({
      asset: log.address.toLowerCase(),
      recipient: log.args.to.toLowerCase(),
      amount: log.args.value.toString(),
      index: log.logIndex,
    }));
    const { transfers, note } = keepTransfers([...native, ...tokens], (t) => t.asset === currency.asset);
    return { ...base, status: depthStatus(confirmations, currency), transfers, detail: note };
  }

  /** The chain a transaction must be of: the configured one, else the node's own. */
  private async chainId(): Promise<number> {
    return this.source.chainId ?? (await this.nodeChainId());
  }

  /** The node's chain id, asked once (a node does not change chains under a running watcher). */
  private chainIdAsked: Promise<number> | undefined;
  nodeChainId(): Promise<number> {
    this.chainIdAsked ??= this.call('eth_chainId', () => this.client.getChainId()).catch((e: unknown) => {
      this.chainIdAsked = undefined;
      throw e;
    });
    return this.chainIdAsked;
  }

  /** The token's decimals() as its contract answers them (read at start against the configuration). */
  async tokenDecimals(contract: string): Promise<number> {
    return this.call('decimals()', () =>
      this.client.readContract({
        address: contract as `0x${string}`,
        abi: erc20Abi,
        functionName: 'decimals',
      }),
    );
  }
}
