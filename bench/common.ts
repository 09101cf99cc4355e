/** What every benchmark shares: options, the stack's endpoints, the result record and the machine. */
import os from 'node:os';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stackUp } from '../scripts/stack/stack.ts';

export interface Endpoints {
  KAFKA_BROKERS: string;
  SCHEMA_REGISTRY_URL: string;
  DATABASE_URL: string;
}

/** The three env variables when set, or the native stack started for the run. */
export async function endpoints(): Promise<Endpoints> {
  const { KAFKA_BROKERS, SCHEMA_REGISTRY_URL, DATABASE_URL } = process.env;
  if (KAFKA_BROKERS && SCHEMA_REGISTRY_URL && DATABASE_URL)
    return { KAFKA_BROKERS, SCHEMA_REGISTRY_URL, DATABASE_URL };
  return stackUp(() => {});
}

/**
 * `--name N` from argv; a value that is not a positive integer (or, with `zero`, 0) is refused, not
 * guessed.
 */
export function intOption(name: string, fallback: number, argv = process.argv, zero = false): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const text = argv[i + 1] ?? '';
  if (!(zero ? /^(0|[1-9]\d*)$/ : /^[1-9]\d*$/).test(text))
    throw new Error(`--${name} needs a ${zero ? 'non-negative' : 'positive'} integer, got "${text}"`);
  return Number(text);
}

export function stringOption(name: string, argv = process.argv): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? undefined : argv[i + 1];
}

/**
 * One measured figure beside its reference from the same run. `ratio` is figure / reference (for a goal
 * like "within 1.25x" the reference is the baseline, and lower is better).
 */
export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** What the figure is compared with, measured in the same run (a ceiling or a baseline). */
  reference?: { name: string; value: number; unit: string };
  ratio?: number;
  goal: string;
  /** Undefined: informative only, no goal. */
  pass?: boolean;
  note?: string;
}

export interface Machine {
  cores: number;
  cpu: string;
  memoryGiB: number;
  /** 1-minute load average when the run started and ended: a loaded machine lowers the absolutes. */
  loadAverage: { start: number; end: number };
  node: string;
}

export interface BenchResult {
  kind: 'bench' | 'bench:webhook' | 'bench:growth';
  date: string;
  machine: Machine;
  options: Record<string, number | string>;
  figures: Figure[];
}

export function machine(loadAtStart: number): Machine {
  return {
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    loadAverage: { start: loadAtStart, end: Math.round(os.loadavg()[0]! * 100) / 100 },
    node: process.version,
  };
}

export const seconds = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e9;

export const round = (n: number, digits = 0) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Prints the figures as a table: figure, reference, ratio, goal, PASS/FAIL. */
export function printFigures(figures: readonly Figure[]): void {
  const rows = figures.map((f) => [
    f.name,
    `${f.value.toLocaleString('en')} ${f.unit}`,
    f.reference ? `${f.reference.value.toLocaleString('en')} ${f.reference.unit} (${f.reference.name})` : '',
    f.ratio !== undefined ? `${round(f.ratio * 100)}%` : '',
    f.goal,
    f.pass === undefined ? '' : f.pass ? 'PASS' : 'FAIL',
  ]);
  const head = ['figure', 'measured', 'same-run reference', 'ratio', 'goal', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  console.log(line(head));
  for (const r of rows) console.log(line(r));
  for (const f of figures) if (f.note) console.log(`  ${f.name}: ${f.note}`);
}

/** bench/results/<ISO date>.json, the colons of the time left out so that every filesystem takes it. */
export function resultFile(date: string): string {
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  return `${dir}${date.replaceAll(':', '')}.json`;
}

/**
 * CPU seconds used so far by the machine's processes: this process, each Postgres process (every
 * backend), the Kafka broker and the schema registry (the stack's JVMs, by their -Dswap-ledger.stack
 * marker), the processes named by pid, and the machine in all (/proc/stat). Two readings say where
 * a phase's CPU went: on 2 cores, what all of them spend per item bounds the rate.
 */
export interface CpuReading {
  self: number;
  machine: number;
  /** Per process: its group and CPU seconds so far. */
  processes: Map<number, { group: string; seconds: number }>;
}

export function cpuReading(named: Record<string, number | undefined> = {}): CpuReading {
  const tick = 100; // USER_HZ on Linux
  const byPid = new Map(Object.entries(named).map(([group, pid]) => [pid, group]));
  const usage = process.cpuUsage();
  const reading: CpuReading = { self: (usage.user + usage.system) / 1e6, machine: 0, processes: new Map() };
  try {
    const [cpu] = readFileSync('/proc/stat', 'utf8').split('\n');
    const f = cpu!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system (idle iowait) irq softirq steal
    reading.machine = (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!) / tick;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      let stat: string;
      let cmdline: string;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        continue; // gone meanwhile
      }
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const group =
        byPid.get(pid) ??
        (comm === 'postgres'
          ? 'postgres'
          : cmdline.includes('-Dswap-ledger.stack=kafka')
            ? 'kafka'
            : cmdline.includes('-Dswap-ledger.stack=registry')
              ? 'registry'
              : undefined);
      if (!group) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime + stime, and cutime + cstime: the postmaster's holds its ended backends' CPU (a pool closed
      // before the second reading), which would otherwise be lost.
      const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number) as [
        number,
        number,
        number,
        number,
      ];
      reading.processes.set(pid, { group, seconds: (utime + stime + cutime + cstime) / tick });
    }
  } catch {
    // not Linux: this process's own figure only
  }
  return reading;
}

/** The rate this machine's cores allow when an item costs `machineUs` of CPU, all processes together. */
export const coresAllow = (machineUs: number) =>
  Math.round((os.availableParallelism() * 1e6) / Math.max(1, machineUs));

/**
 * Microseconds of CPU per item between two readings, by group (postgres, kafka and registry always
 * there): each group's sum after less its sum before. A Postgres backend that ended in between is
 * counted through its parent, the postmaster; one that started is counted whole.
 */
export type CpuPerItem = Record<'self' | 'postgres' | 'kafka' | 'registry' | 'machine', number> &
  Record<string, number>;

export function cpuPerItem(before: CpuReading, after: CpuReading, items: number): CpuPerItem {
  const groups: Record<string, number> = { postgres: 0, kafka: 0, registry: 0 };
  for (const p of after.processes.values()) groups[p.group] = (groups[p.group] ?? 0) + p.seconds;
  for (const p of before.processes.values()) groups[p.group] = (groups[p.group] ?? 0) - p.seconds;
  const per = (s: number) => round((s * 1e6) / items);
  const out: Record<string, number> = { self: per(after.self - before.self) };
  for (const [g, s] of Object.entries(groups)) out[g] = per(s);
  out.machine = per(after.machine - before.machine);
  return out as CpuPerItem;
}
