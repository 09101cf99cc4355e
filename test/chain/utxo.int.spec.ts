import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import secp256k1 from 'secp256k1';
import * as ecc from '@bitcoinerlab/secp256k1';
import { address, crypto, initEccLib, networks, payments, script, Transaction } from 'bitcoinjs-lib';
import { parseChainSources, type ChainCurrencyDefinition } from '../../src/chain/config.ts';
import { EsploraChainClient, outputAddress, txidOfRaw, UTXO_NETWORK } from '../../src/chain/utxo.ts';
import { chainChecks } from '../../src/reconciler/chain-checks.ts';
import type { ChainObservation } from '../../src/reconciler/types.ts';
import { BASE_CREATION, input } from '../reconciler/support.ts';

initEccLib(ecc);

/**
 * The UTXO chain rules on real transactions built and signed with bitcoinjs-lib (no Bitcoin node installs
 * here), served by a small Esplora-compatible server (/tx/:txid/hex, /tx/:txid/status, /blocks/tip/height),
 * the address vectors of BIP 173 / BIP 350 / base58, and a source that serves bytes that do not hash to the
 * txid asked for: refused. Redirects and oversize answers are source errors.
 */

const key = (seed: string) => createHash('sha256').update(seed).digest();
const pub = (k: Buffer) => Buffer.from(secp256k1.publicKeyCreate(k, true));

function sign(hash: Uint8Array, k: Buffer): Buffer {
  const { signature } = secp256k1.ecdsaSign(hash, k);
  return Buffer.from(script.signature.encode(Buffer.from(signature), Transaction.SIGHASH_ALL));
}

const net = networks.bitcoin;
const spender = key('spender');
const spenderP2wpkh = payments.p2wpkh({ pubkey: pub(spender), network: net });
const spenderP2pkh = payments.p2pkh({ pubkey: pub(spender), network: net });

/** The addresses of every standard output type. */
const P2PKH = payments.p2pkh({ pubkey: pub(key('a')), network: net }).address!;
const P2SH = payments.p2sh({
  redeem: payments.p2wpkh({ pubkey: pub(key('b')), network: net }),
  network: net,
}).address!;
const P2WPKH = payments.p2wpkh({ pubkey: pub(key('c')), network: net }).address!;
const P2WSH = payments.p2wsh({
  redeem: payments.p2pkh({ pubkey: pub(key('d')), network: net }),
  network: net,
}).address!;
const P2TR = payments.p2tr({ internalPubkey: pub(key('e')).subarray(1), network: net }).address!;

/** A funding transaction (its input made up: only its outputs are spent). */
function funding(output: Uint8Array, value: bigint): Transaction {
  const tx = new Transaction();
  tx.addInput(randomBytes(32), 0);
  tx.addOutput(output, value);
  return tx;
}

/** A segwit (P2WPKH) spend paying `outs`, signed (BIP 143). */
function segwitSpend(outs: [string, bigint][]): Transaction {
  const fund = funding(spenderP2wpkh.output!, 10n ** 8n);
  const tx = new Transaction();
  tx.version = 2;
  tx.addInput(fund.getHash(), 0);
  for (const [addr, value] of outs) tx.addOutput(address.toOutputScript(addr, net), value);
  tx.addOutput(payments.embed({ data: [Buffer.from('memo?')] }).output!, 0n);
  const sighash = tx.hashForWitnessV0(0, spenderP2pkh.output!, 10n ** 8n, Transaction.SIGHASH_ALL);
  tx.setWitness(0, [sign(Buffer.from(sighash), spender), pub(spender)]);
  return tx;
}

/** A legacy (P2PKH) spend, signed: its txid is the hash of all its bytes. */
function legacySpend(to: string, value: bigint): Transaction {
  const fund = funding(spenderP2pkh.output!, 10n ** 8n);
  const tx = new Transaction();
  tx.addInput(fund.getHash(), 0);
  tx.addOutput(address.toOutputScript(to, net), value);
  const sighash = tx.hashForSignature(0, spenderP2pkh.output!, Transaction.SIGHASH_ALL);
  tx.setInputScript(0, script.compile([sign(Buffer.from(sighash), spender), pub(spender)]));
  return tx;
}

