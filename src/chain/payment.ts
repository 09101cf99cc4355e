import type { ChainTransfer } from '../events/types.ts';
import type { ChainCurrencyDefinition } from './config.ts';
import type { TxLookup } from './lookup.ts';

/**
 * A payment made TO the platform or for it (a partner settling a referral invoice, a partner paying a user
 * the difference a case found), judged on what one look at its chain saw: confirmed at the currency's depth,
 * proven to be the transaction named, in the currency's asset, to the address expected, at least the amount
 * expected. Pure: the caller looks the transaction up and keeps this judgement, with the facts it read, in
 * the event it appends, so the fold and a replay never call a chain.
 */

export interface PaymentExpectation {
  /** The address the payment must reach (EVM addresses compared in lower case). */
  readonly to: string;
  /** Atomic units of the currency, at least. */
  readonly atLeast: bigint;
}

export type PaymentJudgement =
  | {
      readonly verified: true;
      /** Atomic units paid to the address in the asset (every such transfer of the transaction). */
      readonly paid: bigint;
      readonly confirmations: number;
      readonly block: number;
      readonly transfers: readonly ChainTransfer[];
    }
  | { readonly verified: false; readonly reason: string };

const sameAddress = (family: string, a: string, b: string) =>
  family === 'evm' ? a.toLowerCase() === b.toLowerCase() : a === b;

export function judgeChainPayment(
  txid: string,
  lookup: TxLookup,
  currency: ChainCurrencyDefinition,
  expected: PaymentExpectation,
): PaymentJudgement {
  const refuse = (reason: string): PaymentJudgement => ({ verified: false, reason: `${txid}: ${reason}` });
  switch (lookup.status) {
    case 'not_found':
      return refuse(`not found on ${currency.source.name}${lookup.detail ? ` (${lookup.detail})` : ''}`);
    case 'refused':
      return refuse(`${currency.source.name}'s answer cannot be trusted: ${lookup.detail ?? 'refused'}`);
    case 'reverted':
      return refuse('the transaction failed on the chain: it paid nothing');
    case 'pending':
      return refuse(
        `${lookup.confirmations} of the ${currency.confirmations} confirmation(s) ${currency.currency} needs: look again later`,
      );
    case 'found':
      break;
  }
  if (!lookup.proven || lookup.block === null)
    return refuse(`${currency.source.name} did not prove the transaction is the one named`);
  const to = lookup.transfers.filter(
    (t) => t.asset === currency.asset && sameAddress(currency.source.family, t.recipient, expected.to),
  );
  const paid = to.reduce((sum, t) => sum + BigInt(t.amount), 0n);
  if (to.length === 0) {
    const elsewhere = lookup.transfers.filter((t) => t.asset === currency.asset).map((t) => t.recipient);
    const asset =
      currency.asset === 'native'
        ? `native ${currency.currency}`
        : `${currency.currency} (${currency.asset})`;
    return refuse(
      `pays no ${asset} to ${expected.to}${elsewhere.length ? `; it pays ${elsewhere.slice(0, 3).join(', ')}` : ''}${lookup.contractCall && currency.asset === 'native' ? '; a contract call, whose internal native moves are not visible' : ''}`,
    );
  }
  if (paid < expected.atLeast)
    return refuse(
      `pays ${paid} atomic units of ${currency.currency} to ${expected.to}, short of the ${expected.atLeast} expected`,
    );
  return { verified: true, paid, confirmations: lookup.confirmations, block: lookup.block, transfers: to };
}
