import { randomBytes, randomUUID } from 'node:crypto';
import { address as bech32 } from 'bitcoinjs-lib';
import { toAtomicUnits } from '../money/atomic.ts';
import { formatDecimal, parseDecimal, type Decimal } from '../money/decimal.ts';
import type { TradeMethod } from '../partner/types.ts';
import type { SimCurrency } from './catalog.ts';
import {
  isChainFault,
  isFinalStatusFault,
  isPayloadFault,
  isWebhookFault,
  type SwapFault,
} from './faults.ts';
import { Answer, amountOf, apiError, optionalText, text } from './http.ts';
import {
  FINAL_LIKE,
  applyFinalFaults,
  isEvm,
  report,
  scriptFor,
  setStatus,
  stepForward,
  type StatusRules,
  type SwapState,
} from './progression.ts';
import { roundDown, type Priced, type Pricing } from './pricing.ts';
import { toPaddedBase64url, type PayloadSigner, type SwapPayloadFields } from './signer.ts';
import { seededRandom } from './random.ts';
import type { PartnerSimulatorOptions } from './types.ts';

/** The simulator's swaps: creation (signed payload, swap faults), lookup, and the faults waiting for the next swaps. */

const NONCE_HEX = /^[0-9a-fA-F]{64}$/;

export class SwapBook {
  readonly rules: StatusRules;
  private readonly states = new Map<string, SwapState>();
  private nextSwapFaults: SwapFault[][] = [];

  constructor(
    private readonly options: PartnerSimulatorOptions,
    private readonly pricing: Pricing,
    private readonly signer: PayloadSigner,
    now: () => Date,
  ) {
    this.rules = {
      options,
      now,
      floatDrift: parseDecimal(options.floatDrift ?? '0'),
      random: seededRandom(options.progression?.seed ?? Math.floor(Math.random() * 2 ** 31)),
    };
  }

  all(): SwapState[] {
    return [...this.states.values()];
  }

  get(swapId: string): SwapState | undefined {
    return this.states.get(swapId);
  }

  must(swapId: string): SwapState {
    const s = this.states.get(swapId);
    if (!s) throw new Error(`simulator has no swap ${swapId}`);
    return s;
  }

  injectFaults(
    faults: readonly SwapFault[],
    target: { swapId: string } | { nextSwaps: number } = { nextSwaps: 1 },
  ): void {
    for (const f of faults)
      if (!isPayloadFault(f) && !isFinalStatusFault(f) && !isChainFault(f) && !isWebhookFault(f))
        throw new Error(`unknown swap fault "${f}"`);
    if ('swapId' in target) {
      const swap = this.must(target.swapId);
      const late = faults.filter(isPayloadFault);
      if (late.length)
        throw new Error(`payload faults apply at creation; swap ${swap.swapId} exists: ${late.join(', ')}`);
      for (const f of faults) swap.faults.add(f);
      if (FINAL_LIKE.has(swap.like)) applyFinalFaults(swap);
      return;
    }
    for (let i = 0; i < target.nextSwaps; i++) {
      this.nextSwapFaults[i] = [...(this.nextSwapFaults[i] ?? []), ...faults];
    }
  }

  clearFaults(): void {
    this.nextSwapFaults = [];
  }

