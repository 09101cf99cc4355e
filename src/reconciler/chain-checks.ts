// Over 400 lines: the four chain checks share the outcome and role tables, the signed side, the atomic
// reading and the observation lookup; apart, each of those would be exported for one caller.
import type { ChainRole, ChainTransfer } from '../events/types.ts';
import type { DecodedSwapPayload } from '../payload/index.ts';
import { sameAddress } from '../swap/chain-transfer.ts';
import { check, HASH_FIELD, TRANSACTIONS_OF, type Outcome, type RuledOutcome } from './inputs.ts';
import { DEFAULT_CHAIN_POLICY, type ChainPolicy } from './policy.ts';
import type {
  ChainEvidence,
  ChainObservation,
  FinalReport,
  ReconciledCheck,
  ReconciliationInput,
  SwapCreationFacts,
} from './types.ts';

export { sameAddress };

/**
 * The chain is the last witness (DESIGN "The chain is the last witness"): the payin, payout and refund
 * transactions the partner reports, as the chain watcher saw them (ChainTransactionObserved, folded into
 * chain_observations and chain_claims). Pure: the observations are data, the watcher took every decision that
 * needs a clock or a chain (depth needed, deadline passed). No verdict waits for the chain: until the deadline, a
 * missing or shallow transaction is UNVERIFIABLE "awaiting the chain", never a MISMATCH; an observation arriving
 * later queues the swap again.
 *
 *  chain.payin  (FINISHED, REFUNDED): pays the signed payin address at least the signed source amount; a
 *               short payin is the user's shortfall, named so.
 *  chain.payout (FINISHED): confirmed, pays the signed payout address, in the right asset, at least the
 *               amount the partner reported.
 *  chain.refund (REFUNDED): confirmed, pays the signed refund address in the right asset at least the signed
 *               source amount less the currency's refund network-fee allowance; never the payin's or the
 *               payout's own transaction.
 *  Each of them: a transfer already claimed by another (swap, role) is MISMATCH "already evidences <swap>"
 *               (one transfer, one claim); one mined before the swap's creation, less the clock allowance, is
 *               MISMATCH "predates the swap"; a source's refused answer, or a transaction unconfirmed, past the
 *               deadline is UNVERIFIABLE "source unreliable" / "unconfirmed past the deadline".
 *  chain.network_fee (FINISHED, native payout): the reported payout network fee against the fee the payout
 *               transaction spent, shared equally by the swaps claiming its transfers; above it: MISMATCH.
 * NOT_APPLICABLE where the outcome has no such transaction (EXPIRED, a FINISHED swap's refund…).
 */

const ROLES: readonly ChainRole[] = ['payin', 'payout', 'refund'];

/** The roles of the transactions a ruled outcome has (TRANSACTIONS_OF, which the hash checks read too). */
const present = (outcome: RuledOutcome) => ROLES.filter((r) => TRANSACTIONS_OF[outcome][r] === 'present');

/**
 * What each outcome has on a chain: the roles of its transactions and whether it pays a payout network fee.
 * One with no transaction says why (`none`) in each of its role's checks.
 */
const CHAIN_RULES: Record<
  Outcome,
  { roles: readonly ChainRole[]; networkFee?: true; none?: (input: ReconciliationInput) => string }
> = {
  FINISHED: { roles: present('FINISHED'), networkFee: true },
  REFUNDED: { roles: present('REFUNDED') },
  EXPIRED: {
    roles: present('EXPIRED'),
    none: () => 'an expired swap moves no money: nothing to look up on a chain',
  },
  open: { roles: [], none: () => 'the swap has not ended: its transactions are judged when it does' },
  unruled: { roles: [], none: (input) => `no chain rule for final status ${input.final.status}` },
};

/** The side of the swap a role's transfers pay. */
type Side = { currency: string; address: string; extraId: string | null };
/** The amount a role's transfers are held to, atomic; undefined (the text says why) where nothing holds it. */
type Floor = { floor: bigint | undefined; floorText: string } | { unreadable: string };
const NO_SIGNED_AMOUNT: Floor = {
  floor: undefined,
  floorText: 'no signed source amount: only the address and the asset are checked',
};

/**
 * What differs between the roles, so that one check takes the same steps for each: the side it pays (currency,
 * address, extra id), the amount its transfers are held to (atomic units at `decimals`) and the words of a
 * payment short of it, and the refund's own rule.
 */
const ROLE_RULES: Record<
  ChainRole,
  {
    side: (creation: SwapCreationFacts, decoded: DecodedSwapPayload | undefined) => Side;
    floor: (input: ReconciliationInput, currency: string, decimals: number, policy: ChainPolicy) => Floor;
    short: (short: string, floorText: string) => string;
    reused?: (final: FinalReport) => 'payin' | 'payout' | undefined;
  }
