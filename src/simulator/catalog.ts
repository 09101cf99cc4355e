import { Decimal } from '../money/decimal.ts';
import type { Currency, DecimalText, Pair } from '../partner/types.ts';

/**
 * The simulator's catalog. A currency carries what only the partner knows: the size of its atomic unit
 * (to sign amounts) and its payout network fee. Neither is served on the wire.
 */
export type SimCurrency = Currency & {
  readonly decimals: number;
  /** Payout network fee in this currency when it is the destination. Default "0". */
  readonly networkFee?: DecimalText;
  /** Extra wire fields served as they are (e.g. to test that the client keeps them). */
  readonly [extra: string]: unknown;
};

/** A pair and its rate: units of `to` per unit of `from`. */
export type SimPair = Pair & { readonly rate: DecimalText; readonly [extra: string]: unknown };

/** Partner ids are lower case on purpose: they differ from the platform's ids (BTC, ETH...) as in real life. */
export const DEFAULT_CURRENCIES: readonly SimCurrency[] = [
  { id: 'btc', type: 'coin', blockchain: 'bitcoin', decimals: 8, networkFee: '0.00002' },
  { id: 'ltc', type: 'coin', blockchain: 'litecoin', decimals: 8, networkFee: '0.0001' },
  // 21,000 gas at 20 gwei: what the demo chain's plain transfer spends (src/demo/payer.ts), so reported = spent.
  { id: 'eth', type: 'coin', blockchain: 'ethereum', chainId: 1, decimals: 18, networkFee: '0.00042' },
  // chainId without blockchain: allowed for EVM networks.
  {
    id: 'usdt',
    type: 'token',
    chainId: 1,
    contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
    decimals: 6,
    networkFee: '1.5',
  },
  {
    id: 'bat',
    type: 'token',
    chainId: 1,
    contract: '0x0D8775F648430679A709E98d2b0Cb6250d2887EF',
    decimals: 18,
    networkFee: '2',
  },
  { id: 'pol', type: 'coin', chainId: 137, decimals: 18, networkFee: '0.01' },
  { id: 'sol', type: 'coin', blockchain: 'solana', decimals: 9, networkFee: '0.000005' },
  { id: 'xrp', type: 'coin', blockchain: 'ripple', decimals: 6, networkFee: '0.000012' },
];

const USD_PRICE: Readonly<Record<string, string>> = {
  btc: '60000',
  ltc: '80',
  eth: '3000',
  usdt: '1',
  bat: '0.2',
  pol: '0.5',
  sol: '150',
  xrp: '0.5',
};

const LIMITS: Readonly<Record<string, readonly [string, string]>> = {
  btc: ['0.0002', '5'],
  ltc: ['0.1', '1000'],
  eth: ['0.004', '100'],
  usdt: ['10', '100000'],
  bat: ['50', '500000'],
  pol: ['20', '200000'],
  sol: ['0.1', '1000'],
  xrp: ['20', '200000'],
};

/** Every ordered pair of the default currencies; swaps into xrp are float only. */
export const DEFAULT_PAIRS: readonly SimPair[] = DEFAULT_CURRENCIES.flatMap((from) =>
  DEFAULT_CURRENCIES.filter((to) => to.id !== from.id).map((to) => {
    const rate = new Decimal(USD_PRICE[from.id]!).div(USD_PRICE[to.id]!).toSignificantDigits(12);
    const [min, max] = LIMITS[from.id]!;
    return {
      from: from.id,
      to: to.id,
      tradeMethod: to.id === 'xrp' ? ['float'] : ['fixed', 'float'],
      minSwapAmount: min,
      maxSwapAmount: max,
      rate: rate.toFixed(),
    } satisfies SimPair;
  }),
);

/** The wire form: simulator-only fields removed. */
export function wireCurrency(c: SimCurrency): Currency {
  const { decimals: _d, networkFee: _f, ...wire } = c;
  return wire as Currency;
}

export function wirePair(p: SimPair): Pair {
  const { rate: _r, ...wire } = p;
  return wire as Pair;
}
