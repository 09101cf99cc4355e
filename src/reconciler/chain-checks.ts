import type { ChainTransfer } from '../events/types.ts';
import { check, type Outcome } from './inputs.ts';
import type { ChainEvidence, ChainObservation, ReconciledCheck, ReconciliationInput } from './types.ts';

/**
 * The chain is the last witness (DESIGN "Reconciliation rules", last point): the payin, payout and refund
 * transactions the partner reports, as the chain watcher saw them (ChainTransactionObserved, folded into
 * chain_observations). Pure: the observations are data, the watcher took every decision that needs a clock
 * or a chain (depth needed, deadline passed). No verdict waits for the chain: until the deadline, a missing
 * or shallow transaction is UNVERIFIABLE "awaiting the chain", never a MISMATCH; an observation arriving
 * later queues the swap again.
 *
 *  chain.payin  (FINISHED, REFUNDED): pays the signed payin address at least the signed source amount; a
 *               short payin is the user's shortfall, named so.
 *  chain.payout (FINISHED): confirmed, pays the signed payout address, in the right asset, at least the
 *               amount the partner reported.
 *  chain.refund (REFUNDED): confirmed, pays the signed refund address in the right asset.
 * NOT_APPLICABLE where the outcome has no such transaction (EXPIRED, a FINISHED swap's refund…).
 */

type Role = 'payin' | 'payout' | 'refund';

/** The marker a contract call's observation carries (src/chain/lookup.ts CONTRACT_CALL_NOTE). */
const CONTRACT_CALL_NOTE = 'a contract call';

const HASH_FIELD = {
  payin: 'payinTransactionId',
  payout: 'payoutTransactionId',
  refund: 'refundTransactionId',
} as const;

/** Which roles each outcome has a transaction for. */
const ROLES_OF: Record<'FINISHED' | 'REFUNDED', readonly Role[]> = {
  FINISHED: ['payin', 'payout'],
  REFUNDED: ['payin', 'refund'],
};

/** EVM addresses are case-insensitive (the checksum is in the case); bech32 too; base58 is not. */
export function sameAddress(family: string, a: string, b: string): boolean {
  const x = a.trim();
  const y = b.trim();
  if (family === 'evm' || /^[a-z0-9]+1[02-9ac-hj-np-z]+$/i.test(x))
    return x.toLowerCase() === y.toLowerCase();
  return x === y;
}

/** The signed side of the swap for a role: its currency, address, extra id and amount (atomic, if signed). */
function signedSide(input: ReconciliationInput, role: Role) {
  const { request, payinAddress } = input.creation;
  const decoded = input.inspection.decoded;
  const signed = decoded !== undefined;
  const from = decoded?.currency_from || request.payloadCurrencyFrom;
  const to = decoded?.currency_to || request.payloadCurrencyTo;
  switch (role) {
    case 'payin':
      return {
        currency: from,
        address: decoded?.payin_address || payinAddress,
        extraId: decoded?.payin_extra_id || null,
        amount: decoded ? decoded.amount_to_provider : undefined,
        signed,
      };
    case 'payout':
      return {
        currency: to,
        address: decoded?.payout_address || request.payoutAddress,
        extraId: decoded?.payout_extra_id || request.payoutAddressExtraId || null,
        amount: undefined,
        signed,
      };
    case 'refund':
      return {
        currency: from,
        address: decoded?.refund_address || request.refundAddress,
        extraId: decoded?.refund_extra_id || request.refundAddressExtraId || null,
        amount: undefined,
        signed,
      };
  }
}

/** Atomic units of a decimal amount at `decimals`, or why not (a fraction finer than the unit: no rounding). */
function atomicOf(amount: string, decimals: number): bigint | string {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(amount.trim());
  if (!m) return `the reported amount ${JSON.stringify(amount)} is not a decimal`;
  const fraction = m[2] ?? '';
  if (fraction.length > decimals && /[^0]/.test(fraction.slice(decimals)))
    return `the reported amount ${amount} has more than ${decimals} decimals: comparing it would need rounding`;
  return BigInt(m[1]! + fraction.slice(0, decimals).padEnd(decimals, '0'));
}

/** The latest observation of the reported transaction for the role (by observation order given). */
function observationOf(chain: ChainEvidence, role: Role, txid: string): ChainObservation | undefined {
  let found: ChainObservation | undefined;
  for (const o of chain.observations) if (o.role === role && o.txid === txid) found = o;
  return found;
}

const sum = (transfers: readonly ChainTransfer[]) => transfers.reduce((s, t) => s + BigInt(t.amount), 0n);

function seen(o: ChainObservation): string {
  const depth = `${o.confirmations}/${o.requiredConfirmations} confirmations`;
  const where = o.block === null ? '' : ` in block ${o.block}`;
  return `${o.status} on ${o.chain}${where}, ${depth} (${o.source}, observed ${o.observedAt})`;
}

