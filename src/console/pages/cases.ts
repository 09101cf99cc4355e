import type { SwapEventOf } from '../../events/types.ts';
import { CASE_STATES, type CaseAction } from '../../cases/machine.ts';
import { CHECK_NAME, type StoredCase } from '../../ops/cases.ts';
import type { ConsoleRole, ConsoleSession } from '../auth.ts';
import { badge, html, NumericHtml, swapHref, swapLink, table, time, type Html } from '../html.ts';
import { amount } from '../amount.ts';
import { csrfField } from '../layout.ts';
import { CASE_AGE_BUCKETS, isCaseAgeBucket, type CaseAgeBucket } from '../../ledger/aging.ts';

/** Each action, the roles that may take it, and the fields its form asks for besides the reason. */
export const CASE_ACTION_FORMS: Record<
  CaseAction,
  { roles: readonly ConsoleRole[]; label: string; fields: readonly string[] }
> = {
  acknowledge: { roles: ['operator', 'approver'], label: 'Acknowledge', fields: [] },
  dispute: { roles: ['operator', 'approver'], label: 'Dispute', fields: ['sent'] },
  resolve: { roles: ['operator', 'approver'], label: 'Resolve', fields: ['outcome', 'reference', 'setting'] },
  propose_write_off: {
    roles: ['operator', 'approver'],
    label: 'Propose write-off',
    fields: ['amount', 'currency'],
  },
  approve_write_off: { roles: ['approver'], label: 'Approve write-off', fields: [] },
};

export function mayTake(role: ConsoleRole, action: CaseAction): boolean {
  return CASE_ACTION_FORMS[action].roles.includes(role);
}

/** The actions a case in this state offers (the state machine refuses the rest anyway). */
function offered(c: StoredCase): CaseAction[] {
  if (c.state === 'resolved') return [];
  const out: CaseAction[] = [];
  if (c.state === 'open') out.push('acknowledge');
  out.push('dispute', 'resolve');
  out.push(c.pendingWriteOff ? 'approve_write_off' : 'propose_write_off');
  return out;
}

export interface CaseFilters {
  partner?: string;
  state?: string;
  age?: CaseAgeBucket;
  check?: string;
}

/** The filters of the query string; a value that is none of its kind is left out (the form shows it unset). */
export function cleanCaseFilters(query: Record<string, unknown>): CaseFilters {
  const out: CaseFilters = {};
  if (typeof query.partner === 'string' && /^[\x21-\x7e]{1,200}$/.test(query.partner))
    out.partner = query.partner;
  if (typeof query.state === 'string' && (CASE_STATES as readonly string[]).includes(query.state))
    out.state = query.state;
  if (typeof query.age === 'string' && isCaseAgeBucket(query.age)) out.age = query.age;
  if (typeof query.check === 'string' && query.check.length <= 80 && CHECK_NAME.test(query.check))
    out.check = query.check;
  return out;
}

export function casesControls(filters: CaseFilters): Html {
  return html`<form class="filters" method="get" action="/cases">
    <label>Partner <input name="partner" value="${filters.partner ?? ''}" /></label>
    <label
      >State
      <select name="state">
        <option value="">unresolved</option>
        ${CASE_STATES.map((s) => html`<option ${filters.state === s ? html`selected` : ''}>${s}</option>`)}
      </select></label
    >
    <label
      >Age
      <select name="age">
        <option value="">any</option>
        ${CASE_AGE_BUCKETS.map(
          (b) => html`<option ${filters.age === b.name ? html`selected` : ''}>${b.name}</option>`,
        )}
      </select></label
    >
    <label>Check <input name="check" placeholder="amount.to_wallet" value="${filters.check ?? ''}" /></label>
    <button type="submit">Filter</button>
  </form>`;
}

export function casesLive(cases: readonly StoredCase[]): Html {
  return table(
    ['case', 'state', 'trigger', 'opened', 'at stake', 'last by'],
    cases.map((c) => [
      html`<a href="${caseHref(c.providerId, c.swapId)}">${c.providerId}/${c.swapId}</a>`,
      html`${badge(c.state)}${c.outcome ? html` <span class="muted">${c.outcome}</span>` : ''}`,
      c.trigger,
      time(c.openedAt),
      c.amountAtStake === null
        ? ''
        : new NumericHtml(html`${amount(c.amountAtStake, c.stakeCurrency)} ${c.stakeCurrency}`.text),
      c.history.findLast((h) => h.operator)?.operator ?? '',
    ]),
    'no case',
  );
}

export function caseHref(providerId: string, swapId: string): string {
  return swapHref(providerId, swapId).replace(/^\/swaps\//, '/cases/');
}

export function caseLive(c: StoredCase, session: ConsoleSession): Html {
  const actions = offered(c).filter((a) => mayTake(session.role, a));
  return html`<p>
      Swap ${swapLink(c.providerId, c.swapId)} (its evidence: the swap page) · ${badge(c.state)}
      ${c.outcome ?? ''} ·
      <a href="${caseHref(c.providerId, c.swapId)}/evidence.json" download>evidence pack</a>
    </p>
    ${
      c.pendingWriteOff
        ? html`<p id="pending-write-off">
            Write-off of ${amount(c.pendingWriteOff.amount, c.pendingWriteOff.currency)}
            ${c.pendingWriteOff.currency} proposed by ${c.pendingWriteOff.proposedBy}, awaiting another
            approver.
          </p>`
        : ''
    }
    <h2>History</h2>
    ${table(
      ['at', 'step', 'by', 'from → to', 'reason'],
      c.history.map((h) => [
        time(h.at),
        h.step,
        h.operator ?? html`<span class="muted">derived</span>`,
        `${h.from ?? '—'} → ${h.to}`,
        h.reason,
      ]),
    )}
    <h2>Actions</h2>
    ${
      actions.length === 0
        ? html`<p class="muted" id="no-actions">No action open to you (${session.role}) on this case.</p>`
        : actions.map(
            (a) =>
              html`<form class="case-action" method="post" action="${caseHref(c.providerId, c.swapId)}/${a}">
                ${csrfField(session)}
                ${CASE_ACTION_FORMS[a].fields.map((f) => html`<label>${f} <input name="${f}" /></label>`)}
                <label>reason <input name="reason" required /></label>
                <button type="submit" data-action="${a}">${CASE_ACTION_FORMS[a].label}</button>
              </form>`,
          )
    }`;
}

/** What the console appends for a case action, handed in by the caller (the appender). */
export type AppendCaseEvent = (event: SwapEventOf<'CaseActed'>) => Promise<void>;
