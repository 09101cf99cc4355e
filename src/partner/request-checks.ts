import { isDecimalText, parseDecimal } from '../money/decimal.ts';
import { partnerTextProblem } from '../swap/text.ts';
import { PartnerRequestError } from './errors.ts';
import type { PartnerOperation, SwapRequestFixed, SwapRequestFloat } from './types.ts';

/** The client's checks of what it is about to send: a bad request is refused here, never sent. */

const NONCE_HEX = /^[0-9a-fA-F]{64}$/;

export function requireText(
  provider: string,
  op: PartnerOperation,
  o: Record<string, unknown>,
  keys: readonly string[],
): void {
  for (const k of keys) {
    const v = o[k];
    if (typeof v !== 'string' || v.trim() === '') {
      throw new PartnerRequestError(provider, op, k, 'must be a non-empty string');
    }
    requirePrintable(provider, op, k, v);
  }
}

export function requirePrintable(provider: string, op: PartnerOperation, field: string, v: string): void {
  const problem = partnerTextProblem(v);
  if (problem !== undefined) throw new PartnerRequestError(provider, op, field, problem);
}

export function requireAmount(provider: string, op: PartnerOperation, field: string, v: unknown): void {
  if (!isDecimalText(v)) throw new PartnerRequestError(provider, op, field, 'must be a decimal string');
  if (!parseDecimal(v).gt(0)) throw new PartnerRequestError(provider, op, field, 'must be above zero');
}

export function checkSwapRequest(
  provider: string,
  op: PartnerOperation,
  r: SwapRequestFixed | SwapRequestFloat,
): void {
  const o = r as unknown as Record<string, unknown>;
  requireText(provider, op, o, [
    'refundAddress',
    'payoutAddress',
    'currencyFrom',
    'currencyTo',
    'payloadCurrencyFrom',
    'payloadCurrencyTo',
  ]);
  // The nonce becomes device_transaction_id_ng: exactly 32 bytes.
  if (typeof r.nonce !== 'string' || !NONCE_HEX.test(r.nonce)) {
    throw new PartnerRequestError(provider, op, 'nonce', 'must be 64 hex digits (32 bytes)');
  }
  for (const k of ['refundAddressExtraId', 'payoutAddressExtraId'] as const) {
    const v = r[k];
    if (v !== undefined && typeof v !== 'string') {
      throw new PartnerRequestError(provider, op, k, 'must be a string');
    }
    if (v !== undefined) requirePrintable(provider, op, k, v);
  }
  if (r.slippage !== undefined) {
    if (!isDecimalText(r.slippage) || parseDecimal(r.slippage).lt(0) || parseDecimal(r.slippage).gt(1)) {
      throw new PartnerRequestError(provider, op, 'slippage', 'must be a decimal ratio from 0 to 1');
    }
  }
}
