import { newEvent, type EventOrigin } from '../events/keys.ts';
import type { PayloadByType, SwapEvent, SwapEventOf } from '../events/types.ts';
import { isDecimalText } from '../money/decimal.ts';
import { finalityProblem, INTERNAL_STATUSES, isInternalStatus } from '../swap/status.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';

/** Events an operator appends (source `ops`). Validation happens here, so bad input changes nothing. */

export class OperatorInputError extends InputRefusedError {
  override name = 'OperatorInputError';
}

/** The swapId a key names: swap:<provider>:<swapId>, or a bare swapId (keys written before 2026-11). */
function swapIdOfKey(key: string): string | null {
  if (key.startsWith('swap:')) return key.slice(key.indexOf(':', 5) + 1);
  return key.startsWith('request:') || key.startsWith('quote:') ? null : key;
}

function requireText(name: string, value: string | undefined): string {
  if (value === undefined || value.trim() === '') throw new OperatorInputError(`${name} is required`);
  return value.trim();
}

function optionalAmount(name: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!isDecimalText(value) || value.startsWith('-')) {
    throw new OperatorInputError(`${name} must be a non-negative decimal amount, got "${value}"`);
  }
  return value;
}

export interface CorrectionInput {
  swapId: string;
  providerId: string;
  by: string | undefined;
  reason: string | undefined;
  status?: string;
  final?: string;
  amount?: string;
  providerFees?: string;
  referralFees?: string;
  payoutNetworkFees?: string;
}

export function correctionEvent(input: CorrectionInput, now = new Date()): SwapEventOf<'SwapCorrected'> {
  const operator = requireText('--by', input.by);
  const reason = requireText('--reason', input.reason);
  let final: boolean | null = null;
  if (input.status !== undefined) {
    // Only an internal status (src/swap/status.ts): a partner's word or a typo would become the swap's status.
    if (!isInternalStatus(input.status))
      throw new OperatorInputError(
        `--status "${input.status.slice(0, 40)}" is not an internal status (${INTERNAL_STATUSES.join(', ')})`,
      );
    if (input.final !== 'true' && input.final !== 'false') {
      throw new OperatorInputError(
        '--status needs --final true|false: finality is decided by the operator, not guessed',
      );
    }
    final = input.final === 'true';
    const contradiction = finalityProblem(input.status, final);
    if (contradiction)
      throw new OperatorInputError(`--status ${input.status} --final ${input.final}: ${contradiction}`);
  } else if (input.final !== undefined) {
    throw new OperatorInputError('--final goes with --status');
  }
  const payload: PayloadByType['SwapCorrected'] = {
    operator,
    reason,
    status: input.status ?? null,
    final,
    amount: optionalAmount('--amount', input.amount),
    providerFees: optionalAmount('--provider-fee', input.providerFees),
    referralFees: optionalAmount('--referral-fee', input.referralFees),
    payoutNetworkFees: optionalAmount('--payout-network-fee', input.payoutNetworkFees),
  };
  const { operator: _o, reason: _r, ...changes } = payload;
  if (Object.values(changes).every((v) => v === null)) {
    throw new OperatorInputError('nothing to correct: give --status, --amount or a fee');
  }
  return newEvent('SwapCorrected', now, payload, {
    providerId: input.providerId,
    source: 'ops',
    swapId: input.swapId,
  });
}

/** A dead letter's resolution goes to its own key; no provider is known for a message that did not decode. */
function deadLetterOrigin(aggregateKey: string): EventOrigin {
  return { providerId: '-', source: 'ops', swapId: swapIdOfKey(aggregateKey), aggregateKey };
}

export function deadLetterRetriedEvent(
  deadLetter: { deadLetterId: string; aggregateKey: string },
  input: { by: string | undefined; reason?: string; replacementEventJson?: string },
  now = new Date(),
): SwapEvent {
  return newEvent(
    'DeadLetterRetried',
    now,
    {
      deadLetterId: deadLetter.deadLetterId,
      operator: requireText('--by', input.by),
      reason: input.reason?.trim() || null,
      replacementEventJson: input.replacementEventJson ?? null,
    },
    deadLetterOrigin(deadLetter.aggregateKey),
  );
}

export function deadLetterDiscardedEvent(
  deadLetter: { deadLetterId: string; aggregateKey: string },
  input: { by: string | undefined; reason: string | undefined },
  now = new Date(),
): SwapEvent {
  return newEvent(
    'DeadLetterDiscarded',
    now,
    {
      deadLetterId: deadLetter.deadLetterId,
      operator: requireText('--by', input.by),
      reason: requireText('--reason', input.reason),
    },
    deadLetterOrigin(deadLetter.aggregateKey),
  );
}

export interface CaseActionInput {
  swapId: string;
  providerId: string;
  action: string;
  by: string | undefined;
  reason: string | undefined;
  outcome?: string | undefined;
  sent?: string | undefined;
  reference?: string | undefined;
  setting?: string | undefined;
  amount?: string | undefined;
  currency?: string | undefined;
  /** partner_paid: the chain's confirmation of the transaction in `reference` (src/ops/chain-payment.ts). */
  verified?: string | undefined;
}

/**
 * An operator's action on a swap's case, as the CLI and the console append it. The fields are checked
 * against the case as it stands by `checkCaseAction` (src/ops/cases.ts) before appending; the fold applies
 * the same state machine, so an action that raced another is journaled as rejected with the same reason.
 */
export function caseActedEvent(input: CaseActionInput, now = new Date()): SwapEventOf<'CaseActed'> {
  const opt = (v: string | undefined) => (v === undefined || v.trim() === '' ? null : v.trim());
  return newEvent(
    'CaseActed',
    now,
    {
      action: input.action,
      operator: requireText('--by', input.by),
      reason: requireText('--reason', input.reason),
      outcome: opt(input.outcome),
      sent: opt(input.sent),
      reference: opt(input.reference),
      setting: opt(input.setting),
      amount: opt(input.amount),
      currency: opt(input.currency),
      verified: opt(input.verified),
    },
    { providerId: input.providerId, source: 'ops', swapId: input.swapId },
  );
}
