/**
 * The chart of accounts of the finance ledger (README, "Finance ledger"): each account is kept per partner
 * and currency. Domain constants: the posting rules and the database schema both read them from here.
 */
export const LEDGER_ACCOUNTS = [
  'user_payin',
  'user_payout',
  'referral_fees_receivable',
  'partner_fees',
  'payout_network_fees',
  'partner_clearing',
  'write_offs',
  /** The partner's referral payments received (an invoice's settlement). */
  'referral_cash',
] as const;
export type Account = (typeof LEDGER_ACCOUNTS)[number];

/** final: the swap became final; completion: a value of a final swap still unknown arrived; reversal and
 * correction: the two entries of an applied SwapCorrected; write_off: a case's approved accepted loss; settlement: an invoice's payment, set against its lines. */
export const LEDGER_ENTRY_KINDS = [
  'final',
  'completion',
  'reversal',
  'correction',
  'write_off',
  'settlement',
] as const;
export type EntryKind = (typeof LEDGER_ENTRY_KINDS)[number];
