import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { flattenedVerify } from 'jose';
import protobuf from 'protobufjs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeSwapPayload } from '../../src/payload/index.ts';
import {
  PartnerApiError,
  PartnerClient,
  QuoteNotFoundError,
  type SwapRequestFloat,
} from '../../src/partner/index.ts';
import {
  FINAL_STATUS_FAULTS,
  PAYLOAD_FAULTS,
  PayloadSigner,
  bigintToBytes,
  encodeSwapPayload,
  startPartnerSimulator,
  toPaddedBase64url,
  type PartnerSimulator,
  type PartnerSimulatorOptions,
  type PayloadFault,
} from '../../src/simulator/index.ts';

const VECTOR = {
  payload:
    'CipiYzFxYXIwc3Jycjd4Zmt2eTVsNjQzbHlkbnc5cmU1OWd0enp3ZjVtZHEaKmJjMXFhcjBzcnJyN3hma3Z5NWw2NDNseWRudzlyZTU5Z3R6endmNHRlcSoqMHhiNzk0ZjVlYTBiYTM5NDk0Y2U4Mzk2MTNmZmZiYTc0Mjc5NTc5MjY4OgNCVENCA0JBVEoCBH5SBgV0-95gAGIgNQrqDJf3R_HQ92CBRhSkdSOAGxrrfQvLuqKk9Gv4GEs=',
  signature: 'zGcNUYKM8sLxvT7zPU1C8vrMmanVlUroELnAeil4weo1LCk0zUBRse5-3Acv7I7II90xVTIxm26BnxRbZvVmTQ==',
  publicKey:
    '0478d5facdae2305f48795d3ce7d9244f5060d2f800901da5746d1f4177ae8d7bbe63f3870efc0d36af8f91962811e1d8d9df91ce3b3ea2cd9f550c7d465f8b7b3',
};

function keyFromHex(hex: string, crv: string) {
  const p = Buffer.from(hex, 'hex');
  return createPublicKey({
    key: {
      kty: 'EC',
      crv,
      x: p.subarray(1, 33).toString('base64url'),
      y: p.subarray(33).toString('base64url'),
    },
    format: 'jwk',
  });
}

describe('payload signer (the partner side)', () => {
  it('encodes the test vector fields to exactly its payload text, padding included', () => {
    const proto = fileURLToPath(
      new URL('../../schemas/payload/new_transaction_response.proto', import.meta.url),
    );
    const type = new protobuf.Root()
      .loadSync(proto, { keepCase: true })
      .lookupType('ledger_swap.NewTransactionResponse');
    const m = type.toObject(type.decode(Buffer.from(VECTOR.payload, 'base64url')), {
      bytes: Array,
    }) as Record<string, string>;
    const bytes = (k: string) => Buffer.from((m[k] as unknown as number[] | undefined) ?? []);
    const fields = {
      payin_address: m.payin_address!,
      refund_address: m.refund_address!,
      payout_address: m.payout_address!,
      currency_from: m.currency_from!,
      currency_to: m.currency_to!,
      amount_to_provider: BigInt('0x' + bytes('amount_to_provider').toString('hex')),
      amount_to_wallet: BigInt('0x' + bytes('amount_to_wallet').toString('hex')),
      device_transaction_id_ng: new Uint8Array(bytes('device_transaction_id_ng')),
    };
    expect(fields.amount_to_provider).toBe(1150n);
    expect(fields.amount_to_wallet).toBe(6_000_000_000_000n);
    expect(toPaddedBase64url(encodeSwapPayload(fields))).toBe(VECTOR.payload);
  });

  it('signs over "." + padded payload, as the test vector does', () => {
    const key = keyFromHex(VECTOR.publicKey, 'secp256k1');
    const sig = Buffer.from(VECTOR.signature, 'base64url');
    const ok = (data: string) =>
      verify('sha256', Buffer.from(data, 'ascii'), { key, dsaEncoding: 'ieee-p1363' }, sig);
    expect(ok('.' + VECTOR.payload)).toBe(true);
    expect(ok('.' + VECTOR.payload.replace(/=+$/, ''))).toBe(false);
    expect(ok(VECTOR.payload)).toBe(false);
  });

  it.each(['secp256k1', 'secp256r1'] as const)(
    'produces %s signatures jose verifies as a flattened JWS',
    async (curve) => {
      const signer = PayloadSigner.generate(curve);
      const fields = {
        payin_address: 'a',
        refund_address: 'r',
        payout_address: 'p',
        currency_from: 'BTC',
        currency_to: 'ETH',
        amount_to_provider: 10n ** 30n,
        amount_to_wallet: 0n,
        device_transaction_id_ng: new Uint8Array(randomBytes(32)),
      };
      const { payload, signature } = signer.signSwapPayload(fields);
      expect(payload.length % 4).toBe(0);
      expect(Buffer.from(signature, 'base64url')).toHaveLength(64);
      const alg = curve === 'secp256k1' ? 'ES256K' : 'ES256';
      expect(signer.publicKey.alg).toBe(alg);
      const key = keyFromHex(signer.publicKey.hex, signer.publicKey.jwk.crv);
      const out = await flattenedVerify({ payload, signature, header: { alg } }, key);
      // jose verified over "." + payload and hands back the decoded protobuf bytes
      expect(Buffer.from(out.payload).equals(Buffer.from(encodeSwapPayload(fields)))).toBe(true);
      const decoded = decodeSwapPayload(payload);
      expect(decoded.amount_to_provider).toBe(10n ** 30n);
      expect(decoded.amount_to_wallet_bytes).toHaveLength(0);
      // a reloaded key signs as the same partner
      expect(PayloadSigner.fromPem(signer.privateKeyPem()).publicKey.hex).toBe(signer.publicKey.hex);
    },
  );

  it('writes amounts big-endian in the fewest bytes, at most 16', () => {
    expect([...bigintToBytes(0n)]).toEqual([]);
    expect([...bigintToBytes(255n)]).toEqual([255]);
    expect([...bigintToBytes(256n)]).toEqual([1, 0]);
    expect(bigintToBytes(2n ** 128n - 1n)).toHaveLength(16);
    expect(() => bigintToBytes(2n ** 128n)).toThrow(RangeError);
    expect(() => bigintToBytes(-1n)).toThrow(RangeError);
  });
});

