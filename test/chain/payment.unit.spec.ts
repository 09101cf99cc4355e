import { describe, expect, it } from 'vitest';
import type { ChainCurrencyDefinition, ChainSourceDefinition, TxLookup } from '../../src/chain/index.ts';
import { judgeChainPayment } from '../../src/chain/payment.ts';

const source = (family: 'evm' | 'utxo'): ChainSourceDefinition => ({
  name: family === 'evm' ? 'ethereum' : 'bitcoin',
  family,
  urlEnv: 'X_URL',
  network: family === 'utxo' ? 'bitcoin' : null,
  ratePerSecond: 5,
  timeoutMs: 1000,
  maxResponseBytes: 1_000_000,
  chainId: null,
});
const currency = (family: 'evm' | 'utxo', asset = 'native'): ChainCurrencyDefinition => ({
  currency: family === 'evm' ? (asset === 'native' ? 'ETH' : 'USDT') : 'BTC',
  source: source(family),
  confirmations: 3,
  asset,
  decimals: family === 'evm' ? 18 : 8,
  deadlineMinutes: 60,
  lookAfterDeadlineMinutes: 60,
  memo: false,
});
const PLATFORM = '0xAbCd000000000000000000000000000000000001';
const found = (transfers: TxLookup['transfers'], over: Partial<TxLookup> = {}): TxLookup => ({
  status: 'found',
  confirmations: 5,
  block: 100,
  blockHash: '0xb',
  transfers,
  proven: true,
  detail: null,
  blockTime: '2026-11-01T00:00:00.000Z',
  fee: '21000',
  contractCall: false,
  ...over,
});
const ask = { to: PLATFORM, atLeast: 1000n };

describe('a payment to the platform, judged on what its chain shows', () => {
  it('is verified when confirmed transfers of the asset to the address sum to at least the amount', () => {
    const j = judgeChainPayment(
      '0x1',
      found([
        { asset: 'native', recipient: PLATFORM.toLowerCase(), amount: '600', index: null },
        { asset: 'native', recipient: '0xother', amount: '5000', index: null },
        { asset: 'native', recipient: PLATFORM.toLowerCase(), amount: '400', index: 1 },
      ]),
      currency('evm'),
      ask,
    );
    expect(j).toMatchObject({ verified: true, paid: 1000n, confirmations: 5, block: 100 });
    if (j.verified) expect(j.transfers).toHaveLength(2);
  });

  it('refuses a payment short of the amount, naming both figures', () => {
    const j = judgeChainPayment(
      '0x1',
      found([{ asset: 'native', recipient: PLATFORM, amount: '999' }]),
      currency('evm'),
      ask,
    );
    expect(j).toEqual({
      verified: false,
      reason: `0x1: pays 999 atomic units of ETH to ${PLATFORM}, short of the 1000 expected`,
    });
  });

  it('refuses a payment to another address, or in another asset, saying where it went', () => {
    expect(
      judgeChainPayment(
        '0x1',
        found([{ asset: 'native', recipient: '0xother', amount: '5000' }]),
        currency('evm'),
        ask,
      ),
    ).toEqual({ verified: false, reason: `0x1: pays no native ETH to ${PLATFORM}; it pays 0xother` });
    const token = judgeChainPayment(
      '0x1',
      found([{ asset: 'native', recipient: PLATFORM, amount: '5000' }]),
      currency('evm', '0xusdt'),
      ask,
    );
    expect(token).toEqual({ verified: false, reason: `0x1: pays no USDT (0xusdt) to ${PLATFORM}` });
  });

  it('compares UTXO addresses exactly (they are case-sensitive), EVM ones in lower case', () => {
    const addr = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
    const utxo = (recipient: string) =>
      judgeChainPayment('t', found([{ asset: 'native', recipient, amount: '1000' }]), currency('utxo'), {
        to: addr,
        atLeast: 1000n,
      });
    expect(utxo(addr).verified).toBe(true);
    expect(utxo(addr.toUpperCase()).verified).toBe(false);
  });

  it.each([
    [{ status: 'not_found' as const, detail: 'unknown id' }, /not found on ethereum \(unknown id\)/],
    [{ status: 'refused' as const, detail: 'bytes do not hash' }, /cannot be trusted: bytes do not hash/],
    [{ status: 'reverted' as const }, /failed on the chain: it paid nothing/],
    [
      { status: 'pending' as const, confirmations: 1 },
      /1 of the 3 confirmation\(s\) ETH needs: look again later/,
    ],
    [{ proven: false }, /did not prove/],
  ])('refuses what is not a confirmed, proven transaction: %o', (over, reason) => {
    const j = judgeChainPayment(
      '0x1',
      found([{ asset: 'native', recipient: PLATFORM, amount: '5000' }], over),
      currency('evm'),
      ask,
    );
    expect(j.verified).toBe(false);
    if (!j.verified) expect(j.reason).toMatch(reason);
  });

  it('says a native payment may hide in a contract call', () => {
    const j = judgeChainPayment('0x1', found([], { contractCall: true }), currency('evm'), ask);
    expect(j).toMatchObject({ verified: false, reason: expect.stringMatching(/a contract call/) });
  });
});
