/**
 * The top entries of a V8 CPU profile (`node --cpu-prof`), by self time and by total time per function,
 * as shares of the samples: shares stay comparable on a loaded machine where absolute times do not.
 *
 *   tsx bench/profile-top.ts <file.cpuprofile> [--top 25]
 */
import { readFileSync } from 'node:fs';
import { intOption } from './common.ts';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: tsx bench/profile-top.ts <file.cpuprofile> [--top 25]');
const top = intOption('top', 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const label = (n: Node) => {
  const f = n.callFrame;
  const where = f.url ? f.url.replace(/^.*\/(node_modules\/|src\/|bench\/)/, '$1') : '';
  return `${f.functionName || '(anonymous)'} ${where}${where ? `:${f.lineNumber + 1}` : ''}`.trim();
};

const self = new Map<string, number>();
const total = new Map<string, number>();
for (const id of profile.samples) {
  const node = byId.get(id)!;
  self.set(label(node), (self.get(label(node)) ?? 0) + 1);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!);
    if (seen.has(l)) continue;
    seen.add(l);
    total.set(l, (total.get(l) ?? 0) + 1);
  }
}
const n = profile.samples.length;
const print = (title: string, m: Map<string, number>) => {
  console.log(`${title} (${n} samples)`);
  for (const [l, c] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${((100 * c) / n).toFixed(1).padStart(5)}%  ${l}`);
  console.log();
};
print('self time', self);
print('total time', total);
