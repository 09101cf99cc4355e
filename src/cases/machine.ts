// Over 400 lines on purpose: the case state machine is one table of transitions (verdicts, exceptions and
// operators' actions on one record); its refusals must be read beside the states they guard.
import type { CaseActed, ReconciliationCheck } from '../events/types.ts';
import { Decimal, formatDecimal, isDecimalText } from '../money/decimal.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';
import { partnerTextProblem } from '../swap/text.ts';

/**
 * A swap's case (README, "Cases"): the pure state machine. Opening, settling and reopening are derived from
 * verdicts and exceptions (verdictStep, exceptionStep); an operator's action is a CaseActed event (actStep).
 * The fold, the CLI and (later) the console all step through here, so what one refuses the others refuse
 * with the same words. No clock: every time comes from the event being folded.
 */

export const CASE_STATES = ['open', 'acknowledged', 'disputed', 'resolved'] as const;
export type CaseState = (typeof CASE_STATES)[number];
export const CASE_OUTCOMES = [
  'settled_by_evidence',
  'partner_paid',
  'corrected',
  'accepted_loss',
  'false_alarm',
] as const;
export type CaseOutcome = (typeof CASE_OUTCOMES)[number];
export const CASE_ACTIONS = [
  'acknowledge',
  'dispute',
  'resolve',
  'propose_write_off',
  'approve_write_off',
] as const;
export type CaseAction = (typeof CASE_ACTIONS)[number];
/** The outcomes an operator names with `resolve`; the others close by evidence or by an approved write-off. */
export const RESOLVE_OUTCOMES = ['partner_paid', 'corrected', 'false_alarm'] as const;
export type CaseTrigger = 'mismatch' | 'unverifiable_past_deadline' | 'exception';

export interface WriteOffProposal {
  amount: string;
  currency: string;
  proposedBy: string;
  reason: string;
  eventId: string;
}

/** One line of a case's history: what happened, by which event, when, by whom (null: derived). */
export interface CaseHistoryEntry {
  eventId: string;
  at: string;
  step: string;
  from: CaseState | null;
  to: CaseState;
  operator: string | null;
  reason: string;
  details: Record<string, string>;
}

export interface CaseRecord {
  state: CaseState;
  outcome: CaseOutcome | null;
  trigger: CaseTrigger;
  triggerEventId: string;
  openedAt: string;
  /** How many times the case opened (1, then +1 for each reopening). */
  openings: number;
  resolvedAt: string | null;
  /** The largest failing amount or fee difference of the verdict that opened it, in `stakeCurrency`. */
  amountAtStake: string | null;
  stakeCurrency: string | null;
  /** What failed in the verdict the case stands on (check names and actual figures): a reopen compares it. */
  failing: string;
  pendingWriteOff: WriteOffProposal | null;
  /** The resolution's own fields (reference, setting, amount, currency, approver…). */
  resolution: Record<string, string> | null;
  history: CaseHistoryEntry[];
}

/** An action the state machine refuses: the caller shows the message; nothing is stored. */
export class CaseRefusal extends InputRefusedError {
  override name = 'CaseRefusal';
}

const PASSING = new Set(['MATCHED', 'WITHIN_TOLERANCE']);
const FAILING_CHECK = new Set(['MISMATCH', 'UNVERIFIABLE']);

/** The verdict facts a step reads: the current verdict of the swap (older ones never reach here). */
export interface VerdictFacts {
  eventId: string;
  at: string;
  verdict: string;
  evidenceDeadlinePassed: boolean;
  checks: readonly ReconciliationCheck[];
  /** The swap's destination currency: amount and fee checks are in it. */
  currencyTo: string;
}

/** What failed, as a stable text: names, verdicts and actual figures of every failing check. */
export function failingSignature(checks: readonly ReconciliationCheck[]): string {
  return checks
    .filter((c) => FAILING_CHECK.has(c.verdict))
    .map((c) => `${c.name}:${c.verdict}:${c.actual ?? ''}`)
    .sort()
    .join('|');
}