function chainCheck(input: ReconciliationInput, outcome: Outcome, role: Role): ReconciledCheck {
  const name = `chain.${role}`;
  const chain = input.chain!;
  if (outcome !== 'FINISHED' && outcome !== 'REFUNDED')
    return check(name, 'NOT_APPLICABLE', {
      detail:
        outcome === 'EXPIRED'
          ? 'an expired swap moves no money: nothing to look up on a chain'
          : outcome === 'open'
            ? 'the swap has not ended: its transactions are judged when it does'
            : `no chain rule for final status ${input.final.status}`,
    });
  if (!ROLES_OF[outcome].includes(role))
    return check(name, 'NOT_APPLICABLE', { detail: `a ${outcome} swap has no ${role} transaction` });
  const side = signedSide(input, role);
  const txid = input.final[HASH_FIELD[role]];
  const memoNote =
    side.extraId || chain.memos?.includes(side.currency)
      ? `; the extra id (memo${side.extraId ? ` ${side.extraId}` : ''}) could not be seen on the chain: not checked`
      : '';
  const addressNote = side.signed
    ? ''
    : ' (the payload does not decode: the address asked for, not a signed one)';
  if (!txid || txid.trim() === '')
    return check(name, 'UNVERIFIABLE', {
      detail: `no ${role} transaction reported: nothing to look up (hash.${role} judges its absence)`,
    });
  if (!chain.sourced.includes(side.currency))
    return check(name, 'UNVERIFIABLE', { actual: txid, detail: `no chain source for ${side.currency}` });
  const o = observationOf(chain, role, txid);
  if (!o)
    return check(name, 'UNVERIFIABLE', {
      actual: txid,
      detail: `awaiting the chain: ${role} ${txid} not observed yet`,
    });
  const expectedAsset =
    o.asset === 'native' ? `native ${side.currency}` : `token ${o.asset} (${side.currency})`;
  const expected = (amount?: string) =>
    `${amount ? `${amount} atomic units of ` : ''}${expectedAsset} to ${side.address}${addressNote}, ${o.requiredConfirmations} confirmations`;
  if (o.status === 'not_found')
    return o.deadlinePassed
      ? check(name, 'MISMATCH', {
          expected: expected(),
          actual: `${txid}: not on ${o.chain}`,
          detail: `the reported ${role} transaction was not found on the chain by the deadline (${seen(o)})`,
        })
      : check(name, 'UNVERIFIABLE', {
          expected: expected(),
          actual: `${txid}: not found yet`,
          detail: `awaiting the chain: not found yet, looked up until the deadline (${seen(o)})`,
        });
  if (o.status === 'reverted')
    return check(name, 'MISMATCH', {
      expected: expected(),
      actual: `${txid}: reverted`,
      detail: `the ${role} transaction failed on the chain (status 0): it paid nothing (${seen(o)})`,
    });
  if (!o.proven)
    return check(name, 'UNVERIFIABLE', {
      actual: txid,
      detail: `awaiting the chain: the transaction is not proven to be ${txid} yet (${seen(o)})`,
    });
  const toAddress = o.transfers.filter((t) => sameAddress(o.family, t.recipient, side.address));
  const inAsset = toAddress.filter((t) => t.asset === o.asset);
  const paid = sum(inAsset);
  // The amount the transfers are held to: the payout, what the partner reported; the payin, what was signed.
  let floor: bigint | undefined;
  let floorText = '';
  if (role === 'payout') {
    const reported = input.final.amount;
    if (reported === null || reported === undefined || reported.trim() === '')
      floorText = 'no reported amount: only the address and the asset are checked';
    else {
      const a = atomicOf(reported, o.decimals);
      if (typeof a === 'string')
        return check(name, 'UNVERIFIABLE', { expected: expected(), actual: `${paid} paid`, detail: a });
      floor = a;
    }
  } else if (role === 'payin') {
    if (side.amount === undefined)
      floorText = 'no signed source amount: only the address and the asset are checked';
    else floor = side.amount;
  }
  const exp = expected(floor?.toString());
  const actual = `${paid.toString()} atomic units of ${expectedAsset} to ${side.address} in ${txid}`;
  if (toAddress.length === 0 || inAsset.length === 0) {
    if (o.asset === 'native' && o.detail?.includes(CONTRACT_CALL_NOTE) && toAddress.length === 0)
      return check(name, 'UNVERIFIABLE', {
        expected: exp,
        actual,
        detail: `${txid} is a contract call: native value it moved internally is not visible over the standard JSON-RPC${memoNote}`,
      });
    const elsewhere =
      o.transfers.map((t) => `${t.amount} ${t.asset} to ${t.recipient}`).join('; ') || 'nothing';
    return check(name, 'MISMATCH', {
      expected: exp,
      actual,
      detail:
        toAddress.length === 0
          ? `the ${role} transaction does not pay the signed ${role} address: it pays ${elsewhere}`
          : `the ${role} transaction pays the address in another asset than ${expectedAsset}: ${elsewhere}`,
    });
  }
  if (floor !== undefined && paid < floor) {
    const short = (floor - paid).toString();
    return check(name, 'MISMATCH', {
      expected: exp,
      actual,
      delta: `-${short}`,
      detail:
        role === 'payin'
          ? `short payin: the user sent ${short} atomic units less than the signed source amount (the user's shortfall, not the partner's)${memoNote}`
          : `the payout pays ${short} atomic units less than the partner reported${memoNote}`,
    });
  }
  if (o.status === 'pending' || o.confirmations < o.requiredConfirmations)
    return check(name, 'UNVERIFIABLE', {
      expected: exp,
      actual,
      detail: `awaiting the chain: ${o.confirmations} of ${o.requiredConfirmations} confirmations${
        o.deadlinePassed ? ' (still unconfirmed after the deadline)' : ''
      }${memoNote}`,
    });
  return check(name, 'MATCHED', {
    expected: exp,
    actual,
    ...(floor !== undefined && paid > floor ? { delta: `+${(paid - floor).toString()}` } : {}),
    detail: `${seen(o)}${floorText ? `; ${floorText}` : ''}${memoNote}`,
  });
}

/** The chain checks of a swap, in this order: chain.payin, chain.payout, chain.refund. None without evidence. */
export function chainChecks(input: ReconciliationInput, outcome: Outcome): ReconciledCheck[] {
  if (!input.chain) return [];
  return (['payin', 'payout', 'refund'] as const).map((role) => chainCheck(input, outcome, role));
}