// ---- the simulator over HTTP ----

const sims: PartnerSimulator[] = [];
async function start(options: PartnerSimulatorOptions = {}) {
  const sim = await startPartnerSimulator(options);
  sims.push(sim);
  const client = new PartnerClient({
    provider: 'sim',
    baseUrl: sim.url,
    payloadKeys: [sim.partnerKey()],
    retry: { maxAttempts: 1 },
  });
  return { sim, client };
}
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
});

const floatRequest = (): SwapRequestFloat => ({
  amount: '0.5',
  refundAddress: 'bc1qrefund',
  payoutAddress: '0xpayout',
  currencyFrom: 'btc',
  currencyTo: 'eth',
  payloadCurrencyFrom: 'BTC',
  payloadCurrencyTo: 'ETH',
  nonce: randomBytes(32).toString('hex'),
});

describe('payload faults', () => {
  const expected: Record<PayloadFault, string> = {
    'wrong-nonce': 'payload.device_transaction_id_ng',
    'wrong-currency-from': 'payload.currency_from',
    'wrong-currency-to': 'payload.currency_to',
    'wrong-payin-address': 'payload.payin_address',
    'wrong-payout-address': 'payload.payout_address',
    'wrong-refund-address': 'payload.refund_address',
    'wrong-source-amount': 'payload.amount_to_provider',
    'wrong-destination-amount': '', // not checkable at creation: the reconciler compares it with the final amount
    'invalid-signature': 'signature.verify',
    // Creation figures off the quote: the payload is honest, the reconciler's quote checks see it.
    'network-fee-above-quote': '',
    'referral-below-quote': '',
  };

  it.each(PAYLOAD_FAULTS)('%s is what the payload check reports', async (fault) => {
    const { sim, client } = await start();
    sim.injectSwapFaults([fault]);
    const faulty = await client.createFloatSwap(floatRequest());
    const clean = await client.createFloatSwap(floatRequest()); // the fault was for one swap only
    expect(clean.payload.findings.filter((f) => f.outcome !== 'ok')).toEqual([]);
    const problems = faulty.payload.findings.filter((f) => f.outcome !== 'ok').map((f) => f.check);
    if (fault === 'wrong-destination-amount') {
      expect(problems).toEqual([]);
      // Honest amount_to_wallet: quoted output plus payout network fee, in wei (ETH has 18 decimals).
      const view = sim.swap(faulty.swap.swapId)!;
      const signed = faulty.payload.decoded!.amount_to_wallet;
      const expectedWei = toWei(view.amountTo) + toWei(view.creationFees.payoutNetworkFees);
      expect(signed).toBe(expectedWei + expectedWei / 10n + 1n);
    } else if (fault === 'network-fee-above-quote' || fault === 'referral-below-quote') {
      expect(problems).toEqual([]);
      const view = sim.swap(faulty.swap.swapId)!;
      const cleanView = sim.swap(clean.swap.swapId)!;
      const signed = faulty.payload.decoded!.amount_to_wallet;
      // The payload signs the quoted output (amount + network fee as quoted): the creation moved value.
      if (fault === 'network-fee-above-quote') {
        const fee = toWei(view.creationFees.payoutNetworkFees);
        expect(fee).toBe(toWei(cleanView.creationFees.payoutNetworkFees) * 5n);
        expect(toWei(view.amountTo) + fee).toBe(signed);
      } else {
        expect(toWei(view.creationFees.referralFees) * 5n).toBeLessThanOrEqual(
          toWei(cleanView.creationFees.referralFees),
        );
      }
    } else {
      expect(problems).toEqual([expected[fault]]);
    }
    expect(sim.swap(faulty.swap.swapId)!.faults).toEqual([fault]);
  });

  it('applies faults to the next swaps, and call faults to one swap only', async () => {
    const { sim, client } = await start();
    sim.injectSwapFaults(['wrong-currency-to'], { nextSwaps: 2 });
    const a = await client.createFloatSwap(floatRequest());
    const b = await client.createFloatSwap(floatRequest());
    const c = await client.createFloatSwap(floatRequest());
    expect([a, b, c].map((x) => x.payload.decoded?.currency_to)).toEqual(['BTC', 'BTC', 'ETH']);
    sim.injectFault('status', { kind: 'server-error' }, { swapId: b.swap.swapId });
    expect((await client.status(a.swap.swapId)).status).toBe('PENDING');
    await expect(client.status(b.swap.swapId)).rejects.toMatchObject({ httpStatus: 500 });
    expect((await client.status(b.swap.swapId)).status).toBe('PENDING'); // used up
  });

  it('refuses a payload fault on a swap that already exists', async () => {
    const { sim, client } = await start();
    const created = await client.createFloatSwap(floatRequest());
    expect(() => sim.injectSwapFaults(['wrong-nonce'], { swapId: created.swap.swapId })).toThrow(
      /at creation/,
    );
  });
});