/** The largest absolute delta of a failing amount or fee check (decimal text only; nothing is guessed). */
export function amountAtStake(checks: readonly ReconciliationCheck[]): string | null {
  let max: Decimal | undefined;
  for (const c of checks) {
    if (c.verdict !== 'MISMATCH' || !/^(amount|fee)\./.test(c.name)) continue;
    if (!isDecimalText(c.delta)) continue;
    const d = new Decimal(c.delta).abs();
    if (!d.isZero() && (!max || d.gt(max))) max = d;
  }
  return max ? formatDecimal(max) : null;
}

function triggerOf(v: VerdictFacts): CaseTrigger | undefined {
  if (v.verdict === 'MISMATCH') return 'mismatch';
  if (v.verdict === 'UNVERIFIABLE' && v.evidenceDeadlinePassed) return 'unverifiable_past_deadline';
  return undefined;
}

function entry(
  step: string,
  from: CaseState | null,
  to: CaseState,
  at: { eventId: string; at: string },
  reason: string,
  operator: string | null = null,
  details: Record<string, string> = {},
): CaseHistoryEntry {
  return { eventId: at.eventId, at: at.at, step, from, to, operator, reason, details };
}

/**
 * A new current verdict. Failing (MISMATCH, or UNVERIFIABLE past its evidence deadline): opens a case, or
 * reopens a resolved one whose resolution it contradicts (settled by evidence, or another failure than the
 * one resolved). Passing: settles an unresolved case by evidence. Anything else changes nothing (undefined).
 */
export function verdictStep(c: CaseRecord | undefined, v: VerdictFacts): CaseRecord | undefined {
  const trigger = triggerOf(v);
  const failing = failingSignature(v.checks);
  if (trigger) {
    const stake = amountAtStake(v.checks);
    const opened = {
      trigger,
      triggerEventId: v.eventId,
      amountAtStake: stake,
      stakeCurrency: stake === null ? null : v.currencyTo,
      failing,
    };
    if (!c) {
      return {
        state: 'open',
        outcome: null,
        openedAt: v.at,
        openings: 1,
        resolvedAt: null,
        pendingWriteOff: null,
        resolution: null,
        ...opened,
        history: [entry('opened', null, 'open', v, `verdict ${v.verdict}`, null, { verdict: v.verdict })],
      };
    }
    if (c.state !== 'resolved') {
      // Still failing: the case follows the newest verdict's figures.
      if (c.failing === failing) return undefined;
      return {
        ...c,
        ...opened,
        trigger: c.trigger,
        history: [
          ...c.history,
          entry('verdict', c.state, c.state, v, `a newer verdict ${v.verdict}`, null, { verdict: v.verdict }),
        ],
      };
    }
    if (c.outcome !== 'settled_by_evidence' && c.failing === failing) return undefined;
    return {
      ...c,
      ...opened,
      state: 'open',
      outcome: null,
      openedAt: v.at,
      openings: c.openings + 1,
      resolvedAt: null,
      pendingWriteOff: null,
      resolution: null,
      history: [
        ...c.history,
        entry(
          'reopened',
          'resolved',
          'open',
          v,
          `a newer verdict ${v.verdict} contradicts ${c.outcome}`,
          null,
          {
            verdict: v.verdict,
            previousOutcome: c.outcome ?? '',
          },
        ),
      ],
    };
  }
  if (PASSING.has(v.verdict) && c && c.state !== 'resolved') {
    return {
      ...c,
      state: 'resolved',
      outcome: 'settled_by_evidence',
      resolvedAt: v.at,
      pendingWriteOff: null,
      resolution: { verdictEventId: v.eventId },
      failing,
      history: [
        ...c.history,
        entry('resolved', c.state, 'resolved', v, `a newer verdict ${v.verdict}`, null, {
          outcome: 'settled_by_evidence',
          verdict: v.verdict,
        }),
      ],
    };
  }
  return undefined;
}

