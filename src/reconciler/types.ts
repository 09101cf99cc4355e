import type { ChainRole, ChainTransfer, ReconciliationCheck } from '../events/types.ts';
import type { DecimalsLookup } from '../money/currencies.ts';
import type { PayloadInspection, SwapRequestFields } from '../payload/index.ts';

/**
 * A swap's verdict, and a check's. MATCHED: equal. WITHIN_TOLERANCE: different, but inside what was agreed
 * (slippage) or configured (fee tolerance). MISMATCH: the data proves a discrepancy.
 * UNVERIFIABLE: the check could not be made (missing data, unknown currency magnitude, no key...).
 */
export type Verdict = 'MATCHED' | 'WITHIN_TOLERANCE' | 'UNVERIFIABLE' | 'MISMATCH';

/**
 * A check's verdict: a Verdict, or NOT_APPLICABLE when the check has no meaning for the swap's outcome (the
 * partner-side amount of a refund). Shown, never counted: UNVERIFIABLE means evidence is missing, not this.
 */
export type CheckVerdict = Verdict | 'NOT_APPLICABLE';
export const NOT_APPLICABLE = 'NOT_APPLICABLE';

/**
 * Best to worst; the swap's verdict is its worst check's. MISMATCH outranks UNVERIFIABLE: a proven
 * discrepancy is what finance must act on, and a check that could not be made elsewhere does not
 * make it less proven. UNVERIFIABLE outranks WITHIN_TOLERANCE: an unmade check is never a pass.
 */
export const VERDICT_ORDER: readonly Verdict[] = Object.freeze([
  'MATCHED',
  'WITHIN_TOLERANCE',
  'UNVERIFIABLE',
  'MISMATCH',
]);

/** The worst verdict of a list, NOT_APPLICABLE checks left out; MATCHED for an empty one (nothing failed). */
export function worstVerdict(verdicts: Iterable<CheckVerdict>): Verdict {
  let worst: Verdict = 'MATCHED';
  for (const v of verdicts) {
    if (v === NOT_APPLICABLE) continue;
    const rank = VERDICT_ORDER.indexOf(v);
    if (rank < 0) throw new ReconciliationInputError(`unknown verdict ${JSON.stringify(v)}`);
    if (rank > VERDICT_ORDER.indexOf(worst)) worst = v;
  }
  return worst;
}

/** One check as the SwapReconciled event carries it, with its verdict typed. */
export interface ReconciledCheck extends ReconciliationCheck {
  verdict: CheckVerdict;
}

export interface ReconciliationResult {
  /** The worst verdict of `checks` (VERDICT_ORDER). */
  readonly verdict: Verdict;
  /** Every check made, passing ones included, in a stable order. */
  readonly checks: ReconciledCheck[];
}

/** Decimal text as the interface carries it; null, undefined or blank means "not known". */
export type AmountText = string | null | undefined;

/** What the platform asked for (SwapRequestFixed / SwapRequestFloat), platform currency ids. */
export interface ReconciliationRequest extends Omit<SwapRequestFields, 'amount'> {
  /** Float swaps: the source amount asked for. */
  readonly amountFrom?: AmountText;
  /** Ratio 0 to 1; wins over the quote's defaultSlippage when present. */
  readonly slippage?: AmountText;
}

/** The quote terms the swap used, when it used one: part of the contract (DESIGN "The quote"). */
export interface ReconciliationQuote {
  /** The quote's echo of the source amount: the only source of a fixed swap's amount. */
  readonly amountFrom?: AmountText;
  readonly defaultSlippage?: AmountText;
  /** 'fixed' or 'float' as the quote answered; absent in facts recorded before the quote was judged. */
  readonly tradeMethod?: string | null | undefined;
  /** Estimated output to the user, destination currency, payout network fee excluded. */
  readonly amountTo?: AmountText;
  readonly providerFees?: AmountText;
  readonly referralFees?: AmountText;
  readonly payoutNetworkFees?: AmountText;
}

export interface FeeFigures {
  readonly providerFees: AmountText;
  readonly referralFees: AmountText;
  readonly payoutNetworkFees: AmountText;
}

/** What was known when the swap was created (SwapCreated). */
export interface SwapCreationFacts {
  /** 'fixed' or 'float'; anything else makes the amount check unverifiable. */
  readonly tradeMethod: string;
  readonly request: ReconciliationRequest;
  readonly quote?: ReconciliationQuote | null | undefined;
  /** SwapResponse.payinAddress. */
  readonly payinAddress: string;
  /** SwapResponse.createdAt: picks the partner key window. */
  readonly createdAt: string;
  /** The fees of the SwapResponse. */
  readonly fees: FeeFigures;
  readonly providerSig: {
    readonly payload: string;
    readonly signature: string | null | undefined;
    /** 'signature' or 'payload_signature': the field the partner used. */
    readonly field: string;
  };
}

