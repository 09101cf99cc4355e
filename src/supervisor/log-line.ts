/**
 * One line of the merged log: `HH:MM:SS name      | level message {fields}`. Workers log pino JSON; a
 * person watching `up` reads the short form. Lines that are not JSON pass through as they are.
 */
const LEVELS: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};
const DROPPED = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'v']);

export function formatWorkerLine(worker: string, line: string, width = 10): string {
  const prefix = worker.padEnd(width);
  let parsed: unknown;
  if (line.startsWith('{')) {
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return `${prefix} | ${line}`;
  const o = parsed as Record<string, unknown>;
  const time = typeof o.time === 'number' ? new Date(o.time).toISOString().slice(11, 19) + ' ' : '';
  const level = LEVELS[o.level as number] ?? String(o.level ?? '');
  const rest = Object.fromEntries(Object.entries(o).filter(([k]) => !DROPPED.has(k)));
  // An error's stack and cause stay in the worker's own JSON; the short form names the error.
  if (rest.err && typeof rest.err === 'object' && !Array.isArray(rest.err)) {
    const { type, message, code } = rest.err as Record<string, unknown>;
    rest.err = Object.fromEntries(Object.entries({ type, message, code }).filter(([, v]) => v !== undefined));
  }
  const fields = Object.keys(rest).length > 0 ? ' ' + JSON.stringify(rest) : '';
  return `${prefix} | ${time}${level.padEnd(5)} ${String(o.msg ?? '')}${fields}`;
}
