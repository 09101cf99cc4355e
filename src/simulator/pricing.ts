import { randomUUID } from 'node:crypto';
import { toAtomicUnits } from '../money/atomic.ts';
import { Decimal, formatDecimal, parseDecimal } from '../money/decimal.ts';
import type { TradeMethod } from '../partner/types.ts';
import type { CallFault } from './faults.ts';
import { DEFAULT_CURRENCIES, DEFAULT_PAIRS, type SimCurrency, type SimPair } from './catalog.ts';
import { amountOf, apiError, text } from './http.ts';
import type { PartnerSimulatorOptions } from './types.ts';

/** The simulator's market: currencies and pairs, quotes, prices and fees, limits and regions. */

export interface Quote {
  readonly quoteId: string;
  readonly pair: SimPair;
  readonly tradeMethod: TradeMethod;
  readonly amount: Decimal;
  readonly priced: Priced;
  readonly expiresAt: number;
}

export interface Priced {
  readonly amountTo: Decimal;
  readonly providerFees: Decimal;
  readonly referralFees: Decimal;
  readonly payoutNetworkFees: Decimal;
}

export class Pricing {
  currencies: SimCurrency[];
  pairs: SimPair[];
  private readonly quotes = new Map<string, Quote>();
  private readonly providerRate: Decimal;
  private readonly referralRate: Decimal;

  constructor(
    private readonly options: PartnerSimulatorOptions,
    private readonly now: () => Date,
  ) {
    this.currencies = [...(options.currencies ?? DEFAULT_CURRENCIES)];
    this.pairs = [...(options.pairs ?? DEFAULT_PAIRS)];
    this.providerRate = parseDecimal(options.fees?.providerRate ?? '0.005');
    this.referralRate = parseDecimal(options.fees?.referralRate ?? '0.0025');
  }

  currency(id: string): SimCurrency | undefined {
    return this.currencies.find((c) => c.id === id);
  }

  quote(body: Record<string, unknown>): unknown {
    const from = text(body, 'from');
    const to = text(body, 'to');
    const amount = amountOf(body, 'amount');
    const pair = this.pairs.find((p) => p.from === from && p.to === to);
    const fromC = this.currency(from);
    const toC = this.currency(to);
    if (!pair || !fromC || !toC)
      throw apiError(404, 'SWAP_PAIR_NOT_FOUND_ERROR', `pair ${from}/${to} is not available`);
    this.checkRegion(from, to);
    this.checkLimits(pair, amount);
    const asked = body.tradeMethod;
    let tradeMethod: TradeMethod;
    if (asked === 'fixed' || asked === 'float') {
      if (!pair.tradeMethod.includes(asked))
        throw apiError(400, 'TRADE_METHOD_NOT_SUPPORTED_ERROR', `${asked} is not offered for ${from}/${to}`);
      tradeMethod = asked;
    } else {
      tradeMethod = pair.tradeMethod.includes('fixed') ? 'fixed' : 'float';
    }
    const priced = this.price(pair, fromC, toC, amount);
    const quoteId = `q-${randomUUID()}`;
    const expiresAt = this.now().getTime() + (this.options.quoteTtlMs ?? 600_000);
    this.quotes.set(quoteId, { quoteId, pair, tradeMethod, amount, priced, expiresAt });
    return {
      ...(tradeMethod === 'fixed' ? { quoteId } : {}),
      amount: formatDecimal(amount),
      amountTo: formatDecimal(priced.amountTo),
      providerFees: formatDecimal(priced.providerFees),
      referralFees: formatDecimal(priced.referralFees),
      payoutNetworkFees: formatDecimal(priced.payoutNetworkFees),
      tradeMethod,
      expiry: offsetTimestamp(new Date(expiresAt)),
      defaultSlippage: '0.02',
      minSlippage: '0.005',
      maxSlippage: '0.1',
      minAmountFrom: pair.minSwapAmount,
      maxAmountFrom: pair.maxSwapAmount,
    };
  }