/** A swap listed as an exception (a report contradicting its final state): opens a case if none is unresolved. */
export function exceptionStep(
  c: CaseRecord | undefined,
  x: { eventId: string; at: string; reason: string },
): CaseRecord | undefined {
  if (c && c.state !== 'resolved') return undefined;
  const base = {
    state: 'open' as const,
    outcome: null,
    trigger: 'exception' as const,
    triggerEventId: x.eventId,
    openedAt: x.at,
    resolvedAt: null,
    amountAtStake: null,
    stakeCurrency: null,
    failing: `exception:${x.reason}`,
    pendingWriteOff: null,
    resolution: null,
  };
  if (!c) return { ...base, openings: 1, history: [entry('opened', null, 'open', x, x.reason)] };
  return {
    ...base,
    openings: c.openings + 1,
    history: [...c.history, entry('reopened', 'resolved', 'open', x, x.reason)],
  };
}

/** What the swap tells an action (read from its row at fold time). */
export interface SwapFactsForCase {
  currencyFrom: string;
  currencyTo: string;
  /** The swap's latest applied SwapCorrected, if any. */
  lastCorrectionEventId: string | null;
}

const MAX_TEXT = 2000;

function text(name: string, value: string | null, required: boolean): string | null {
  if (value === null || value.trim() === '') {
    if (required) throw new CaseRefusal(`${name} is required`);
    return null;
  }
  const problem = partnerTextProblem(value, MAX_TEXT);
  if (problem) throw new CaseRefusal(`${name} ${problem}`);
  return value.trim();
}

function forbid(action: string, fields: Partial<Record<keyof CaseActed, string | null>>): void {
  for (const [name, v] of Object.entries(fields))
    if (v !== null && v !== undefined) throw new CaseRefusal(`${name} does not go with ${action}`);
}

/**
 * Applies an operator's action to the case, or throws CaseRefusal with why (nothing changes). Every action
 * needs the operator and a reason; a resolved case takes none (it reopens by itself on a contradicting verdict).
 */