> = {
  payin: {
    side: ({ request, payinAddress }, decoded) => ({
      currency: decoded?.currency_from || request.payloadCurrencyFrom,
      address: decoded?.payin_address || payinAddress,
      extraId: decoded?.payin_extra_id || null,
    }),
    floor: (input) => {
      const signed = input.inspection.decoded?.amount_to_provider;
      return signed === undefined ? NO_SIGNED_AMOUNT : { floor: signed, floorText: '' };
    },
    short: (short) =>
      `short payin: the user sent ${short} atomic units less than the signed source amount (the user's shortfall, not the partner's)`,
  },
  payout: {
    side: ({ request }, decoded) => ({
      currency: decoded?.currency_to || request.payloadCurrencyTo,
      address: decoded?.payout_address || request.payoutAddress,
      extraId: decoded?.payout_extra_id || request.payoutAddressExtraId || null,
    }),
    floor: (input, _currency, decimals) => {
      const reported = input.final.amount;
      if (blank(reported))
        return {
          floor: undefined,
          floorText: 'no reported amount: only the address and the asset are checked',
        };
      const a = atomicOf(reported, decimals);
      return typeof a === 'string' ? { unreadable: a } : { floor: a, floorText: '' };
    },
    short: (short) => `the payout pays ${short} atomic units less than the partner reported`,
  },
  refund: {
    side: ({ request }, decoded) => ({
      currency: decoded?.currency_from || request.payloadCurrencyFrom,
      address: decoded?.refund_address || request.refundAddress,
      extraId: decoded?.refund_extra_id || request.refundAddressExtraId || null,
    }),
    // A refund gives the payin back: it is held to the signed source amount, less its allowance.
    floor: (input, currency, decimals, policy) => {
      const signed = input.inspection.decoded?.amount_to_provider;
      if (signed === undefined) return NO_SIGNED_AMOUNT;
      const allowance = policy.refundFeeAllowance[currency.toUpperCase()];
      const a =
        allowance === undefined ? 0n : atomicOf(allowance.toFixed(), decimals, 'the refund fee allowance');
      if (typeof a === 'string') return { unreadable: a };
      return {
        floor: signed > a ? signed - a : 0n,
        floorText: `the signed payin ${signed} less the refund network-fee allowance ${a}`,
      };
    },
    short: (short, floorText) => `short refund: the refund pays ${short} atomic units less than ${floorText}`,
    reused: refundReusedHash,
  },
};

/** A role's side as signed (or as asked for, where the payload does not decode). */
const sideOf = (input: ReconciliationInput, role: ChainRole): Side =>
  ROLE_RULES[role].side(input.creation, input.inspection.decoded);

const sameHash = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

/**
 * Which of the swap's own transactions a reported refund hash is (payin or payout), or undefined: a swap's
 * payin or payout is never its refund, whatever a chain says (hash.refund and chain.refund both judge it).
 */
export function refundReusedHash(final: FinalReport): 'payin' | 'payout' | undefined {
  const refund = final.refundTransactionId;
  if (!refund || refund.trim() === '') return undefined;
  for (const role of ['payin', 'payout'] as const) {
    const other = final[HASH_FIELD[role]];
    if (other && other.trim() !== '' && sameHash(refund, other)) return role;
  }
  return undefined;
}

/** Atomic units of a decimal amount at `decimals`, or why not (a fraction finer than the unit: no rounding). */
function atomicOf(amount: string, decimals: number, what = 'the reported amount'): bigint | string {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(amount.trim());
  if (!m) return `${what} ${JSON.stringify(amount)} is not a decimal`;
  const fraction = m[2] ?? '';
  if (fraction.length > decimals && /[^0]/.test(fraction.slice(decimals)))
    return `${what} ${amount} has more than ${decimals} decimals: comparing it would need rounding`;
  return BigInt(m[1]! + fraction.slice(0, decimals).padEnd(decimals, '0'));
}