  create(tradeMethod: TradeMethod, body: Record<string, unknown>): unknown {
    const refundAddress = text(body, 'refundAddress');
    const payoutAddress = text(body, 'payoutAddress');
    const currencyFrom = text(body, 'currencyFrom');
    const currencyTo = text(body, 'currencyTo');
    const payloadCurrencyFrom = text(body, 'payloadCurrencyFrom');
    const payloadCurrencyTo = text(body, 'payloadCurrencyTo');
    const nonce = text(body, 'nonce');
    if (!NONCE_HEX.test(nonce)) throw apiError(400, 'INVALID_REQUEST_ERROR', 'nonce must be 64 hex digits');
    const from = this.pricing.currency(currencyFrom);
    if (!from) throw apiError(404, 'CURRENCY_FROM_NOT_FOUND_ERROR', `currency ${currencyFrom} not found`);
    const to = this.pricing.currency(currencyTo);
    if (!to) throw apiError(404, 'CURRENCY_TO_NOT_FOUND_ERROR', `currency ${currencyTo} not found`);
    let quoteId: string | undefined;
    let amountFrom: Decimal;
    let priced: Priced;
    if (tradeMethod === 'fixed') {
      quoteId = text(body, 'quoteId');
      const quote = this.pricing.quoteFor(quoteId, currencyFrom, currencyTo);
      amountFrom = quote.amount;
      priced = quote.priced;
    } else {
      amountFrom = amountOf(body, 'amount');
      priced = this.pricing.floatPrice(from, to, amountFrom);
    }
    this.pricing.checkRegion(currencyFrom, currencyTo);
    if (this.options.noDepositWallet?.includes(currencyFrom)) {
      throw apiError(400, 'NO_DEPOSIT_WALLET_ERROR', `no deposit wallet for ${currencyFrom}`);
    }

    const faults = new Set<SwapFault>(this.nextSwapFaults.shift() ?? []);
    // The payload signs the quoted output whatever the creation figures say (creationFigures).
    const quoted = priced;
    priced = creationFigures(quoted, faults, to);
    const swapId = randomUUID();
    const payinAddress = freshAddress(from);
    const createdAt = this.rules.now().toISOString();
    const nonceBytes = new Uint8Array(Buffer.from(nonce, 'hex'));
    const atomicFrom = atomic(amountFrom, from);
    const atomicTo = atomic(quoted.amountTo.plus(quoted.payoutNetworkFees), to);
    const fields: SwapPayloadFields = {
      payin_address: faults.has('wrong-payin-address') ? freshAddress(from) : payinAddress,
      refund_address: faults.has('wrong-refund-address') ? `${refundAddress}x` : refundAddress,
      refund_extra_id: optionalText(body, 'refundAddressExtraId'),
      payout_address: faults.has('wrong-payout-address') ? freshAddress(to) : payoutAddress,
      payout_extra_id: optionalText(body, 'payoutAddressExtraId'),
      currency_from: faults.has('wrong-currency-from')
        ? otherId(payloadCurrencyFrom, payloadCurrencyTo)
        : payloadCurrencyFrom,
      currency_to: faults.has('wrong-currency-to')
        ? otherId(payloadCurrencyTo, payloadCurrencyFrom)
        : payloadCurrencyTo,
      amount_to_provider: faults.has('wrong-source-amount') ? atomicFrom + atomicFrom / 10n + 1n : atomicFrom,
      amount_to_wallet: faults.has('wrong-destination-amount') ? atomicTo + atomicTo / 10n + 1n : atomicTo,
      device_transaction_id_ng: faults.has('wrong-nonce') ? new Uint8Array(randomBytes(32)) : nonceBytes,
    };
    const signed = this.signer.signSwapPayload(fields);
    if (faults.has('invalid-signature')) signed.signature = corrupt(signed.signature);
    const sigField = this.options.signatureField ?? 'signature';
    const providerSig: Record<string, string> = { payload: signed.payload };
    if (sigField !== 'payload_signature') providerSig.signature = signed.signature;
    if (sigField !== 'signature') providerSig.payload_signature = signed.signature;
    const response = {
      swapId,
      payinAddress,
      createdAt,
      providerFees: formatDecimal(priced.providerFees),
      referralFees: formatDecimal(priced.referralFees),
      payoutNetworkFees: formatDecimal(priced.payoutNetworkFees),
      providerSig,
    };
    const state: SwapState = {
      swapId,
      tradeMethod,
      quoteId,
      request: { ...body },
      response,
      createdAt,
      from,
      to,
      amountFrom,
      priced,
      signed: { ...signed, fields },
      faults,
      script: [],
      step: 0,
      status: '',
      like: 'PENDING',
      fields: {
        amount: undefined,
        payinTransactionId: undefined,
        payoutTransactionId: undefined,
        providerFees: response.providerFees,
        referralFees: response.referralFees,
        payoutNetworkFees: response.payoutNetworkFees,
      },
      history: [],
    };
    this.states.set(swapId, state);
    state.script = scriptFor(this.rules, state);
    setStatus(this.rules, state, state.script[0] ?? 'PENDING');
    return response;
  }

  /** GET /status; under `advanceOn: poll` the swap first moves one step (`moved` is told). */
  status(query: Record<string, string>, moved: (swap: SwapState) => void): unknown {
    const swapId = query.swapId;
    if (!swapId) throw apiError(400, 'INVALID_REQUEST_ERROR', 'swapId is required');
    const swap = this.states.get(swapId);
    if (!swap) throw new Answer({ status: 404, body: { message: `transaction ${swapId} not found` } });
    if (this.options.progression?.advanceOn === 'poll' && stepForward(this.rules, swap)) moved(swap);
    return report(swap, this.options);
  }
}

/**
 * What the partner states at creation: the quote's figures, unless a creation fault moves them. Value hidden
 * in the network fee estimate comes out of the amount the user is to get (the partner's books balance).
 */
function creationFigures(quoted: Priced, faults: ReadonlySet<SwapFault>, to: SimCurrency): Priced {
  let priced = quoted;
  if (faults.has('network-fee-above-quote')) {
    const fee = quoted.payoutNetworkFees.times(5);
    priced = {
      ...priced,
      payoutNetworkFees: fee,
      amountTo: roundDown(quoted.amountTo.minus(fee.minus(quoted.payoutNetworkFees)), to.decimals),
    };
  }
  if (faults.has('referral-below-quote'))
    priced = { ...priced, referralFees: roundDown(quoted.referralFees.div(5), to.decimals) };
  return priced;
}

function atomic(amount: Decimal, currency: SimCurrency): bigint {
  return toAtomicUnits(roundDown(amount, currency.decimals), currency.decimals);
}

/** A fresh address of the currency's chain: valid ones where a chain source could read them (EVM, BTC, LTC). */
export function freshAddress(c: SimCurrency): string {
  if (isEvm(c)) return '0x' + randomBytes(20).toString('hex');
  // P2WPKH of a random key hash: a real address a transaction can pay (and a UTXO source read back).
  if (c.blockchain === 'bitcoin') return bech32.toBech32(randomBytes(20), 0, 'bc');
  if (c.blockchain === 'litecoin') return bech32.toBech32(randomBytes(20), 0, 'ltc');
  return `sim${c.id}` + randomBytes(16).toString('hex');
}

function otherId(id: string, other: string): string {
  return other !== id ? other : `${id}X`;
}

/** Flips one byte of R: still 64 bytes of base64url, no longer a valid signature. */
function corrupt(signature: string): string {
  const bytes = Buffer.from(signature, 'base64url');
  bytes[5] = bytes[5]! ^ 0x5a;
  return toPaddedBase64url(bytes);
}
