import { RequestPacer } from '../work/rate-limit.ts';
import { createHash } from 'node:crypto';
import * as ecc from '@bitcoinerlab/secp256k1';
import { address, initEccLib, networks, Transaction, type Network } from 'bitcoinjs-lib';
import type { ChainTransfer } from '../events/types.ts';
import type { ChainCurrencyDefinition, ChainSourceDefinition, UtxoNetwork } from './config.ts';
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
 * UTXO chains (BTC, LTC) over the Esplora REST API (/tx/:txid/hex, /tx/:txid, /blocks/tip/height: what
 * Blockstream's and mempool's explorers serve, and electrs). The raw transaction is decoded with
 * bitcoinjs-lib and trusted only when the double SHA-256 of its bytes (less the witness, as the txid is
 * defined) is the txid: an explorer cannot then lie about the outputs; bytes that do not hash to it are
 * `refused`. Outputs pay addresses of any standard script (P2PKH, P2SH, P2WPKH, P2WSH, P2TR), each with its
 * output index (vout); an output with no address (OP_RETURN, bare multisig) is left out. The block (height,
 * hash, time) and the fee are Esplora's word (`status`, `fee` of /tx/:txid): the fee needs the spent outputs'
 * values, which the transaction's own bytes do not hold.
 */

// P2TR addresses need the curve (bitcoinjs checks the x-only key): a pure JS secp256k1, no native build.
initEccLib(ecc);

const LITECOIN: Network = {
  messagePrefix: '\x19Litecoin Signed Message:\n',
  bech32: 'ltc',
  bip32: { public: 0x019da462, private: 0x019d9cfe },
  pubKeyHash: 0x30,
  scriptHash: 0x32,
  wif: 0xb0,
};

export const UTXO_NETWORK: Record<UtxoNetwork, Network> = {
  bitcoin: networks.bitcoin,
  testnet: networks.testnet,
  regtest: networks.regtest,
  litecoin: LITECOIN,
};

const TXID = /^[0-9a-fA-F]{64}$/;

/** The txid of raw transaction bytes: double SHA-256 of the serialization without witness, byte-reversed. */
export function txidOfRaw(raw: Buffer): string {
  const tx = Transaction.fromBuffer(raw);
  for (const input of tx.ins) input.witness = [];
  const stripped = tx.toBuffer();
  const once = createHash('sha256').update(stripped).digest();
  return Buffer.from(createHash('sha256').update(once).digest()).reverse().toString('hex');
}

/** The address an output script pays, or undefined (OP_RETURN, bare multisig, non-standard). */
export function outputAddress(script: Uint8Array, network: Network): string | undefined {
  try {
    return address.fromOutputScript(script, network);
  } catch {
    return undefined;
  }
}

export class EsploraChainClient implements ChainClient {
  private readonly limiter: RequestPacer;
  private readonly network: Network;

  constructor(
    readonly source: ChainSourceDefinition,
    private readonly url: string,
  ) {
    this.limiter = new RequestPacer(source.ratePerSecond);
    this.network = UTXO_NETWORK[source.network ?? 'bitcoin'];
    this.fetch = boundedFetch(source.name, source.maxResponseBytes);
  }

  private readonly fetch: ReturnType<typeof boundedFetch>;

  /** One GET: its text, or undefined for 404 (and 400: Esplora's answer to a txid it cannot parse). */
  private async get(path: string): Promise<string | undefined> {
    await this.limiter.take();
    let res: Response;
    try {
      res = await this.fetch(`${this.url}${path}`, { signal: AbortSignal.timeout(this.source.timeoutMs) });
    } catch (e) {
      const ours = sourceErrorIn(e);
      if (ours) throw ours;
      const why =
        (e as Error).name === 'TimeoutError' ? `no answer in ${this.source.timeoutMs} ms` : (e as Error).name;
      throw new ChainSourceError(
        `${this.source.name}: GET ${path.split('/').slice(0, 2).join('/')}/… failed (${why})`,
      );
    }
    const text = await res.text().catch(() => '');
    if (res.status === 404 || res.status === 400) return undefined;
    if (!res.ok) throw new ChainSourceError(`${this.source.name}: GET ${path} answered ${res.status}`);
    return text;
  }