  /** One page of a catalog list; the cursor is an opaque offset. */
  list(items: unknown[], key: string, query: Record<string, string>, fault: CallFault | undefined): unknown {
    let limit = this.options.defaultPageSize ?? 50;
    if (query.limit !== undefined) {
      if (!/^\d{1,9}$/.test(query.limit) || query.limit === '0') {
        throw apiError(400, 'INVALID_REQUEST_ERROR', 'limit must be a positive integer');
      }
      limit = Math.min(Number.parseInt(query.limit, 10), this.options.maxPageSize ?? 200);
    }
    let offset = 0;
    if (query.cursor !== undefined) {
      const decoded = Buffer.from(query.cursor, 'base64url').toString('utf8');
      const m = /^o:(\d{1,9})$/.exec(decoded);
      if (!m) throw apiError(400, 'INVALID_CURSOR_ERROR', 'unknown cursor');
      offset = Number.parseInt(m[1]!, 10);
    }
    const end = offset + limit;
    let next: string | null = end < items.length ? Buffer.from(`o:${end}`).toString('base64url') : null;
    if (fault?.kind === 'repeat-cursor' && query.cursor !== undefined) next = query.cursor;
    return { [key]: items.slice(offset, end), next_cursor: next };
  }

  /** The live fixed quote a swap of currencyFrom to currencyTo is created from. */
  quoteFor(quoteId: string, currencyFrom: string, currencyTo: string): Quote {
    const quote = this.quotes.get(quoteId);
    if (!quote || quote.tradeMethod !== 'fixed' || quote.expiresAt <= this.now().getTime()) {
      throw apiError(404, 'SWAP_QUOTE_NOT_FOUND_ERROR', `quote ${quoteId} not found or expired`);
    }
    if (quote.pair.from !== currencyFrom || quote.pair.to !== currencyTo) {
      throw apiError(
        400,
        'QUOTE_CURRENCY_MISMATCH_ERROR',
        `quote ${quoteId} is for ${quote.pair.from}/${quote.pair.to}`,
      );
    }
    return quote;
  }

  /** The price of a float swap at creation (no quote). */
  floatPrice(from: SimCurrency, to: SimCurrency, amountFrom: Decimal): Priced {
    const pair = this.pairs.find((p) => p.from === from.id && p.to === to.id);
    if (!pair) throw apiError(404, 'SWAP_PAIR_NOT_FOUND_ERROR', `pair ${from.id}/${to.id} is not available`);
    if (!pair.tradeMethod.includes('float'))
      throw apiError(400, 'TRADE_METHOD_NOT_SUPPORTED_ERROR', 'float is not offered');
    this.checkLimits(pair, amountFrom);
    return this.price(pair, from, to, amountFrom);
  }

  checkRegion(from: string, to: string): void {
    const restricted = this.options.restrictedCurrencies ?? [];
    const hit = [from, to].find((c) => restricted.includes(c));
    if (hit)
      throw apiError(451, 'CURRENCY_REGION_RESTRICTED_ERROR', `${hit} is not available in your region`);
  }

  private checkLimits(pair: SimPair, amount: Decimal): void {
    const limits = { minRequiredAmount: pair.minSwapAmount, maxRequiredAmount: pair.maxSwapAmount };
    if (amount.lt(parseDecimal(pair.minSwapAmount))) {
      throw apiError(400, 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR', `amount below ${pair.minSwapAmount}`, limits);
    }
    if (amount.gt(parseDecimal(pair.maxSwapAmount))) {
      throw apiError(400, 'FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR', `amount above ${pair.maxSwapAmount}`, limits);
    }
  }

  private price(pair: SimPair, from: SimCurrency, to: SimCurrency, amount: Decimal): Priced {
    try {
      toAtomicUnits(amount, from.decimals);
    } catch {
      throw apiError(400, 'AMOUNT_PRECISION_ERROR', `${from.id} has ${from.decimals} decimals`);
    }
    const gross = amount.times(parseDecimal(pair.rate));
    const providerFees = roundDown(gross.times(this.providerRate), to.decimals);
    const referralFees = roundDown(gross.times(this.referralRate), to.decimals);
    const payoutNetworkFees = parseDecimal(to.networkFee ?? '0');
    const amountTo = roundDown(
      gross.minus(providerFees).minus(referralFees).minus(payoutNetworkFees),
      to.decimals,
    );
    if (!amountTo.gt(0)) {
      throw apiError(400, 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR', 'amount does not cover the fees', {
        minRequiredAmount: pair.minSwapAmount,
        maxRequiredAmount: pair.maxSwapAmount,
      });
    }
    return { amountTo, providerFees, referralFees, payoutNetworkFees };
  }
}

export function roundDown(d: Decimal, decimals: number): Decimal {
  return d.toDecimalPlaces(decimals, Decimal.ROUND_DOWN);
}

/** `<date>T<time>+0000`: the interface's expiry shape, which Date.parse does not read everywhere. */
export function offsetTimestamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, '+0000');
}