interface Served {
  hex: string;
  height: number | null;
  /** What /tx/:txid says the fee was (Esplora's `fee`), and the txid it names there. */
  fee?: number;
  txid?: string;
}

// Mined an hour after the swaps these tests judge were created (test/reconciler/support.ts BASE_CREATION):
// a block older than its swap is "predates the swap" (DESIGN, the chain as the last witness).
const BLOCK_TIME = Date.parse(BASE_CREATION.createdAt) / 1000 + 3600;

describe('UTXO chain source (Esplora API, real signed transactions)', () => {
  const served = new Map<string, Served>();
  let tip = 800_000;
  let server: Server;
  let url: string;
  let btc: ChainCurrencyDefinition;
  let client: EsploraChainClient;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = req.url ?? '';
      if (path === '/blocks/tip/height') return res.end(String(tip));
      if (path.startsWith('/moved/')) {
        res.writeHead(302, { location: path.slice('/moved'.length) });
        return res.end();
      }
      if (path.startsWith('/huge/')) return res.end('00'.repeat(4096));
      if (path.startsWith('/stream/')) {
        // No content-length: the size shows only as it is read.
        for (let i = 0; i < 8; i++) res.write('00'.repeat(256));
        return res.end();
      }
      const m = /^\/tx\/([0-9a-f]{64})(\/hex)?$/.exec(path);
      const tx = m && served.get(m[1]!);
      if (!m || !tx) {
        res.statusCode = 404;
        return res.end('Transaction not found');
      }
      if (m[2] === '/hex') return res.end(tx.hex);
      res.setHeader('content-type', 'application/json');
      const status =
        tx.height === null
          ? { confirmed: false }
          : {
              confirmed: true,
              block_height: tx.height,
              block_hash: '00'.repeat(32),
              block_time: BLOCK_TIME,
            };
      res.end(JSON.stringify({ txid: tx.txid ?? m[1], fee: tx.fee ?? 1234, status }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const sources = parseChainSources({
      sources: {
        bitcoin: { family: 'utxo', urlEnv: 'BTC_ESPLORA_URL', network: 'bitcoin', ratePerSecond: 1000 },
      },
      currencies: { BTC: { source: 'bitcoin', confirmations: 2, asset: 'native', decimals: 8 } },
    });
    btc = sources.currencies.get('BTC')!;
    client = new EsploraChainClient(btc.source, url);
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  const serve = (tx: Transaction, height: number | null) => {
    served.set(tx.getId(), { hex: tx.toHex(), height });
    return tx.getId();
  };

  /** A lookup judged as a FINISHED swap's payin of 0.05 BTC (5,000,000 sat signed) to `payinAddress`. */
  function judge(txid: string, l: Awaited<ReturnType<EsploraChainClient['lookup']>>, payinAddress: string) {
    const o: ChainObservation = {
      ...l,
      role: 'payin',
      txid,
      currency: 'BTC',
      chain: 'bitcoin',
      family: 'utxo',
      requiredConfirmations: 2,
      asset: 'native',
      decimals: 8,
      source: 'test',
      deadlinePassed: false,
      observedAt: '2026-11-27T00:00:00.000Z',
      eventId: '0192f0a0-0000-7000-8000-000000000001',
    };
    const i = {
      ...input({
        creation: { payinAddress },
        decoded: { payin_address: payinAddress },
        final: { payinTransactionId: txid },
      }),
      chain: { sourced: ['BTC'], observations: [o] },
    };
    return chainChecks(i, 'FINISHED').find((c) => c.name === 'chain.payin')!;
  }

  it('reads every standard output type as its address, the OP_RETURN left out and said', async () => {
    const tx = segwitSpend([
      [P2PKH, 1000n],
      [P2SH, 2000n],
      [P2WPKH, 3000n],
      [P2WSH, 4000n],
      [P2TR, 5000n],
    ]);
    const txid = serve(tx, tip - 5);
    const l = await client.lookup(txid, btc);
    expect(l).toMatchObject({ status: 'found', confirmations: 6, block: tip - 5, proven: true });
    expect(l.transfers).toEqual([
      { asset: 'native', recipient: P2PKH, amount: '1000', index: 0 },
      { asset: 'native', recipient: P2SH, amount: '2000', index: 1 },
      { asset: 'native', recipient: P2WPKH, amount: '3000', index: 2 },
      { asset: 'native', recipient: P2WSH, amount: '4000', index: 3 },
      { asset: 'native', recipient: P2TR, amount: '5000', index: 4 },
    ]);
    expect(l.detail).toMatch(/1 output\(s\) with no address/);
  });

  it('a segwit txid is the hash of the bytes less the witness; a legacy one of all its bytes', () => {
    const seg = segwitSpend([[P2WPKH, 1n]]);
    expect(txidOfRaw(Buffer.from(seg.toBuffer()))).toBe(seg.getId());
    const dsha = (b: Uint8Array) => Buffer.from(crypto.hash256(b)).reverse().toString('hex');
    expect(dsha(seg.toBuffer())).not.toBe(seg.getId()); // the wtxid
    const legacy = legacySpend(P2PKH, 1n);
    expect(dsha(legacy.toBuffer())).toBe(legacy.getId());
    expect(txidOfRaw(Buffer.from(legacy.toBuffer()))).toBe(legacy.getId());
  });

  it('the right payin at depth is MATCHED; outputs to the address are summed', async () => {
    const tx = segwitSpend([
      [P2WPKH, 3_000_000n],
      [P2PKH, 1n],
      [P2WPKH, 2_000_000n],
    ]);
    const txid = serve(tx, tip - 1);
    expect(judge(txid, await client.lookup(txid, btc), P2WPKH).verdict).toBe('MATCHED');
  });

  it('a short payin is the user’s shortfall; a payin elsewhere a MISMATCH', async () => {
    const txid = serve(segwitSpend([[P2TR, 4_000_000n]]), tip - 3);
    const short = judge(txid, await client.lookup(txid, btc), P2TR);
    expect(short).toMatchObject({ verdict: 'MISMATCH', delta: '-1000000' });
    expect(short.detail).toMatch(/short payin/);
    const elsewhere = judge(txid, await client.lookup(txid, btc), P2WSH);
    expect(elsewhere.detail).toMatch(/does not pay the signed payin address/);
  });

  it('unconfirmed, then confirmed: pending awaiting the chain, then MATCHED', async () => {
    const tx = legacySpend(P2SH, 5_000_000n);
    const txid = serve(tx, null);
    const mempool = await client.lookup(txid, btc);
    expect(mempool).toMatchObject({ status: 'pending', confirmations: 0, proven: true });
    expect(judge(txid, mempool, P2SH).verdict).toBe('UNVERIFIABLE');
    served.set(txid, { hex: tx.toHex(), height: tip });
    expect(await client.lookup(txid, btc)).toMatchObject({ status: 'pending', confirmations: 1 });
    tip += 1;
    const deep = await client.lookup(txid, btc);
    expect(deep).toMatchObject({ status: 'found', confirmations: 2 });
    expect(judge(txid, deep, P2SH).verdict).toBe('MATCHED');
  });

  it('an unknown txid is not found', async () => {
    expect(await client.lookup('ab'.repeat(32), btc)).toMatchObject({ status: 'not_found', proven: false });
  });

  it('a source serving bytes that do not hash to the txid is refused: nothing it said is kept', async () => {
    const honest = segwitSpend([[P2WPKH, 5_000_000n]]);
    const forged = segwitSpend([[P2PKH, 5_000_000n]]); // other outputs, claimed under the honest txid
    served.set(honest.getId(), { hex: forged.toHex(), height: tip - 10 });
    const lied = await client.lookup(honest.getId(), btc);
    expect(lied).toMatchObject({
      status: 'refused',
      transfers: [],
      block: null,
      proven: false,
      fee: null,
      blockTime: null,
    });
    expect(lied.detail).toContain(`hash to ${forged.getId()}`);
    served.set(honest.getId(), { hex: 'zz', height: tip });
    expect(await client.lookup(honest.getId(), btc)).toMatchObject({
      status: 'refused',
      detail: expect.stringMatching(/is not hex/),
    });
    // The right bytes, but /tx/:txid describes another transaction.
    served.set(honest.getId(), { hex: honest.toHex(), height: tip, txid: forged.getId() });
    expect(await client.lookup(honest.getId(), btc)).toMatchObject({
      status: 'refused',
      detail: expect.stringMatching(/describes another transaction/),
    });
  });

  it('each output carries its index (vout), the fee and the block time are recorded', async () => {
    const tx = segwitSpend([
      [P2TR, 7000n],
      [P2WPKH, 8000n],
    ]);
    const txid = tx.getId();
    served.set(txid, { hex: tx.toHex(), height: null, fee: 250 });
    expect(await client.lookup(txid, btc)).toMatchObject({
      status: 'pending',
      fee: '250',
      blockTime: null,
      contractCall: false,
    });
    served.set(txid, { hex: tx.toHex(), height: tip - 1, fee: 250 });
    const l = await client.lookup(txid, btc);
    expect(l).toMatchObject({
      status: 'found',
      fee: '250',
      blockTime: new Date(BLOCK_TIME * 1000).toISOString(),
      contractCall: false,
    });
    // The OP_RETURN output (index 2) has no address: left out, the others keep their own index.
    expect(l.transfers).toEqual([
      { asset: 'native', recipient: P2TR, amount: '7000', index: 0 },
      { asset: 'native', recipient: P2WPKH, amount: '8000', index: 1 },
    ]);
  });

  it('a redirect is refused, not followed; an answer over maxResponseBytes is refused', async () => {
    const tx = legacySpend(P2PKH, 1n);
    const txid = serve(tx, tip);
    const moved = new EsploraChainClient(btc.source, `${url}/moved`);
    await expect(moved.lookup(txid, btc)).rejects.toThrow(/answered a redirect \(302\): refused/);
    const huge = new EsploraChainClient({ ...btc.source, maxResponseBytes: 1024 }, `${url}/huge`);
    await expect(huge.lookup(txid, btc)).rejects.toThrow(/over 1024 bytes: refused/);
    const stream = new EsploraChainClient({ ...btc.source, maxResponseBytes: 1024 }, `${url}/stream`);
    await expect(stream.lookup(txid, btc)).rejects.toThrow(/an answer over 1024 bytes: refused/);
  });

  it('address vectors (BIP 173, BIP 350, base58): each script reads back as its address', () => {
    const vectors: [string, string][] = [
      ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', '0014751e76e8199196d454941c45d1b3a323f1433bd6'],
      [
        'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3',
        '00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262',
      ],
      [
        'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0',
        '512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798',
      ],
      ['1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', '76a91477bff20c60e522dfaa3350c39b030a5d004e839a88ac'],
      ['3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', 'a914b472a266d0bd89c13706a4132ccfb16f7c3b9fcb87'],
    ];
    for (const [addr, hex] of vectors) {
      expect(outputAddress(Buffer.from(hex, 'hex'), UTXO_NETWORK.bitcoin)).toBe(addr);
      expect(Buffer.from(address.toOutputScript(addr, net)).toString('hex')).toBe(hex);
    }
    // The same P2WPKH program on Litecoin reads as an ltc1 address; an OP_RETURN as none.
    expect(outputAddress(Buffer.from(vectors[0]![1], 'hex'), UTXO_NETWORK.litecoin)).toMatch(/^ltc1q/);
    expect(outputAddress(Buffer.from('6a0568656c6c6f', 'hex'), UTXO_NETWORK.bitcoin)).toBeUndefined();
  });
});