  async lookup(txid: string, currency: ChainCurrencyDefinition): Promise<TxLookup> {
    if (!TXID.test(txid)) return notFound('not a transaction id (64 hex digits)');
    const id = txid.toLowerCase();
    const hex = await this.get(`/tx/${id}/hex`);
    if (hex === undefined) return notFound(null);
    const rawHex = hex.trim();
    if (!/^([0-9a-fA-F]{2})+$/.test(rawHex)) return refused(`${this.source.name}: /tx/${id}/hex is not hex`);
    let tx: Transaction;
    let proven: string;
    try {
      const raw = Buffer.from(rawHex, 'hex');
      tx = Transaction.fromBuffer(raw);
      proven = txidOfRaw(raw);
    } catch (e) {
      return refused(`${this.source.name}: /tx/${id}/hex is not a transaction (${(e as Error).message})`);
    }
    if (proven !== id)
      return refused(
        `${this.source.name}: the bytes served for ${id} hash to ${proven} (the source cannot be trusted for its outputs)`,
      );
    const all: ChainTransfer[] = [];
    let unreadable = 0;
    for (const [index, out] of tx.outs.entries()) {
      const recipient = outputAddress(out.script, this.network);
      if (recipient === undefined) unreadable += 1;
      else all.push({ asset: 'native', recipient, amount: BigInt(out.value).toString(), index });
    }
    const { transfers, note } = keepTransfers(all, () => true);
    const infoText = await this.get(`/tx/${id}`);
    let info: {
      txid?: unknown;
      fee?: unknown;
      status?: { confirmed?: unknown; block_height?: unknown; block_hash?: unknown; block_time?: unknown };
    } = {};
    try {
      info = infoText === undefined ? {} : (JSON.parse(infoText) as typeof info);
    } catch {
      throw new ChainSourceError(`${this.source.name}: /tx/${id} is not JSON`);
    }
    if (typeof info.txid === 'string' && info.txid.toLowerCase() !== id)
      return refused(`${this.source.name}: /tx/${id} describes another transaction (${info.txid})`);
    const fee =
      typeof info.fee === 'number' && Number.isSafeInteger(info.fee) && info.fee >= 0
        ? String(info.fee)
        : null;
    const status = info.status ?? {};
    const details = [
      unreadable > 0 ? `${unreadable} output(s) with no address (OP_RETURN or non-standard)` : null,
      note,
    ].filter(Boolean);
    const detail = details.length > 0 ? details.join('; ') : null;
    if (status.confirmed !== true || typeof status.block_height !== 'number')
      return {
        status: 'pending',
        confirmations: 0,
        block: null,
        blockHash: null,
        transfers,
        proven: true,
        detail: detail ?? 'in the mempool, not mined',
        blockTime: null,
        fee,
        contractCall: false,
      };
    const tipText = await this.get('/blocks/tip/height');
    const tip = tipText === undefined ? NaN : Number(tipText.trim());
    if (!Number.isSafeInteger(tip))
      throw new ChainSourceError(`${this.source.name}: /blocks/tip/height is not a height`);
    const confirmations = tip >= status.block_height ? tip - status.block_height + 1 : 0;
    const time = status.block_time;
    return {
      status: depthStatus(confirmations, currency),
      confirmations,
      block: status.block_height,
      blockHash: typeof status.block_hash === 'string' ? status.block_hash.toLowerCase() : null,
      transfers,
      proven: true,
      detail,
      blockTime:
        typeof time === 'number' && Number.isSafeInteger(time) && time > 0 && time < 253_402_300_800
          ? new Date(time * 1000).toISOString()
          : null,
      fee,
      contractCall: false,
    };
  }
}