/** The swap's state once final (the projected swaps row). */
export interface FinalReport extends FeeFigures {
  /** Internal status, after the provider's mapping. */
  readonly status: string;
  readonly final: boolean;
  /** Final amount transferred to the user, destination currency, payout network fee excluded. */
  readonly amount: AmountText;
  readonly payinTransactionId: string | null | undefined;
  readonly payoutTransactionId: string | null | undefined;
  /** The refund's transaction, a separate field: a refund is not a payout; a refund's evidence. */
  readonly refundTransactionId?: string | null | undefined;
  /** open, closed or final as ingest decided (src/swap/status.ts); absent: told by `final` alone. */
  readonly statusClass?: string | null | undefined;
  /** The webhook's "referral or extra fee" when a provider's override says it is an extra fee. */
  readonly extraFees?: AmountText;
  /**
   * The webhook's networkFees under the default reading, read by evidence against the referral fee the
   * partner committed to (fee-checks.ts, `webhookNetworkFeesReading`).
   */
  readonly webhookNetworkFees?: AmountText;
}

/**
 * A report that contradicted the swap's final state after it became final (a confirming poll, a late
 * webhook): kept, journaled, and failing the `status.conflict` check. Values are text as reported.
 */
export interface StatusConflict {
  /** The contradicted field, as the event names it (status, amount, payoutTransactionId...). */
  readonly field: string;
  readonly finalValue: string | null;
  readonly reportedValue: string | null;
  /** The event that carried the contradicting report. */
  readonly eventId: string;
  /** Where it came from: webhook, poll... */
  readonly source: string;
}

export interface ReconciliationInput {
  readonly creation: SwapCreationFacts;
  readonly final: FinalReport;
  /**
   * inspectSwapPayload's result for `creation.providerSig` against `creation`, made with the partner
   * keys valid at `creation.createdAt` (see inspectionInputFor): the one async step, done before.
   */
  readonly inspection: PayloadInspection;
  /** Decimals by platform currency id; defaults to the platform currency table. */
  readonly magnitudes?: DecimalsLookup | undefined;
  /**
   * The provider's configured default slippage (decimal text, ratio 0 to 1): used for a float swap
   * only when neither the request nor the quote agreed one. Null or absent: none configured.
   */
  readonly providerDefaultSlippage?: AmountText;
  /** Reports that contradicted the final state; absent or empty: none. */
  readonly conflicts?: readonly StatusConflict[] | null | undefined;
  /** What the chain watcher saw of the swap's transactions (chain-checks.ts); absent: no chain checks. */
  readonly chain?: ChainEvidence | undefined;
  /**
   * Report fields (amountTo, providerFees, …, refundTransactionId) the partner never reported before the
   * confirmation deadline (platform.confirmations_never_reported): a missing one says so.
   */
  readonly neverReported?: readonly string[] | null | undefined;
}

/** One chain observation of a reported transaction (a chain_observations row, as plain data). */
export interface ChainObservation {
  readonly role: ChainRole;
  readonly txid: string;
  readonly currency: string;
  readonly chain: string;
  readonly family: string;
  /** found | pending | not_found | reverted | refused */
  readonly status: string;
  readonly confirmations: number;
  readonly requiredConfirmations: number;
  readonly block: number | null;
  /** 'native' or the token contract (lower case). */
  readonly asset: string;
  readonly decimals: number;
  readonly transfers: readonly ChainTransfer[];
  readonly source: string;
  readonly proven: boolean;
  readonly deadlinePassed: boolean;
  readonly observedAt: string;
  readonly detail: string | null;
  readonly eventId: string;
  /** ISO-8601 UTC time of the mining block; null until mined or in older observations. */
  readonly blockTime?: string | null | undefined;
  /** Fee the transaction spent, atomic units of the chain's native asset; null when not known. */
  readonly fee?: string | null | undefined;
  /** EVM: a contract call (its internal native value moves are not visible). */
  readonly contractCall?: boolean | undefined;
}

/** A claim of the swap on one transfer of a transaction it reported (chain_claims): one transfer, one claim. */
export interface ChainClaim {
  readonly role: ChainRole;
  readonly txid: string;
  /** The transfer's index, 'native', or asset>recipient (src/swap/chain-transfer.ts transferKey). */
  readonly transfer: string;
  /** Another (swap, role) holding the transfer by an earlier claim, as `provider/swapId (role)`; null: this one. */
  readonly heldBy: string | null;
  /** How many (swap, role) claim transfers of the same transaction: the swaps its fee is shared by. */
  readonly claimants: number;
}

/** The chain evidence of one swap, read for its judgement (chain-load.ts). */
export interface ChainEvidence {
  /** Platform currency ids with a configured chain source: any other's checks are UNVERIFIABLE. */
  readonly sourced: readonly string[];
  /** Currencies whose transfers carry an extra id (memo) the chain lookup cannot see. */
  readonly memos?: readonly string[] | undefined;
  /** Oldest first: the latest of a (role, txid) is its evidence. */
  readonly observations: readonly ChainObservation[];
  /** The swap's claims on transfers; absent: none recorded. */
  readonly claims?: readonly ChainClaim[] | undefined;
}

/**
 * The caller broke the input's contract (a JS number where decimal text belongs, a missing
 * section): a programming error, thrown. Bad partner data never throws; it becomes a check.
 */
export class ReconciliationInputError extends Error {
  override name = 'ReconciliationInputError';
}
