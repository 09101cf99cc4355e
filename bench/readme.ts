/**
 * Rewrites the README's benchmark table (between `<!-- bench:start -->` and `<!-- bench:end -->`) from the
 * newest result file of each kind in bench/results (`npm run bench`, `bench:webhook` and `bench:growth`).
 *
 *   tsx bench/readme.ts
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BenchResult, Figure } from './common.ts';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));
const README = fileURLToPath(new URL('../README.md', import.meta.url));
const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';

/** The newest complete result of each kind (a partial `--only` run is not the table's). */
export function latestResults(dir = RESULTS): BenchResult[] {
  const all = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(dir + f, 'utf8')) as BenchResult)
    .filter((r) => !r.options.only);
  const latest = new Map<string, BenchResult>();
  for (const r of all) latest.set(r.kind, r);
  return [...latest.values()];
}

const fmt = (n: number, unit: string) => `${n.toLocaleString('en')} ${unit}`;

function row(f: Figure): string {
  const ref = f.reference ? `${fmt(f.reference.value, f.reference.unit)} (${f.reference.name})` : '';
  const ratio = f.ratio !== undefined ? `${Math.round(f.ratio * 100)}%` : '';
  const verdict = f.pass === undefined ? '' : f.pass ? 'PASS' : '**FAIL**';
  return `| ${f.name} | ${fmt(f.value, f.unit)} | ${ref} | ${ratio} | ${f.goal} | ${verdict} |`;
}

export function renderTable(results: readonly BenchResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    const m = r.machine;
    lines.push(
      `\`npm run ${r.kind}\` on ${r.date.slice(0, 16).replace('T', ' ')} UTC: ${m.cores} cores (${m.cpu}), ` +
        `${m.memoryGiB} GiB, Node ${m.node}, load average ${m.loadAverage.start} -> ${m.loadAverage.end}; ` +
        `${Object.entries(r.options)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}.`,
      '',
      '| figure | measured | same-run reference | ratio | goal | |',
      '|---|---|---|---|---|---|',
      ...r.figures.map(row),
      '',
    );
  }
  return lines.join('\n');
}

/** Replaces what stands between the markers; says so, or why not. */
export function regenerateReadme(readme = README, dir = RESULTS): string {
  const text = readFileSync(readme, 'utf8');
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error(`README has no ${START} ... ${END} markers`);
  const results = latestResults(dir);
  if (results.length === 0) return 'no complete result in bench/results: README left as it was';
  writeFileSync(readme, `${text.slice(0, a + START.length)}\n${renderTable(results)}${text.slice(b)}`);
  return `README benchmark table regenerated from ${results.map((r) => r.date).join(', ')}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) console.log(regenerateReadme());