function toWei(decimal: string): bigint {
  const [whole, frac = ''] = decimal.split('.');
  return BigInt(whole! + frac.padEnd(18, '0'));
}

describe('final-status faults', () => {
  it.each(FINAL_STATUS_FAULTS)('%s shows in the final GET /status', async (fault) => {
    const { sim, client } = await start();
    const created = await client.createFloatSwap(floatRequest());
    sim.injectSwapFaults([fault], { swapId: created.swap.swapId });
    const pending = await client.status(created.swap.swapId); // not final yet: untouched
    expect(pending.providerFees).toBe(created.swap.providerFees);
    sim.advance(created.swap.swapId, 'FINISHED');
    const s = await client.status(created.swap.swapId);
    const quoted = sim.swap(created.swap.swapId)!.amountTo;
    switch (fault) {
      case 'final-amount-below-signed':
        expect(s.amount).toBeDefined();
        expect(toWei(s.amount!) * 2n).toBeLessThanOrEqual(toWei(quoted));
        break;
      case 'fees-differ-from-creation':
        expect(s.providerFees).not.toBe(created.swap.providerFees);
        expect(toWei(s.providerFees!)).toBeGreaterThan(toWei(created.swap.providerFees!));
        expect(s.referralFees).toBe(created.swap.referralFees);
        break;
      case 'missing-payin-hash':
        expect(s.payinTransactionId).toBeUndefined();
        expect(s.payoutTransactionId).toBeDefined();
        break;
      case 'missing-payout-hash':
        expect(s.payoutTransactionId).toBeUndefined();
        expect(s.payinTransactionId).toBeDefined();
        break;
      case 'missing-final-amount':
        expect(s.amount).toBeUndefined();
        break;
    }
  });

  it('reports the quoted amount and creation fees when nothing is injected', async () => {
    const { sim, client } = await start();
    const created = await client.createFloatSwap(floatRequest());
    sim.advance(created.swap.swapId, 'FINISHED');
    const s = await client.status(created.swap.swapId);
    expect(s.amount).toBe(sim.swap(created.swap.swapId)!.amountTo);
    expect([s.providerFees, s.referralFees, s.payoutNetworkFees]).toEqual([
      created.swap.providerFees,
      created.swap.referralFees,
      created.swap.payoutNetworkFees,
    ]);
  });
});

