import type { StatementDifference } from '../../events/types.ts';
import { postingPeriodSql } from '../../ledger/periods.ts';
import { statementInForceSql } from '../../ops/statements.ts';
import type { ConsoleDb } from '../db.ts';
import { badge, html, swapLink, table, time, type Html } from '../html.ts';
import { amount, figure } from '../amount.ts';
import { Decimal } from '../../money/decimal.ts';

/**
 * Month end in the console (README "Month end"): per partner and month, the statement in force and how its
 * lines matched the ledger, the statements it superseded, and the period's closes with their digests. Read
 * from the tables `statement import` and `period close` fold into; nothing here computes a match or a seal.
 */

/** The statement's outcomes in the words finance uses for them. */
export const OUTCOME_LABELS = {
  matched: 'matched',
  ledger_only: 'only here (in the ledger, not the statement)',
  statement_only: 'only there (in the statement, not the ledger)',
  status_differs: 'status differs',
  amount_differs: 'amount or fee differs',
} as const;
type Outcome = keyof typeof OUTCOME_LABELS;
const OUTCOMES = Object.keys(OUTCOME_LABELS) as Outcome[];

export function closeHref(providerId: string, period: string): string {
  return `/close/${encodeURIComponent(providerId)}/${period}`;
}

interface MonthRow {
  provider_id: string;
  period: string;
  statement_id: string | null;
  imported_at: string | null;
  imports: string;
  counts: Record<string, string> | null;
}

/** Each partner's months: any month it has postings or a statement in, newest first. */
export async function closeIndexLive(db: ConsoleDb): Promise<Html> {
  const [months, periods] = await Promise.all([
    db.query<MonthRow>(
      `with months as (
         select distinct provider_id, ${postingPeriodSql('p')} as period from ledger_postings p
         union select provider_id, period from statements)
       select m.provider_id, m.period, f.statement_id, f.imported_at,
              (select count(*) from statements s where s.provider_id = m.provider_id and s.period = m.period) as imports,
              (select jsonb_object_agg(outcome, n) from
                 (select outcome, count(*) as n from statement_lines l where l.statement_id = f.statement_id
                   group by outcome) c) as counts
         from months m
         left join lateral (
           select s.statement_id, s.imported_at from statements s
            where s.provider_id = m.provider_id and s.period = m.period
              and ${statementInForceSql('s')}) f on true
        order by m.period desc, m.provider_id
        limit 500`,
    ),
    periodStatesNow(db),
  ]);
  return table(
    ['partner · month', 'statement', 'matched', 'differences', 'period'],
    months.map((m) => {
      const counts = m.counts ?? {};
      const differing = OUTCOMES.filter((o) => o !== 'matched').reduce(
        (n, o) => n + Number(counts[o] ?? 0),
        0,
      );
      return [
        html`<a href="${closeHref(m.provider_id, m.period)}">${m.provider_id} · ${m.period}</a>`,
        m.statement_id
          ? html`imported
            ${time(m.imported_at)}${Number(m.imports) > 1 ? html` <span class="muted">(${m.imports} imports)</span>` : ''}`
          : html`<span class="muted">no statement</span>`,
        html`<span class="num">${counts.matched ?? (m.statement_id ? '0' : '')}</span>`,
        html`<span class="num">${m.statement_id ? String(differing) : ''}</span>`,
        badge(periods.get(m.period)?.kind ?? 'open'),
      ];
    }),
    'no month with postings or a statement yet',
  );
}

interface PeriodEventRow {
  event_id: string;
  period: string;
  kind: 'closed' | 'reopened';
  operator: string;
  reason: string;
  digest: string;
  previous_digest: string | null;
  posting_count: number | null;
  accepted_differences: boolean;
  recorded_at: string;
}

async function periodStatesNow(db: ConsoleDb): Promise<Map<string, PeriodEventRow>> {
  const rows = await db.query<PeriodEventRow>(
    `select distinct on (period) event_id, period, kind, operator, reason, digest, previous_digest, posting_count,
            accepted_differences, recorded_at
       from period_events order by period, event_id desc`,
  );
  return new Map(rows.map((r) => [r.period, r]));
}

interface StatementRow {
  statement_id: string;
  file_name: string;
  file_digest: string;
  layout: string;
  operator: string;
  reason: string | null;
  supersedes: string | null;
  line_count: number;
  imported_at: string;
  in_force: boolean;
}

interface LineRow {
  seq: number;
  line_no: number | null;
  swap_id: string;
  outcome: Outcome;
  status: string | null;
  ledger_status: string | null;
  prior_period: string | null;
  differences: StatementDifference[];
  in_ledger: boolean;
}

