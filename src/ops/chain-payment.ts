import type pg from 'pg';
import { chainClients, ChainSourceError, type ChainClient, type ChainSources } from '../chain/index.ts';
import { judgeChainPayment, type PaymentExpectation, type PaymentJudgement } from '../chain/payment.ts';
import { toAtomicUnits } from '../money/atomic.ts';
import { isDecimalText } from '../money/decimal.ts';
import { loadCase } from './cases.ts';
import { OperatorInputError } from './operator-events.ts';

/**
 * Payments an operator names by their transaction (a partner paying a case's difference to the user, or a
 * referral invoice to the platform), looked up on the chain sources the chain watcher uses and judged
 * (src/chain/payment.ts) before anything is appended: a payment the chain does not show as named is refused
 * with why, and a verified one travels in the event with what the chain showed.
 */

export interface ChainAccess {
  readonly sources: ChainSources;
  /** By source name; chainClients(sources) unless given (tests, the demo). */
  readonly clients?: ReadonlyMap<string, ChainClient>;
}

/** Looks `txid` up on the currency's source and judges it against what the payment must be. */
export async function lookUpPayment(
  chain: ChainAccess,
  currencyId: string,
  txid: string,
  expected: PaymentExpectation,
): Promise<PaymentJudgement> {
  const currency = chain.sources.currencies.get(currencyId);
  if (!currency)
    throw new OperatorInputError(
      `no chain source for ${currencyId.slice(0, 40)} in CHAIN_SOURCES_FILE: a payment in it can only be recorded by --reference`,
    );
  const client = (chain.clients ?? chainClients(chain.sources)).get(currency.source.name)!;
  try {
    return judgeChainPayment(txid, await client.lookup(txid, currency), currency, expected);
  } catch (e) {
    if (e instanceof ChainSourceError)
      throw new OperatorInputError(
        `${currency.source.name} did not answer for ${txid}: ${e.message}; try again`,
      );
    throw e;
  }
}

/** The judgement as the event keeps it: one line, every figure the check read. */
export function verifiedText(
  currencyId: string,
  expected: PaymentExpectation,
  j: PaymentJudgement & { verified: true },
) {
  return `paid ${j.paid} atomic units of ${currencyId} to ${expected.to} (at least ${expected.atLeast} expected), block ${j.block}, ${j.confirmations} confirmation(s)`;
}

/**
 * A case's `partner_paid` by transaction: the transaction must pay the swap's payout address at least the
 * amount at stake, in the stake's currency. Returns the reference and the chain's word for the CaseActed.
 */
export async function verifyCasePayment(
  pool: pg.Pool,
  chain: ChainAccess,
  ref: { providerId: string; swapId: string },
  txid: string,
): Promise<{ reference: string; verified: string }> {
  const c = await loadCase(pool, ref);
  if (!c) throw new OperatorInputError(`no case for ${ref.providerId}/${ref.swapId}`);
  if (!c.amountAtStake || !c.stakeCurrency)
    throw new OperatorInputError(
      'the case names no amount at stake: nothing to verify a payment against; record it by --reference',
    );
  const swap = await pool.query<{ payout_address: string | null }>(
    'select payout_address from swaps where provider_id = $1 and swap_id = $2',
    [ref.providerId, ref.swapId],
  );
  const to = swap.rows[0]?.payout_address;
  if (!to) throw new OperatorInputError('the swap has no payout address to verify a payment to');
  const decimals = chain.sources.currencies.get(c.stakeCurrency)?.decimals;
  if (decimals === undefined)
    throw new OperatorInputError(
      `no chain source for ${c.stakeCurrency} in CHAIN_SOURCES_FILE: a payment in it can only be recorded by --reference`,
    );
  const expected = { to, atLeast: toAtomicUnits(c.amountAtStake.replace(/^-/, ''), decimals) };
  const j = await lookUpPayment(chain, c.stakeCurrency, txid, expected);
  if (!j.verified) throw new OperatorInputError(`the payment is not verified: ${j.reason}`);
  return { reference: txid, verified: verifiedText(c.stakeCurrency, expected, j) };
}

/**
 * A payment to one of the platform's own addresses (a referral invoice's settlement): the transaction must pay
 * `to` at least `amount` (decimal text) of the currency. Returns the chain's word for the event.
 */
export async function verifyPaymentTo(
  chain: ChainAccess,
  currencyId: string,
  txid: string,
  to: string,
  amount: string | undefined,
): Promise<string> {
  const decimals = chain.sources.currencies.get(currencyId)?.decimals;
  if (decimals === undefined)
    throw new OperatorInputError(
      `no chain source for ${currencyId.slice(0, 40)} in CHAIN_SOURCES_FILE: record the payment by its bank or other reference`,
    );
  if (!isDecimalText(amount) || amount.startsWith('-'))
    throw new OperatorInputError(`--amount must be a positive decimal, got "${String(amount).slice(0, 40)}"`);
  let atLeast: bigint;
  try {
    atLeast = toAtomicUnits(amount, decimals);
  } catch {
    throw new OperatorInputError(`--amount ${amount} has more decimals than ${currencyId}'s ${decimals}`);
  }
  const expected = { to, atLeast };
  const j = await lookUpPayment(chain, currencyId, txid, expected);
  if (!j.verified) throw new OperatorInputError(`the payment is not verified: ${j.reason}`);
  return verifiedText(currencyId, expected, j);
}
