import { randomBytes } from 'node:crypto';
import * as ecc from '@bitcoinerlab/secp256k1';
import { address, payments, script, Transaction, type Network } from 'bitcoinjs-lib';
import { createWalletClient, erc20Abi, http, parseEther, publicActions, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { hardhat } from 'viem/chains';
import { UTXO_NETWORK } from '../chain/index.ts';
import type { ChainMove, SimChain } from '../simulator/index.ts';
import { DEMO_CHAIN_ASSETS, deployerWallet, isDemoChainCurrency } from './chain.ts';

/**
 * The demo partner's (and its users') wallet on the demo chains: it makes each payin, payout and refund the
 * simulator reports (src/simulator/chain-pay.ts) and answers the real hash. EVM: a key made at each start
 * (so no two runs make the same transaction hash), funded by the deployer; UTXO: a P2WPKH key whose coins
 * come from one made-up funding transaction, each payment spending the previous one's change, signed (BIP 143).
 */

const MINT_MIN_UNITS = 10n ** 30n;
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

/** One transaction at a time per wallet: nonces (EVM) and change outputs (UTXO) follow each other. */
class Queue {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.tail.then(task, task);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

class UtxoWallet {
  private readonly key = randomBytes(32);
  private readonly pubkey = Buffer.from(ecc.pointFromScalar(this.key, true)!);
  private readonly queue = new Queue();
  private coin: { txid: Uint8Array; vout: number; value: bigint } | undefined;

  constructor(
    private readonly url: string,
    private readonly network: Network,
  ) {}

  private async broadcast(tx: Transaction): Promise<string> {
    const res = await fetch(`${this.url}/tx`, {
      method: 'POST',
      body: tx.toHex(),
      signal: AbortSignal.timeout(5000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`esplora refused the transaction: ${res.status} ${text}`);
    return text.trim();
  }

  /** Pays `amount` to `to`, spending `fee` (the fee the partner reports; the demo's floor otherwise). */
  pay(to: string, amount: bigint, fee = 1000n): Promise<string> {
    return this.queue.run(async () => {
      const own = payments.p2wpkh({ pubkey: this.pubkey, network: this.network });
      let coin = this.coin;
      if (!coin) {
        // The wallet's coins: a funding transaction whose input is made up (no node validates inputs here).
        const funding = new Transaction();
        funding.addInput(randomBytes(32), 0);
        funding.addOutput(own.output!, 10n ** 15n);
        await this.broadcast(funding);
        coin = this.coin = { txid: funding.getHash(), vout: 0, value: 10n ** 15n };
      }
      const change = coin.value - amount - fee;
      if (change < 0n) throw new Error('the demo UTXO wallet is spent');
      const tx = new Transaction();
      tx.version = 2;
      tx.addInput(coin.txid, coin.vout);
      tx.addOutput(address.toOutputScript(to, this.network), amount);
      tx.addOutput(own.output!, change);
      const p2pkh = payments.p2pkh({ pubkey: this.pubkey, network: this.network }).output!;
      const sighash = tx.hashForWitnessV0(0, p2pkh, coin.value, Transaction.SIGHASH_ALL);
      const signature = script.signature.encode(
        Buffer.from(ecc.sign(sighash, this.key)),
        Transaction.SIGHASH_ALL,
      );
      tx.setWitness(0, [signature, this.pubkey]);
      const txid = await this.broadcast(tx);
      this.coin = { txid: tx.getHash(), vout: 1, value: change };
      return txid;
    });
  }
}

/** A plain transfer's gas, whatever the chain's load. */
const TRANSFER_GAS = 21_000n;

/**
 * The gas price that makes a native transfer spend exactly the fee the partner reports (a legacy
 * transaction spends gas × its price): the demo partner's network fee estimates are multiples of a plain
 * transfer's gas, so an honest demo partner reports the fee it spent. Otherwise the node's own price.
 */
function exactFee(fee: bigint | undefined): { type: 'legacy'; gas: bigint; gasPrice: bigint } | object {
  if (fee === undefined || fee <= 0n || fee % TRANSFER_GAS !== 0n) return {};
  return { type: 'legacy', gas: TRANSFER_GAS, gasPrice: fee / TRANSFER_GAS };
}

export class DemoChainPayer implements SimChain {
  private readonly account = privateKeyToAccount(generatePrivateKey());
  private readonly evm;
  private readonly evmQueue = new Queue();
  private readonly utxo: Record<'bitcoin' | 'litecoin', UtxoWallet>;
  private funded: Promise<void> | undefined;

  constructor(private readonly urls: Record<string, string>) {
    this.evm = createWalletClient({
      account: this.account,
      chain: hardhat,
      transport: http(urls.DEMO_EVM_RPC_URL),
    }).extend(publicActions);
    this.utxo = {
      bitcoin: new UtxoWallet(urls.DEMO_BTC_ESPLORA_URL!, UTXO_NETWORK.bitcoin),
      litecoin: new UtxoWallet(urls.DEMO_LTC_ESPLORA_URL!, UTXO_NETWORK.litecoin),
    };
  }

  /** Gas and coins from the deployer, tokens minted by it (it holds the minter role). */
  private fund(): Promise<void> {
    this.funded ??= (async () => {
      const deployer = deployerWallet(this.urls.DEMO_EVM_RPC_URL!);
      // A call to an address without code succeeds and does nothing: the tokens must be there first.
      for (const token of [DEMO_CHAIN_ASSETS.usdt, DEMO_CHAIN_ASSETS.bat]) {
        const code = await deployer.getCode({ address: token.contract });
        if (!code || code === '0x') throw new Error(`the demo token ${token.platform} is not deployed yet`);
      }
      const wait = async (hash: Hex) => {
        const r = await deployer.waitForTransactionReceipt({ hash });
        if (r.status !== 'success') throw new Error(`demo funding transaction ${hash} failed`);
      };
      await wait(await deployer.sendTransaction({ to: this.account.address, value: parseEther('5000') }));
      for (const token of [DEMO_CHAIN_ASSETS.usdt, DEMO_CHAIN_ASSETS.bat])
        await wait(
          await deployer.writeContract({
            address: token.contract,
            abi: mintAbi,
            functionName: 'mint',
            args: [this.account.address, MINT_MIN_UNITS],
          }),
        );
    })().catch((e) => {
      this.funded = undefined;
      throw e;
    });
    return this.funded;
  }

  /** Resolves once the EVM wallet is funded (the demo chain is up, its tokens deployed). */
  ready(): Promise<void> {
    return this.fund();
  }

  async pay(move: ChainMove): Promise<string | undefined> {
    const id = move.currency.id;
    if (!isDemoChainCurrency(id)) return undefined;
    const asset = DEMO_CHAIN_ASSETS[id];
    if (asset.kind === 'utxo') return this.utxo[asset.network].pay(move.to, move.amount, move.networkFee);
    await this.fund();
    return this.evmQueue.run(async () => {
      const to = move.to as Address;
      try {
        const hash =
          asset.kind === 'native'
            ? await this.evm.sendTransaction({ to, value: move.amount, ...exactFee(move.networkFee) })
            : await this.evm.writeContract({
                address: asset.contract,
                abi: erc20Abi,
                functionName: 'transfer',
                args: [to, move.amount],
              });
        const receipt = await this.evm.waitForTransactionReceipt({ hash });
        if (receipt.status !== 'success') throw new Error(`demo payment ${hash} failed on the chain`);
        return hash;
      } catch (e) {
        // A restarted demo node is a fresh chain: this wallet is funded again before the next payment.
        this.funded = undefined;
        throw e;
      }
    });
  }
}