export function actStep(
  c: CaseRecord | undefined,
  act: CaseActed,
  at: { eventId: string; at: string },
  swap: SwapFactsForCase,
): CaseRecord {
  const action = act.action as CaseAction;
  if (!(CASE_ACTIONS as readonly string[]).includes(act.action))
    throw new CaseRefusal(`unknown case action "${act.action.slice(0, 40)}" (${CASE_ACTIONS.join(', ')})`);
  const operator = text('operator (--by)', act.operator, true)!;
  const reason = text('reason (--reason)', act.reason, true)!;
  if (!c) throw new CaseRefusal('the swap has no case: a case opens on a failing verdict or an exception');
  if (c.state === 'resolved')
    throw new CaseRefusal(
      `the case is closed (resolved: ${c.outcome}): no action on a closed case; it reopens when a newer verdict contradicts its resolution`,
    );
  const step = (to: CaseState, details: Record<string, string>, more: Partial<CaseRecord> = {}) => ({
    ...c,
    ...more,
    state: to,
    history: [...c.history, entry(action, c.state, to, at, reason, operator, details)],
  });
  switch (action) {
    case 'acknowledge':
      forbid(action, { ...act, action: null, operator: null, reason: null });
      if (c.state !== 'open')
        throw new CaseRefusal(`only an open case is acknowledged; this one is ${c.state}`);
      return step('acknowledged', {});
    case 'dispute': {
      const sent = text('sent (--sent: what was sent to the partner)', act.sent, true)!;
      forbid(action, {
        outcome: act.outcome,
        reference: act.reference,
        setting: act.setting,
        amount: act.amount,
        currency: act.currency,
        verified: act.verified,
      });
      if (c.state === 'disputed') throw new CaseRefusal('the case is disputed already');
      return step('disputed', { sent });
    }
    case 'resolve': {
      forbid(action, { sent: act.sent, amount: act.amount, currency: act.currency });
      const outcome = act.outcome;
      if (outcome === 'settled_by_evidence')
        throw new CaseRefusal('settled by evidence closes by itself when a newer verdict MATCHES');
      if (outcome === 'accepted_loss')
        throw new CaseRefusal(
          'an accepted loss is a write-off: propose it, and another operator approves it',
        );
      if (!outcome || !(RESOLVE_OUTCOMES as readonly string[]).includes(outcome))
        throw new CaseRefusal(`resolve needs --outcome ${RESOLVE_OUTCOMES.join(' | ')}`);
      const details: Record<string, string> = { outcome };
      if (outcome === 'partner_paid') {
        forbid(`${action} ${outcome}`, { setting: act.setting });
        details.reference = text(
          'reference (--reference: the transaction or your reference)',
          act.reference,
          true,
        )!;
        // The chain's word on the transaction, when the command verified it; the reference alone otherwise.
        const verified = text('verified', act.verified ?? null, false);
        if (verified) details.verified = verified;
      } else if (outcome === 'corrected') {
        forbid(`${action} ${outcome}`, { setting: act.setting, verified: act.verified });
        if (!swap.lastCorrectionEventId)
          throw new CaseRefusal('corrected needs a SwapCorrected of the swap (swap correct): there is none');
        const ref = text('reference', act.reference, false) ?? swap.lastCorrectionEventId;
        if (ref !== swap.lastCorrectionEventId)
          throw new CaseRefusal(
            `reference ${ref.slice(0, 60)} is not the swap's latest correction (${swap.lastCorrectionEventId})`,
          );
        details.reference = ref;
      } else {
        forbid(`${action} ${outcome}`, { reference: act.reference, verified: act.verified });
        details.setting = text('setting (--setting: the rule or setting that was wrong)', act.setting, true)!;
      }
      return step('resolved', details, {
        outcome: outcome as CaseOutcome,
        resolvedAt: at.at,
        resolution: details,
        pendingWriteOff: null,
      });
    }
    case 'propose_write_off': {
      forbid(action, {
        outcome: act.outcome,
        sent: act.sent,
        reference: act.reference,
        setting: act.setting,
        verified: act.verified,
      });
      if (c.pendingWriteOff)
        throw new CaseRefusal(
          `a write-off of ${c.pendingWriteOff.amount} ${c.pendingWriteOff.currency} by ${c.pendingWriteOff.proposedBy} awaits approval`,
        );
      if (!isDecimalText(act.amount) || act.amount.startsWith('-') || new Decimal(act.amount).isZero())
        throw new CaseRefusal(
          `amount must be a positive decimal amount, got "${(act.amount ?? '').slice(0, 60)}"`,
        );
      const currency = text('currency', act.currency, true)!;
      if (currency !== swap.currencyFrom && currency !== swap.currencyTo)
        throw new CaseRefusal(
          `currency ${currency.slice(0, 40)} is neither of the swap's (${swap.currencyFrom}, ${swap.currencyTo})`,
        );
      const amount = formatDecimal(new Decimal(act.amount));
      return step(
        c.state,
        { amount, currency },
        { pendingWriteOff: { amount, currency, proposedBy: operator, reason, eventId: at.eventId } },
      );
    }
    case 'approve_write_off': {
      forbid(action, {
        outcome: act.outcome,
        sent: act.sent,
        reference: act.reference,
        setting: act.setting,
        amount: act.amount,
        currency: act.currency,
        verified: act.verified,
      });
      const w = c.pendingWriteOff;
      if (!w) throw new CaseRefusal('no write-off awaits approval: propose one first');
      if (w.proposedBy === operator)
        throw new CaseRefusal(
          `${operator} proposed this write-off: an approver other than its proposer approves it`,
        );
      const details = {
        outcome: 'accepted_loss',
        amount: w.amount,
        currency: w.currency,
        proposedBy: w.proposedBy,
        approvedBy: operator,
        proposalEventId: w.eventId,
      };
      return step('resolved', details, {
        outcome: 'accepted_loss',
        resolvedAt: at.at,
        resolution: details,
        pendingWriteOff: null,
      });
    }
  }
}

/** The write-off an approval books (after actStep accepted it), or undefined for any other action. */
export function approvedWriteOff(c: CaseRecord): { amount: string; currency: string } | undefined {
  const last = c.history.at(-1);
  if (last?.step !== 'approve_write_off') return undefined;
  return { amount: last.details.amount!, currency: last.details.currency! };
}
