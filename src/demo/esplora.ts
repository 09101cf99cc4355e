import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transaction } from 'bitcoinjs-lib';

/**
 * The demo's UTXO chains (no Bitcoin or Litecoin node installs from a registry here): the part of the Esplora
 * REST API the chain watcher reads (GET /tx/:txid/hex, /tx/:txid, /tx/:txid/status, /blocks/tip/height) and Esplora's
 * broadcast (POST /tx, the raw transaction as hex; answers its txid), each chain under its own path
 * (`/bitcoin`, `/litecoin`). A transaction broadcast is mined at once into a block of its own. It checks the
 * bytes are a transaction, not its inputs or signatures: nothing here validates coins, so what the watcher
 * proves on it is what a transaction's bytes prove (its outputs, hashed into its txid), no more. Its `fee` is
 * inputs less outputs when every input spends a transaction it holds (a wallet's made-up funding: none).
 */

export interface DemoEsplora {
  readonly url: string;
  close(): Promise<void>;
}

interface Chain {
  readonly txs: Map<string, { hex: string; height: number; time: number; fee: number | null }>;
  tip: number;
}

/** Inputs less outputs, when every input spends an output this chain holds; null otherwise. */
function feeOf(chain: Chain, tx: Transaction): number | null {
  let spent = 0n;
  for (const input of tx.ins) {
    const parent = chain.txs.get(Buffer.from(input.hash).reverse().toString('hex'));
    const out = parent && Transaction.fromHex(parent.hex).outs[input.index];
    if (!out) return null;
    spent += BigInt(out.value);
  }
  const fee = spent - tx.outs.reduce((sum, o) => sum + BigInt(o.value), 0n);
  return fee >= 0n && fee <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(fee) : null;
}

const MAX_BODY = 1 << 20;

const blockHash = (chain: string, height: number) =>
  createHash('sha256').update(`${chain}:${height}`).digest('hex');

export async function startDemoEsplora(opts: {
  port?: number;
  chains: readonly string[];
}): Promise<DemoEsplora> {
  const chains = new Map<string, Chain>(opts.chains.map((c) => [c, { txs: new Map(), tip: 100 }]));
  const server = createServer((req, res) => {
    const send = (status: number, body: string, type = 'text/plain') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    const [, name, ...rest] = (req.url ?? '').split('?')[0]!.split('/');
    const chain = chains.get(name ?? '');
    if (!chain) return send(404, 'unknown chain');
    const path = `/${rest.join('/')}`;
    if (req.method === 'POST' && path === '/tx') {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => {
        body += d;
        if (body.length > MAX_BODY) req.destroy();
      });
      req.on('end', () => {
        const hex = body.trim();
        let tx: Transaction;
        try {
          if (!/^([0-9a-fA-F]{2})+$/.test(hex)) throw new Error('not hex');
          tx = Transaction.fromHex(hex);
        } catch (e) {
          return send(400, `sendrawtransaction RPC error: TX decode failed (${(e as Error).message})`);
        }
        const txid = tx.getId();
        if (!chain.txs.has(txid))
          chain.txs.set(txid, {
            hex: hex.toLowerCase(),
            height: ++chain.tip,
            time: Math.floor(Date.now() / 1000),
            fee: feeOf(chain, tx),
          });
        send(200, txid);
      });
      return;
    }
    if (req.method !== 'GET') return send(405, 'method not allowed');
    if (path === '/blocks/tip/height') return send(200, String(chain.tip));
    const m = /^\/tx\/([0-9a-f]{64})(?:\/(hex|status))?$/.exec(path);
    if (!m) return send(400, 'Invalid hex string');
    const tx = chain.txs.get(m[1]!);
    if (!tx) return send(404, 'Transaction not found');
    if (m[2] === 'hex') return send(200, tx.hex);
    const status = {
      confirmed: true,
      block_height: tx.height,
      block_hash: blockHash(name!, tx.height),
      block_time: tx.time,
    };
    send(
      200,
      JSON.stringify(m[2] === 'status' ? status : { txid: m[1], fee: tx.fee, status }),
      'application/json',
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
