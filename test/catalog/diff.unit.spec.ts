import { describe, expect, it } from 'vitest';
import { checkAgainstCatalog } from '../../src/catalog/check.ts';
import {
  catalogCurrency,
  catalogPair,
  diffCatalog,
  type StoredCurrency,
  type StoredPair,
} from '../../src/catalog/diff.ts';

const pair = (from: string, to: string, min = '0.1', max = '10', methods = ['fixed', 'float']) =>
  catalogPair({
    from,
    to,
    tradeMethod: methods as ('fixed' | 'float')[],
    minSwapAmount: min,
    maxSwapAmount: max,
  });
const stored = (p: ReturnType<typeof pair>, enabled = true): StoredPair => ({ ...p, enabled });
const btc = catalogCurrency({ id: 'btc', type: 'coin', blockchain: 'bitcoin' });
const usdt = catalogCurrency({
  id: 'usdt',
  type: 'token',
  chainId: 1,
  blockchain: 'ignored',
  contract: '0xdac',
});

describe('diffCatalog', () => {
  it('a first sync adds everything', () => {
    const d = diffCatalog(
      { currencies: [], pairs: [] },
      { currencies: [btc, usdt], pairs: [pair('btc', 'usdt')] },
    );
    expect(d.changes.map((c) => `${c.itemKind} ${c.item} ${c.change}`)).toEqual([
      'currency btc added',
      'currency usdt added',
      'pair btc/usdt added',
    ]);
    expect(d.changes.find((c) => c.item === 'usdt')!.newValue).toBe('token chainId:1'); // chainId wins over blockchain
    expect(d.changes.at(-1)!.newValue).toBe('fixed,float 0.1..10');
  });

  it('nothing changes when the read equals the store (limits compared as decimals)', () => {
    const d = diffCatalog(
      { currencies: [{ ...btc, enabled: true }], pairs: [stored(pair('btc', 'eth', '0.10', '10.0'))] },
      { currencies: [btc], pairs: [pair('btc', 'eth', '0.1', '10')] },
    );
    expect(d.changes).toEqual([]);
    expect(d.changedPairs.size).toBe(0);
    expect(d.pairs).toHaveLength(1); // still written: last_seen_at moves
  });

  it('a pair missing from the read is disabled (not deleted); it is enabled again when it returns', () => {
    const before = { currencies: [], pairs: [stored(pair('btc', 'eth')), stored(pair('eth', 'btc'))] };
    const gone = diffCatalog(before, { currencies: [], pairs: [pair('btc', 'eth')] });
    expect(gone.disablePairs).toEqual([['eth', 'btc']]);
    expect(gone.changes).toEqual([
      { itemKind: 'pair', item: 'eth/btc', change: 'disabled', oldValue: 'true', newValue: 'false' },
    ]);
    const back = diffCatalog(
      { currencies: [], pairs: [stored(pair('btc', 'eth')), stored(pair('eth', 'btc'), false)] },
      { currencies: [], pairs: [pair('btc', 'eth'), pair('eth', 'btc')] },
    );
    expect(back.changes.map((c) => c.change)).toEqual(['enabled']);
    expect(back.disablePairs).toEqual([]);
    // An already disabled pair still missing is not disabled twice.
    const still = diffCatalog(
      { currencies: [], pairs: [stored(pair('eth', 'btc'), false)] },
      { currencies: [], pairs: [] },
    );
    expect(still.changes).toEqual([]);
  });

  it('records limit and trade method changes with old and new values', () => {
    const d = diffCatalog(
      { currencies: [], pairs: [stored(pair('btc', 'eth', '0.1', '10', ['fixed', 'float']))] },
      { currencies: [], pairs: [pair('btc', 'eth', '0.2', '8', ['float'])] },
    );
    expect(d.changes.map((c) => [c.change, c.oldValue, c.newValue])).toEqual([
      ['min_amount', '0.1', '0.2'],
      ['max_amount', '10', '8'],
      ['trade_methods', 'fixed,float', 'float'],
    ]);
    expect([...d.changedPairs]).toEqual(['btc/eth']);
  });

  it('records currency changes: disabled, network, contract, type', () => {
    const d = diffCatalog(
      {
        currencies: [
          { ...btc, enabled: true },
          { ...usdt, enabled: true },
          { id: 'ltc', type: 'coin', blockchain: 'litecoin', chainId: null, contract: null, enabled: true },
        ] satisfies StoredCurrency[],
        pairs: [],
      },
      {
        currencies: [
          { ...btc, blockchain: 'bitcoin-testnet' },
          { ...usdt, contract: '0xnew', type: 'coin' },
        ],
        pairs: [],
      },
    );
    expect(d.changes.map((c) => `${c.item} ${c.change} ${c.oldValue} -> ${c.newValue}`)).toEqual([
      'btc network blockchain:bitcoin -> blockchain:bitcoin-testnet',
      'usdt type token -> coin',
      'usdt contract 0xdac -> 0xnew',
      'ltc disabled true -> false',
    ]);
    expect(d.disableCurrencies).toEqual(['ltc']);
  });
});

describe('checkAgainstCatalog: refusals before the partner is called, with the interface keys', () => {
  const p = stored(pair('btc', 'eth', '0.0002', '5', ['fixed', 'float']));
  const req = (amount: string, tradeMethod?: string) => ({ from: 'btc', to: 'eth', amount, tradeMethod });

  it('accepts an amount within the limits, bounds included', () => {
    for (const a of ['0.0002', '1', '5']) expect(checkAgainstCatalog(p, req(a))).toBeUndefined();
  });

  it('refuses an unknown or disabled pair with SWAP_PAIR_NOT_FOUND_ERROR (404)', () => {
    expect(checkAgainstCatalog(undefined, req('1'))).toMatchObject({
      status: 404,
      messageKey: 'SWAP_PAIR_NOT_FOUND_ERROR',
    });
    expect(checkAgainstCatalog({ ...p, enabled: false }, req('1'))).toMatchObject({
      status: 404,
      messageKey: 'SWAP_PAIR_NOT_FOUND_ERROR',
      error: 'pair btc/eth is disabled',
    });
  });

  it('refuses amounts outside min/max with the limits in additionalFields', () => {
    const low = checkAgainstCatalog(p, req('0.00019999'));
    expect(low).toMatchObject({
      status: 400,
      messageKey: 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR',
      additionalFields: { minRequiredAmount: '0.0002', maxRequiredAmount: '5' },
    });
    expect(checkAgainstCatalog(p, req('5.000000000000000000001'))?.messageKey).toBe(
      'FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR',
    );
  });

  it('refuses a trade method the pair does not offer', () => {
    const floatOnly = { ...p, tradeMethods: ['float'] };
    expect(checkAgainstCatalog(floatOnly, req('1', 'fixed'))).toMatchObject({ status: 400 });
    expect(checkAgainstCatalog(floatOnly, req('1', 'float'))).toBeUndefined();
  });
});
