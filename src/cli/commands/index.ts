import type { Command } from '../command.ts';

/**
 * The CLI's commands, by module. A module is loaded only when its first word is asked for (or for help), so a
 * command pays for its own imports only: `case list` does not load the chain clients, the console or the
 * Kafka appender. Listed in the order `swap-ledger help` shows them; a module's commands by their words.
 */
const MODULES: readonly (readonly [first: string, load: () => Promise<Record<string, unknown>>])[] = [
  ['up', () => import('./up.ts')],
  ['health', () => import('./health.ts')],
  ['db', () => import('./db.ts')],
  ['topics', () => import('./topics.ts')],
  ['projector', () => import('./projector.ts')],
  ['replay', () => import('./replay.ts')],
  ['dlq', () => import('./dlq.ts')],
  ['events', () => import('./events.ts')],
  ['swap', () => import('./swap.ts')],
  ['swap', () => import('./evidence.ts')],
  ['evidence', () => import('./evidence.ts')],
  ['case', () => import('./case.ts')],
  ['reconcile', () => import('./reconcile.ts')],
  ['reconciler', () => import('./reconcile.ts')],
  ['report', () => import('./report.ts')],
  ['payload', () => import('./payload.ts')],
  ['sim', () => import('./sim.ts')],
  ['partner', () => import('./partner.ts')],
  ['provider', () => import('./provider.ts')],
  ['webhook', () => import('./webhook.ts')],
  ['gateway', () => import('./gateway.ts')],
  ['poller', () => import('./poller.ts')],
  ['chain', () => import('./chain.ts')],
  ['catalog', () => import('./catalog.ts')],
  ['outbox', () => import('./outbox.ts')],
  ['console', () => import('./console.ts')],
  ['demo', () => import('./demo.ts')],
  ['requests', () => import('./requests.ts')],
  ['statement', () => import('./monthend.ts')],
  ['period', () => import('./monthend.ts')],
  ['invoice', () => import('./invoice.ts')],
];

const isCommand = (v: unknown): v is Command =>
  typeof v === 'object' &&
  v !== null &&
  Array.isArray((v as Command).words) &&
  typeof (v as Command).run === 'function';

const byWords = (a: Command, b: Command) => a.words.join(' ').localeCompare(b.words.join(' '));

/** The commands whose first word is `first`, loading only their module(s); none for an unknown word. */
export async function commandsNamed(first: string): Promise<Command[]> {
  const out: Command[] = [];
  for (const [word, load] of MODULES) {
    if (word !== first) continue;
    for (const v of Object.values(await load())) if (isCommand(v) && v.words[0] === first) out.push(v);
  }
  return out.sort(byWords);
}

/** Every command, in help's order (loads every module). */
export async function allCommands(): Promise<Command[]> {
  const firsts = [...new Set(MODULES.map(([first]) => first))];
  return (await Promise.all(firsts.map(commandsNamed))).flat();
}