/** The latest observation of the reported transaction for the role (by observation order given). */
function observationOf(chain: ChainEvidence, role: ChainRole, txid: string): ChainObservation | undefined {
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

const blank = (v: string | null | undefined): v is null | undefined =>
  v === null || v === undefined || v.trim() === '';

/** One role's check, for an outcome that has a transaction of that role: the same steps for each role. */
function chainCheck(input: ReconciliationInput, role: ChainRole, policy: ChainPolicy): ReconciledCheck {
  const name = `chain.${role}`;
  const chain = input.chain!;
  const rules = ROLE_RULES[role];
  const side = sideOf(input, role);
  const txid = input.final[HASH_FIELD[role]];
  const memoNote =
    side.extraId || chain.memos?.includes(side.currency)
      ? `; the extra id (memo${side.extraId ? ` ${side.extraId}` : ''}) could not be seen on the chain: not checked`
      : '';
  const addressNote =
    input.inspection.decoded !== undefined
      ? ''
      : ' (the payload does not decode: the address asked for, not a signed one)';
  if (blank(txid))
    return check(name, 'UNVERIFIABLE', {
      detail: `no ${role} transaction reported: nothing to look up (hash.${role} judges its absence)`,
    });
  const reused = rules.reused?.(input.final);
  if (reused)
    return check(name, 'MISMATCH', {
      expected: `a refund transaction to ${side.address}`,
      actual: txid,
      detail: `the refund hash is the swap's own ${reused} transaction: a ${reused} is not a refund`,
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
  if (o.status === 'refused')
    return check(name, 'UNVERIFIABLE', {
      expected: expected(),
      actual: `${txid}: the source's answer was refused`,
      detail: o.deadlinePassed
        ? `source unreliable: ${o.source} answered with something that cannot be ${txid} past the deadline (${o.detail ?? 'no detail'}; observed ${o.observedAt})`
        : `awaiting the chain: ${o.source} answered with something that cannot be ${txid} (${o.detail ?? 'no detail'}); looked up again until the deadline`,
    });
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
  const taken = (chain.claims ?? []).filter((c) => c.role === role && c.txid === txid && c.heldBy !== null);
  const claimedFirst =
    taken.length > 0
      ? `the ${role} transaction's transfer already evidences ${[...new Set(taken.map((c) => c.heldBy))].join(', ')} (transfer ${taken.map((c) => c.transfer).join(', ')} of ${txid}, claimed first): one transfer, one claim`
      : undefined;
  const created = Date.parse(input.creation.createdAt);
  if (!blank(o.blockTime) && Number.isFinite(created)) {
    const earliest = created - policy.clockAllowanceSeconds * 1000;
    if (Date.parse(o.blockTime) < earliest) {
      const predates = `the ${role} transaction predates the swap: mined at ${o.blockTime}, the swap was created at ${input.creation.createdAt} (${seen(o)})`;
      // Both facts are said where both hold: which comes first in the text depends on no timing.
      return check(name, 'MISMATCH', {
        expected: `${expected()}, mined after ${input.creation.createdAt} (less ${policy.clockAllowanceSeconds} s of clock allowance)`,
        actual: `${txid} mined at ${o.blockTime}`,
        detail: claimedFirst ? `${claimedFirst}; and ${predates}` : predates,
      });
    }
  }
  const toAddress = o.transfers.filter((t) => sameAddress(o.family, t.recipient, side.address));
  const inAsset = toAddress.filter((t) => t.asset === o.asset);
  const paid = sum(inAsset);
  const held = rules.floor(input, side.currency, o.decimals, policy);
  if ('unreadable' in held)
    return check(name, 'UNVERIFIABLE', {
      expected: expected(),
      actual: `${paid} paid`,
      detail: held.unreadable,
    });
  const { floor, floorText } = held;
  const exp = expected(floor?.toString());
  const actual = `${paid.toString()} atomic units of ${expectedAsset} to ${side.address} in ${txid}`;
  if (toAddress.length === 0 || inAsset.length === 0) {
    if (o.asset === 'native' && o.contractCall && toAddress.length === 0)
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
  if (claimedFirst)
    return check(name, 'MISMATCH', {
      expected: `${exp}, a transfer no other swap cites`,
      actual,
      detail: claimedFirst,
    });
  if (floor !== undefined && paid < floor) {
    const short = (floor - paid).toString();
    return check(name, 'MISMATCH', {
      expected: exp,
      actual,
      delta: `-${short}`,
      detail: `${rules.short(short, floorText)}${memoNote}`,
    });
  }
  if (o.status === 'pending' || o.confirmations < o.requiredConfirmations)
    return check(name, 'UNVERIFIABLE', {
      expected: exp,
      actual,
      detail: o.deadlinePassed
        ? `unconfirmed past the deadline: ${o.confirmations} of ${o.requiredConfirmations} confirmations (${seen(o)})${memoNote}`
        : `awaiting the chain: ${o.confirmations} of ${o.requiredConfirmations} confirmations${memoNote}`,
    });
  return check(name, 'MATCHED', {
    expected: exp,
    actual,
    ...(floor !== undefined && paid > floor ? { delta: `+${(paid - floor).toString()}` } : {}),
    detail: `${seen(o)}${floorText ? `; ${floorText}` : ''}${memoNote}`,
  });
}

/**
 * chain.network_fee: a FINISHED swap's reported payout network fee against the fee its payout transaction
 * spent, where that fee is in the payout's own asset (a native payout). A transaction paying several swaps (a
 * batch) spent its fee for all: each swap claiming one of its transfers bears an equal share, fee ÷ claimants
 * (outputs no swap claims, change or the partner's other customers, bear none: a single payout with change
 * bears the whole fee). Compared exactly (reported × claimants against the fee); the one case where the verdict
 * would depend on how the share rounds (the reported fee is the share rounded up) is UNVERIFIABLE.
 * Directional: a reported fee above the share is the user's disfavour (MISMATCH); below it, the partner's.
 */
function networkFeeCheck(input: ReconciliationInput): ReconciledCheck {
  const name = 'chain.network_fee';
  const chain = input.chain!;
  const side = sideOf(input, 'payout');
  const txid = input.final.payoutTransactionId;
  if (blank(txid)) return check(name, 'UNVERIFIABLE', { detail: 'no payout transaction reported' });
  if (!chain.sourced.includes(side.currency))
    return check(name, 'UNVERIFIABLE', { actual: txid, detail: `no chain source for ${side.currency}` });
  const o = observationOf(chain, 'payout', txid);
  if (!o || !o.proven || (o.status !== 'found' && o.status !== 'pending'))
    return check(name, 'UNVERIFIABLE', {
      actual: txid,
      detail: `awaiting the chain: the fee ${txid} spent is not known yet`,
    });
  if (o.asset !== 'native')
    return check(name, 'NOT_APPLICABLE', {
      detail: `a token payout (${o.asset}): its fee is spent in ${o.chain}'s native asset, not the payout's`,
    });
  if (blank(o.fee))
    return check(name, 'UNVERIFIABLE', {
      actual: txid,
      detail: `the fee ${txid} spent is not known (${seen(o)})`,
    });
  const reportedText = input.final.payoutNetworkFees;
  if (blank(reportedText)) return check(name, 'UNVERIFIABLE', { detail: 'no payout network fee reported' });
  const reported = atomicOf(reportedText, o.decimals, 'the reported payout network fee');
  if (typeof reported === 'string') return check(name, 'UNVERIFIABLE', { detail: reported });
  const fee = BigInt(o.fee);
  const claimants = Math.max(
    1,
    ...(chain.claims ?? []).filter((c) => c.role === 'payout' && c.txid === txid).map((c) => c.claimants),
  );
  const n = BigInt(claimants);
  const share = claimants === 1 ? `${fee}` : `${fee} ÷ ${claimants} swaps`;
  const expected = `at most ${share} atomic units of native ${side.currency} (the fee ${txid} spent${claimants === 1 ? '' : ', shared by the swaps it pays'})`;
  const actual = `${reported} atomic units reported`;
  if (reported * n <= fee)
    return check(name, 'MATCHED', {
      expected,
      actual,
      ...(reported * n < fee && fee % n === 0n ? { delta: `-${fee / n - reported}` } : {}),
      detail:
        reported * n === fee
          ? `the reported payout network fee is the fee the transaction spent (${seen(o)})`
          : `the reported payout network fee is below the fee spent: the partner's cost, not the user's (${seen(o)})`,
    });
  if (fee % n !== 0n && reported === fee / n + 1n)
    return check(name, 'UNVERIFIABLE', {
      expected,
      actual,
      detail: `the share ${share} is not a whole atomic unit and the reported fee is it rounded up: comparing would need rounding`,
    });
  return check(name, 'MISMATCH', {
    expected,
    actual,
    ...(fee % n === 0n ? { delta: `+${reported - fee / n}` } : {}),
    detail: `the partner reported a payout network fee above the fee the payout transaction spent (${share}): the user paid for more than the chain charged`,
  });
}

/**
 * The chain checks of a swap, in this order: chain.payin, chain.payout, chain.refund, chain.network_fee. None
 * without evidence (no chain source configured at all).
 */
export function chainChecks(
  input: ReconciliationInput,
  outcome: Outcome,
  policy: ChainPolicy = DEFAULT_CHAIN_POLICY,
): ReconciledCheck[] {
  if (!input.chain) return [];
  const rules = CHAIN_RULES[outcome];
  const notApplicable = (name: string, detail: string) => check(name, 'NOT_APPLICABLE', { detail });
  return [
    ...ROLES.map((role) =>
      rules.roles.includes(role)
        ? chainCheck(input, role, policy)
        : notApplicable(
            `chain.${role}`,
            rules.none?.(input) ?? `a ${outcome} swap has no ${role} transaction`,
          ),
    ),
    rules.networkFee
      ? networkFeeCheck(input)
      : notApplicable('chain.network_fee', 'only a finished swap pays a payout network fee'),
  ];
}