const differenceText = (d: StatementDifference): Html =>
  html`<div class="difference">
    <b>${d.field}</b> ledger ${figure(d.ledger)} · statement
    ${figure(d.statement)}${d.delta ? html` · Δ ${figure(d.delta)}` : ''}${
      d.tolerance
        ? html` <span class="muted">(tolerance ${d.tolerance}${d.direction ? `, ${d.direction}` : ''})</span>`
        : ''
    }
    ${badge(d.verdict)}
  </div>`;

/** One partner's month: the statement in force line by line (differences first), earlier imports, the close. */
export async function closeLive(db: ConsoleDb, providerId: string, period: string): Promise<Html> {
  const statements = await db.query<StatementRow>(
    `select s.statement_id, s.file_name, s.file_digest, s.layout, s.operator, s.reason, s.supersedes, s.line_count,
            s.imported_at,
            ${statementInForceSql('s')} as in_force
       from statements s where s.provider_id = $1 and s.period = $2
      order by s.statement_id desc`,
    [providerId, period],
  );
  const inForce = statements.find((s) => s.in_force);
  const [lines, closes] = await Promise.all([
    inForce
      ? db.query<LineRow>(
          `select l.seq, l.line_no, l.swap_id, l.outcome, l.status, l.ledger_status, l.prior_period, l.differences,
                  exists (select 1 from swaps w where w.provider_id = l.provider_id and w.swap_id = l.swap_id) as in_ledger
             from statement_lines l where l.statement_id = $1
            order by (l.outcome = 'matched'), l.seq`,
          [inForce.statement_id],
        )
      : Promise.resolve([] as LineRow[]),
    db.query<PeriodEventRow>(
      `select event_id, period, kind, operator, reason, digest, previous_digest, posting_count, accepted_differences,
              recorded_at
         from period_events where period = $1 order by event_id`,
      [period],
    ),
  ]);
  const counts = new Map<Outcome, number>(OUTCOMES.map((o) => [o, 0]));
  for (const l of lines) counts.set(l.outcome, (counts.get(l.outcome) ?? 0) + 1);
  // A matched line that adjusts a closed month is shown too: the statement's prior-period adjustments.
  const differing = lines.filter((l) => l.outcome !== 'matched' || l.prior_period !== null);
  const state = closes.at(-1);

  return html`<section id="close-statement">
      <h2>Statement</h2>
      ${
        inForce
          ? html`<p>
                In force: <code>${inForce.file_name}</code> (${inForce.layout} layout, ${inForce.line_count}
                lines), imported ${time(inForce.imported_at)} by
                ${inForce.operator}${inForce.reason ? ` (${inForce.reason})` : ''} · SHA-256
                <code class="digest">${inForce.file_digest}</code>
              </p>
              ${table(
                ['outcome', 'lines'],
                OUTCOMES.map((o) => [
                  html`<span data-outcome="${o}">${OUTCOME_LABELS[o]}</span>`,
                  html`<span class="num" data-count="${o}">${counts.get(o)}</span>`,
                ]),
              )}`
          : html`<p class="muted" id="no-statement">
              No statement imported for ${providerId} ${period}: <code>swap-ledger statement import</code>.
            </p>`
      }
    </section>
    <section id="close-differences">
      <h2>Differences and prior-period adjustments</h2>
      ${table(
        ['line', 'swap', 'outcome', 'status (statement · ledger)', 'figures'],
        differing.map((l) => [
          l.line_no ?? html`<span class="muted">—</span>`,
          l.in_ledger
            ? swapLink(providerId, l.swap_id)
            : html`<span title="not in the ledger">${l.swap_id}</span>`,
          html`<span class="outcome" data-outcome="${l.outcome}">${OUTCOME_LABELS[l.outcome]}</span>${
              l.prior_period
                ? html` <span class="muted">prior-period adjustment of ${l.prior_period}</span>`
                : ''
            }`,
          `${l.status ?? '—'} · ${l.ledger_status ?? '—'}`,
          l.differences.map(differenceText),
        ]),
        inForce ? 'every line matched' : 'no statement',
      )}
    </section>
    ${
      statements.length > 1
        ? html`<section id="close-imports">
            <h2>Earlier imports</h2>
            ${table(
              ['imported', 'file', 'by', 'reason', 'SHA-256', 'superseded'],
              statements
                .filter((s) => !s.in_force)
                .map((s) => [
                  time(s.imported_at),
                  s.file_name,
                  s.operator,
                  s.reason ?? '',
                  html`<code class="digest">${s.file_digest}</code>`,
                  'yes',
                ]),
            )}
          </section>`
        : ''
    }
    ${await invoiceSection(db, providerId, period)}
    <section id="close-period">
      <h2>Period ${period}</h2>
      <p>
        ${badge(state?.kind ?? 'open')}
        ${
          state?.kind === 'closed'
            ? html`sealed with digest <code class="digest" id="close-digest">${state.digest}</code>`
            : html`<span class="muted">not sealed: <code>swap-ledger period close ${period}</code></span>`
        }
      </p>
      ${table(
        ['at', 'step', 'by', 'reason', 'postings', 'differences accepted', 'digest', 'previous digest'],
        closes.map((e) => [
          time(e.recorded_at),
          e.kind,
          e.operator,
          e.reason,
          html`<span class="num">${e.posting_count ?? ''}</span>`,
          e.accepted_differences ? 'yes' : 'no',
          html`<code class="digest">${e.digest}</code>`,
          e.previous_digest
            ? html`<code class="digest">${e.previous_digest}</code>`
            : html`<span class="muted">first close</span>`,
        ]),
        'never closed',
      )}
    </section>`;
}