describe('status progression', () => {
  it('moves one scripted step per poll and stops at the final status', async () => {
    const { client } = await start({
      progression: {
        advanceOn: 'poll',
        script: ['PENDING', 'EXCHANGING', { status: 'success', like: 'FINISHED' }],
      },
    });
    const created = await client.createFloatSwap(floatRequest());
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await client.status(created.swap.swapId));
    expect(seen.map((s) => s.status)).toEqual(['EXCHANGING', 'success', 'success', 'success']);
    expect(seen[0]!.payinTransactionId).toBeDefined(); // in progress: the deposit is seen
    expect(seen[0]!.amount).toBeUndefined();
    expect(seen[1]!.amount).toBeDefined();
  });

  it('steps a swap along its script on demand', async () => {
    const { sim, client } = await start({ progression: { script: ['PENDING', 'ON_HOLD', 'EXPIRED'] } });
    const created = await client.createFloatSwap(floatRequest());
    expect(sim.step(created.swap.swapId).status).toBe('ON_HOLD');
    expect(sim.step(created.swap.swapId)).toMatchObject({ status: 'EXPIRED', final: true });
    expect(sim.step(created.swap.swapId).history).toHaveLength(3); // no step past a final status
    const s = await client.status(created.swap.swapId);
    expect([s.status, s.amount, s.payoutTransactionId]).toEqual(['EXPIRED', '0', undefined]);
  });

  it('picks reproducible random paths from a seed', async () => {
    const run = async () => {
      const { sim, client } = await start({ progression: { random: true, seed: 42, advanceOn: 'manual' } });
      for (let i = 0; i < 6; i++) await client.createFloatSwap(floatRequest());
      return sim.swaps().map((s) => s.status);
    };
    const a = await run();
    expect(await run()).toEqual(a);
    expect(a.every((s) => s === 'PENDING')).toBe(true);
  });

  it('advances on a timer until every swap is final', async () => {
    const { sim, client } = await start({
      progression: { advanceOn: { everyMs: 10 }, random: true, seed: 7 },
    });
    for (let i = 0; i < 5; i++) await client.createFloatSwap(floatRequest());
    await vi.waitFor(() => expect(sim.swaps().every((s) => s.final)).toBe(true), {
      timeout: 3000,
      interval: 20,
    });
    for (const s of sim.swaps()) expect(['FINISHED', 'REFUNDED', 'EXPIRED']).toContain(s.status);
  });

  it('lets advance() set any status and fields, even after a final one', async () => {
    const { sim, client } = await start();
    const created = await client.createFloatSwap(floatRequest());
    sim.advance(created.swap.swapId, 'REFUNDED');
    expect((await client.status(created.swap.swapId)).amount).toBe('0');
    sim.advance(created.swap.swapId, 'FINISHED', { amount: '1.5', payoutTransactionId: null });
    const s = await client.status(created.swap.swapId);
    expect([s.status, s.amount]).toEqual(['FINISHED', '1.5']);
    expect(sim.swap(created.swap.swapId)!.history.map((h) => h.status)).toEqual([
      'PENDING',
      'REFUNDED',
      'FINISHED',
    ]);
  });

  it('leaves unknown fields out when configured so', async () => {
    const { sim, client } = await start({ unknownFields: 'absent' });
    const created = await client.createFloatSwap(floatRequest());
    expect(sim.swap(created.swap.swapId)!.report).not.toHaveProperty('amount');
    expect((await client.status(created.swap.swapId)).amount).toBeUndefined();
  });
});

