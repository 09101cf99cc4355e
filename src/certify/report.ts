import type { CertifyReport } from './run.ts';
import { show, type Check, type ExchangeRecord, type RequirementResult } from './requirement.ts';

/**
 * The report of a run in four forms: console lines, JSON, Markdown and a self-contained HTML page a
 * partner can be sent (no script, no external asset). Auth header values never reach a report.
 */

export type ReportFormat = 'html' | 'json' | 'md';

export function reportFormatOf(path: string): ReportFormat | undefined {
  const m = /\.(html?|json|md|markdown)$/i.exec(path);
  if (!m) return undefined;
  const ext = m[1]!.toLowerCase();
  return ext.startsWith('htm') ? 'html' : ext === 'json' ? 'json' : 'md';
}

function requestLine(e: ExchangeRecord): string {
  return `${e.method} ${e.target}${e.requestBody !== undefined ? ` ${show(e.requestBody, 400)}` : ''}`;
}

function responseLine(e: ExchangeRecord): string {
  const head = e.status === undefined ? (e.error ?? 'no answer') : `HTTP ${e.status} in ${e.ms} ms`;
  const headers = Object.entries(e.responseHeaders)
    .filter(([k]) => k !== 'content-type')
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
  return `${head}${headers ? ` [${headers}]` : ''}${e.responseExcerpt ? ` ${e.responseExcerpt.slice(0, 400)}` : ''}`;
}

function evidenceOf(r: RequirementResult): Check[] {
  return r.verdict === 'PASS' || r.verdict === 'SKIP' ? [] : r.checks.filter((c) => c.verdict === r.verdict);
}

export function summaryLine(report: CertifyReport): string {
  const c = report.counts;
  const total = report.requirements.length;
  return `${report.providerId}: ${total} requirements, ${c.PASS} pass, ${c.FAIL} fail, ${c.WARN} warn, ${c.SKIP} skip -> ${c.FAIL > 0 ? 'NOT CERTIFIED' : 'certified'}`;
}

/** One line per requirement; failures and warnings with their evidence (first three checks) indented. */
export function consoleLines(report: CertifyReport): string[] {
  const out: string[] = [];
  for (const r of report.requirements) {
    out.push(`${r.verdict.padEnd(4)}  ${r.id.padEnd(28)} ${r.summary}`);
    for (const c of evidenceOf(r).slice(0, 3)) {
      out.push(`        - ${c.what}`);
      if (c.exchange) {
        out.push(`          request:  ${requestLine(c.exchange)}`);
        out.push(`          response: ${responseLine(c.exchange)}`);
      }
      if (c.expected !== undefined) out.push(`          expected: ${c.expected}`);
      if (c.actual !== undefined) out.push(`          actual:   ${c.actual}`);
    }
  }
  out.push(summaryLine(report));
  return out;
}

export function jsonReport(report: CertifyReport): string {
  return JSON.stringify(report, null, 2) + '\n';
}

function mdEscape(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

export function markdownReport(report: CertifyReport): string {
  const lines = [
    `# Interface v2 certification: ${report.providerId}`,
    '',
    `Sandbox ${report.baseUrl}, ${report.startedAt} to ${report.finishedAt}. Swaps created: ${report.options.createSwaps ? 'yes' : 'no'}. Webhook listener: ${report.options.webhook ?? 'off'}. Response-time limit ${report.options.timeLimitMs} ms.`,
    '',
    `**${summaryLine(report)}**`,
    '',
    '| verdict | requirement | rule | result |',
    '|---|---|---|---|',
    ...report.requirements.map(
      (r) => `| ${r.verdict} | \`${r.id}\` | ${mdEscape(r.title)} | ${mdEscape(r.summary)} |`,
    ),
    '',
  ];
  const problems = report.requirements.filter((r) => r.verdict === 'FAIL' || r.verdict === 'WARN');
  if (problems.length) lines.push('## Evidence', '');
  for (const r of problems) {
    lines.push(`### ${r.verdict} \`${r.id}\``, '', r.title, '');
    for (const c of evidenceOf(r)) {
      lines.push(`- ${mdEscape(c.what)}`);
      if (c.expected !== undefined) lines.push(`  - expected: ${mdEscape(c.expected)}`);
      if (c.actual !== undefined) lines.push(`  - actual: ${mdEscape(c.actual)}`);
      if (c.exchange) {
        lines.push(
          '',
          '  ```',
          `  ${requestLine(c.exchange).replace(/`/g, "'")}`,
          `  ${responseLine(c.exchange).replace(/`/g, "'")}`,
          '  ```',
          '',
        );
      }
    }
    lines.push('');
  }
  return lines.join('\n');
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ccc;padding:.3rem .5rem;vertical-align:top;text-align:left}code,pre{font-family:ui-monospace,monospace;font-size:12px}
pre{background:#f6f6f6;padding:.5rem;white-space:pre-wrap;word-break:break-all}.PASS{color:#0a6b2d}.FAIL{color:#b00020;font-weight:bold}
.WARN{color:#9a6700}.SKIP{color:#777}details{margin:.2rem 0}`;

/** A single HTML file, styles inline, no script: safe to attach to a mail to the partner. */
export function htmlReport(report: CertifyReport): string {
  const rows = report.requirements
    .map((r) => {
      const checks = r.checks.length
        ? `<details${r.verdict === 'FAIL' || r.verdict === 'WARN' ? ' open' : ''}><summary>${r.checks.length} check(s)</summary>${r.checks
            .map(
              (c) =>
                `<div><span class="${c.verdict}">${c.verdict}</span> ${esc(c.what)}${c.expected !== undefined ? `<br>expected: <code>${esc(c.expected)}</code>` : ''}${
                  c.actual !== undefined ? `<br>actual: <code>${esc(c.actual)}</code>` : ''
                }${c.exchange ? `<pre>${esc(requestLine(c.exchange))}\n${esc(responseLine(c.exchange))}</pre>` : ''}</div>`,
            )
            .join('')}</details>`
        : '';
      return `<tr id="${esc(r.id)}"><td class="${r.verdict}">${r.verdict}</td><td><code>${esc(r.id)}</code></td><td>${esc(r.title)}</td><td>${esc(r.summary)}${checks}</td></tr>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Interface v2 certification: ${esc(report.providerId)}</title><style>${STYLE}</style></head>
<body><h1>Interface v2 certification: ${esc(report.providerId)}</h1>
<p>Sandbox <code>${esc(report.baseUrl)}</code>, ${esc(report.startedAt)} to ${esc(report.finishedAt)}. Swaps created: ${report.options.createSwaps ? 'yes' : 'no'}.
Webhook listener: ${esc(report.options.webhook ?? 'off')}. Response-time limit ${report.options.timeLimitMs} ms; fixed quotes valid at least ${Math.round(report.options.minQuoteValidityMs / 1000)} s.</p>
<p><strong class="${report.counts.FAIL > 0 ? 'FAIL' : 'PASS'}">${esc(summaryLine(report))}</strong></p>
<table><thead><tr><th>verdict</th><th>requirement</th><th>rule</th><th>result and evidence</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>
`;
}

export function renderReport(report: CertifyReport, format: ReportFormat): string {
  return format === 'html'
    ? htmlReport(report)
    : format === 'json'
      ? jsonReport(report)
      : markdownReport(report);
}
