import type { ConsoleDb } from '../db.ts';
import { badge, html, swapLink, table, time, type Html } from '../html.ts';
import { figure } from '../amount.ts';
import { barChart, COLOURS } from '../svg.ts';
import { csvDocument } from '../../ledger/csv.ts';
import {
  MISMATCH_COLUMNS,
  mismatchCells,
  readMismatches,
  type MismatchRow,
} from '../../ledger/mismatches.ts';
import { VERDICT_ORDER } from '../../reconciler/types.ts';

export type { MismatchRow };

const VERDICT_COLOURS = ['#13a36b', '#8fbf3f', '#e0a100', '#d64545'];

/** The open mismatches, newest verdict first: the reader `swap-ledger report` uses too. */
export function openMismatches(db: ConsoleDb): Promise<MismatchRow[]> {
  return readMismatches((sql, params) => db.financeQuery(sql, params), db.finance, { newestFirst: true });
}

/** Verdict counts per hour (UTC) of verdict time, over the last `hours`. */
async function verdictsOverTime(db: ConsoleDb, hours: number) {
  return db.financeQuery<{ hour: string; verdict: string; n: string }>(
    `select to_char(date_trunc('hour', reconciled_at at time zone 'UTC'), 'YYYY-MM-DD HH24:00') as hour, verdict,
       count(*)::text as n
     from ${db.finance}.reconciliation_verdicts where reconciled_at >= now() - make_interval(hours => $1)
     group by 1, 2 order by 1`,
    [hours],
  );
}

export async function reconciliationLive(db: ConsoleDb): Promise<Html> {
  const [counts, overTime, mismatches, queue] = await Promise.all([
    db.financeQuery<{ verdict: string; n: string }>(
      `select verdict, count(*)::text as n from ${db.finance}.reconciliation_verdicts group by verdict`,
    ),
    verdictsOverTime(db, 48),
    openMismatches(db),
    db.query<{ n: string }>('select count(*)::text as n from reconciliation_queue'),
  ]);
  const hours = [...new Set(overTime.map((r) => r.hour))];
  const bars = hours.map((h) => ({
    label: h.slice(11),
    values: VERDICT_ORDER.map((v) => overTime.find((r) => r.hour === h && r.verdict === v)?.n ?? '0'),
  }));
  const swaps = new Set(mismatches.map((m) => `${m.provider_id}/${m.swap_id}`));
  return html`<div class="cards">
      ${VERDICT_ORDER.map(
        (v) =>
          html`<div class="card" data-count="${v}">
            <div class="n">${counts.find((c) => c.verdict === v)?.n ?? '0'}</div>
            <div class="l">${v.toLowerCase().replace('_', ' ')}</div>
          </div>`,
      )}
      <div class="card" data-count="queue">
        <div class="n">${queue[0]?.n ?? '0'}</div>
        <div class="l">waiting in the queue</div>
      </div>
    </div>
    ${barChart({
      title: 'verdicts per hour (UTC), last 48 hours',
      bars,
      series: VERDICT_ORDER.map((v, i) => ({ name: v, colour: VERDICT_COLOURS[i] ?? COLOURS[i]! })),
      id: 'verdict-chart',
    })}
    <h2>
      Open mismatches
      <span class="muted">(${swaps.size} swap(s), ${mismatches.length} failing check(s))</span>
      <a href="/reconciliation/mismatches.csv" download>export CSV</a>
    </h2>
    ${table(
      [
        'swap',
        'status',
        'reconciled',
        'check',
        'verdict',
        'expected',
        'actual',
        'delta',
        'tolerance',
        'detail',
      ],
      mismatches.map((m) => [
        swapLink(m.provider_id, m.swap_id),
        badge(m.status),
        time(m.reconciled_at),
        html`<code>${m.check_name}</code>`,
        badge(m.check_verdict),
        figure(m.expected),
        figure(m.actual),
        figure(m.delta),
        m.tolerance ?? '',
        m.detail ?? '',
      ]),
      'no open mismatch',
    )}`;
}

/**
 * /reconciliation/mismatches.csv: the mismatch columns (`check_name`, as the view and `report` name it)
 * through the finance exports' one CSV writer (src/ledger/csv.ts: RFC 4180, CRLF, every cell neutralised
 * against formulas).
 */
export function mismatchesCsv(rows: readonly MismatchRow[]): string {
  return csvDocument([MISMATCH_COLUMNS, ...rows.map(mismatchCells)]);
}