interface InvoiceRow {
  invoice_number: string;
  operator: string;
  issued_at: string;
  due_date: string;
  supersedes: string | null;
  in_force: boolean;
  totals: { currency: string; amount: string }[];
  disputed: number;
}

interface SettlementRow {
  invoice_number: string;
  method: string;
  reference: string;
  amount: string;
  currency: string;
  operator: string;
  verified: string | null;
  recorded_at: string;
}

/** The month's referral invoice (and any it superseded), what is settled of it per currency, and how. */
async function invoiceSection(db: ConsoleDb, providerId: string, period: string): Promise<Html> {
  const invoices = await db.query<InvoiceRow>(
    `select i.invoice_number, i.operator, i.issued_at, i.due_date, i.supersedes, i.totals,
            not exists (select 1 from invoices n where n.supersedes = i.invoice_number) as in_force,
            (select count(*)::int from invoice_lines l where l.event_id = i.event_id and l.disputed is not null) as disputed
       from invoices i where i.provider_id = $1 and i.period = $2 order by i.event_id desc`,
    [providerId, period],
  );
  const current = invoices.find((i) => i.in_force);
  if (!current)
    return html`<section id="close-invoice">
      <h2>Referral invoice</h2>
      <p class="muted" id="no-invoice">
        Not issued: <code>swap-ledger invoice issue ${providerId} ${period} --by &lt;operator&gt;</code>.
      </p>
    </section>`;
  const [settled, settlements] = await Promise.all([
    db.query<{ currency: string; settled: string }>(
      `select l.currency, coalesce(-sum(p.amount), 0)::text as settled
         from invoice_lines l join invoices i on i.event_id = l.event_id
         left join ledger_postings p on p.provider_id = l.provider_id and p.swap_id = l.swap_id
              and p.currency = l.currency and p.account = 'referral_fees_receivable' and p.entry_kind = 'settlement'
        where i.invoice_number = $1 and l.disputed is null group by l.currency`,
      [current.invoice_number],
    ),
    db.query<SettlementRow>(
      `select payload->>'invoiceNumber' as invoice_number, payload->>'method' as method,
              payload->>'reference' as reference, payload->>'amount' as amount, payload->>'currency' as currency,
              payload->>'operator' as operator, payload->>'verified' as verified, recorded_at
         from event_journal
        where event_type = 'InvoiceSettled' and outcome = 'applied' and payload->>'invoiceNumber' = any($1)
        order by recorded_at`,
      [invoices.map((i) => i.invoice_number)],
    ),
  ]);
  const settledOf = new Map(settled.map((r) => [r.currency, r.settled]));
  return html`<section id="close-invoice">
    <h2>Referral invoice ${current.invoice_number}</h2>
    <p>
      Issued ${time(current.issued_at)} by ${current.operator}, due
      ${current.due_date}${
        current.supersedes ? html` · supersedes ${current.supersedes}` : ''
      }${current.disputed > 0 ? html` · ${current.disputed} line(s) in dispute, listed apart` : ''}
      · <code>swap-ledger invoice show ${current.invoice_number} --format html</code>
    </p>
    ${table(
      ['currency', 'invoiced', 'settled', 'outstanding'],
      current.totals.map((t) => {
        const paid = settledOf.get(t.currency) ?? '0';
        return [
          t.currency,
          amount(t.amount, t.currency),
          amount(paid, t.currency, { settled: t.currency }),
          amount(new Decimal(t.amount).minus(paid).toFixed(), t.currency),
        ];
      }),
      'nothing invoiced',
    )}
    <h3>Settlements</h3>
    ${table(
      ['recorded', 'method', 'reference', 'amount', 'by', 'verified on chain'],
      settlements.map((x) => [
        time(x.recorded_at),
        x.method,
        html`<code>${x.reference}</code>`,
        amount(x.amount, x.currency),
        x.operator,
        x.verified ?? html`<span class="muted">—</span>`,
      ]),
      'no payment recorded',
    )}
  </section>`;
}