describe('quotes and lists', () => {
  it('expires quotes after their time to live', async () => {
    let now = Date.parse('2025-01-01T00:00:00Z');
    const { client } = await start({ quoteTtlMs: 60_000, now: () => new Date(now) });
    const quote = await client.quote({ from: 'btc', to: 'eth', amount: '0.1' });
    expect(quote.expiry).toBe('2025-01-01T00:01:00+0000');
    now += 61_000;
    const req = { ...floatRequest(), quoteId: quote.quoteId! };
    await expect(client.createFixedSwap(req)).rejects.toBeInstanceOf(QuoteNotFoundError);
  });

  it('answers an unknown cursor with an undocumented key', async () => {
    const { sim } = await start();
    const res = await fetch(`${sim.url}/pairs?cursor=bogus`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { messageKey: string }).messageKey).toBe('INVALID_CURSOR_ERROR');
  });

  it('serves a changed catalog', async () => {
    const { sim, client } = await start();
    sim.setCurrencies([{ id: 'btc', type: 'coin', blockchain: 'bitcoin', decimals: 8, logo: 'btc.svg' }]);
    const list = [];
    for await (const c of client.currencies()) list.push(c);
    expect(list).toEqual([{ id: 'btc', type: 'coin', blockchain: 'bitcoin', logo: 'btc.svg' }]);
  });

  it('refuses an amount finer than the currency allows', async () => {
    const { client } = await start();
    const e = await client.quote({ from: 'btc', to: 'eth', amount: '0.123456789' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PartnerApiError);
    expect((e as PartnerApiError).messageKey).toBe('AMOUNT_PRECISION_ERROR');
  });
});

describe('webhooks', () => {
  let receiver: Server;
  let url: string;
  let status = 200;
  const received: { path: string; headers: IncomingHttpHeaders; body: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        received.push({
          path: req.url ?? '',
          headers: req.headers,
          body: JSON.parse(text) as Record<string, unknown>,
        });
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(status === 200 ? { message: 'queued' } : { error: 'final' }));
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

  it('pushes every status change with x-api-key and the StatusWebhookRequest body', async () => {
    received.length = 0;
    const { sim, client } = await start({ providerId: 'partner-x', webhook: { url, apiKey: 'k-123' } });
    const created = await client.createFloatSwap(floatRequest());
    sim.advance(created.swap.swapId, 'ON_HOLD');
    sim.advance(created.swap.swapId, 'FINISHED');
    await sim.settled();
    expect(received).toHaveLength(2);
    const last = received.find((r) => r.body.providerStatus === 'FINISHED')!;
    expect(last.path).toBe(`/webhook/${created.swap.swapId}/status`);
    expect(last.headers['x-api-key']).toBe('k-123');
    const report = sim.swap(created.swap.swapId)!.report;
    expect(last.body).toEqual({
      providerId: 'partner-x',
      providerStatus: 'FINISHED',
      amount: report.amount,
      providerFees: report.providerFees,
      networkFees: report.referralFees,
      payinTransactionId: report.payinTransactionId,
      transactionHash: report.payoutTransactionId,
    });
    expect(sim.webhookDeliveries().map((d) => d.status)).toEqual([200, 200]);
  });

  it('pushes on demand, with overrides, and records the platform answer', async () => {
    received.length = 0;
    const { sim, client } = await start({ webhook: { url, apiKey: 'k', autoPush: false } });
    const created = await client.createFloatSwap(floatRequest());
    sim.advance(created.swap.swapId, 'FINISHED');
    expect(received).toHaveLength(0);
    status = 405;
    try {
      const d = await sim.pushWebhook(created.swap.swapId, { providerStatus: 'NOT_A_STATUS' });
      expect(d.status).toBe(405);
      expect(d.responseBody).toContain('final');
      expect(received[0]!.body.providerStatus).toBe('NOT_A_STATUS');
    } finally {
      status = 200;
    }
  });

  it('records an unreachable platform instead of throwing', async () => {
    const gone = createServer();
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', () => r()));
    const port = (gone.address() as AddressInfo).port;
    await new Promise<void>((r) => gone.close(() => r()));
    const { sim, client } = await start({ webhook: { url: `http://127.0.0.1:${port}`, apiKey: 'k' } });
    const created = await client.createFloatSwap(floatRequest());
    const d = await sim.pushWebhook(created.swap.swapId);
    expect(d.status).toBeUndefined();
    expect(d.error).toBeTruthy();
  });
});
