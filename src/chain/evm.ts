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
import {
  CONTRACT_CALL_NOTE,
  ChainSourceError,
  ChainSourceRefusedError,
  depthStatus,
  keepTransfers,
  notFound,
  RateLimiter,
  type ChainClient,
  type TxLookup,
} from './lookup.ts';

/**
 * EVM chains over the standard JSON-RPC (eth_getTransactionByHash, eth_getTransactionReceipt,
 * eth_blockNumber), with viem: no hand-made ABI or RLP. A mined transaction is trusted only once the node's
 * receipt names its hash; a failed one (status 0) pays nothing, whatever its value or logs said. Native value
 * is the transaction's value to its `to`; tokens are the ERC-20 Transfer logs (every contract's: a check
 * tells the configured one from another, so a payment in the wrong token is seen as such).
 */

const TXID = /^0x[0-9a-fA-F]{64}$/;

export class EvmChainClient implements ChainClient {
  private readonly client: PublicClient;
  private readonly limiter: RateLimiter;

  constructor(
    readonly source: ChainSourceDefinition,
    url: string,
  ) {
    this.client = createPublicClient({
      transport: http(url, { timeout: source.timeoutMs, retryCount: 0 }),
    });
    this.limiter = new RateLimiter(source.ratePerSecond);
  }

  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    await this.limiter.take();
    try {
      return await run();
    } catch (e) {
      if (e instanceof TransactionNotFoundError || e instanceof TransactionReceiptNotFoundError) throw e;
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
      throw new ChainSourceRefusedError(`${this.source.name} answered another transaction for ${txid}`);
    const contractCall = tx.input !== undefined && tx.input !== '0x';
    const native: ChainTransfer[] =
      tx.to && tx.value > 0n
        ? [{ asset: 'native', recipient: tx.to.toLowerCase(), amount: tx.value.toString() }]
        : [];
    if (tx.blockNumber === null || tx.blockHash === null)
      return {
        status: 'pending',
        confirmations: 0,
        block: null,
        blockHash: null,
        transfers: native,
        proven: false,
        detail: `in the mempool, not mined${contractCall ? `; ${CONTRACT_CALL_NOTE}` : ''}`,
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
      throw new ChainSourceRefusedError(
        `${this.source.name}'s receipt names another transaction for ${txid}`,
      );
    const tip = await this.call('eth_blockNumber', () => this.client.getBlockNumber({ cacheTime: 0 }));
    const block = receipt.blockNumber;
    const confirmations = tip >= block ? Number(tip - block + 1n) : 0;
    const base = {
      confirmations,
      block: Number(block),
      blockHash: receipt.blockHash.toLowerCase(),
      proven: true,
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
    }));
    const { transfers, note } = keepTransfers([...native, ...tokens], (t) => t.asset === currency.asset);
    const details = [contractCall ? CONTRACT_CALL_NOTE : null, note].filter(Boolean);
    return {
      ...base,
      status: depthStatus(confirmations, currency),
      transfers,
      detail: details.length > 0 ? details.join('; ') : null,
    };
  }
}
