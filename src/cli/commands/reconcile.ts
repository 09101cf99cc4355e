import type { Command } from '../command.ts';
import { whenStopRequested } from '../../lifecycle/stop.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createLogger } from '../../observability/log.ts';
import { openReconciler } from '../../reconciler/run.ts';
import { openOpsListener } from '../../observability/listener.ts';
import { dependencyChecks } from '../../ops/health.ts';
import { MetricsRegistry } from '../../observability/metrics.ts';
import type { SwapReconciliation } from '../../reconciler/worker.ts';
import { parseSwapRef } from '../../swap/ref.ts';
import { resolveSwapRef } from '../../ops/swap-ref.ts';
import { asUsage } from '../operator.ts';

const needs = ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL'] as const;

function printChecks(r: SwapReconciliation, out: (line: string) => void): void {
  out(
    `swap ${r.swapId}  provider ${r.providerId}  verdict ${r.result.verdict}  (based on ${r.basedOnEventId})`,
  );
  for (const c of r.result.checks) {
    const figures = [
      c.expected !== null ? `expected ${c.expected}` : '',
      c.actual !== null ? `actual ${c.actual}` : '',
      c.delta !== null ? `delta ${c.delta}` : '',
      c.tolerance !== null ? `tolerance ${c.tolerance}` : '',
    ]
      .filter(Boolean)
      .join('  ');
    out(`  ${c.verdict.padEnd(16)} ${c.name.padEnd(30)} ${figures}${c.detail ? `  (${c.detail})` : ''}`);
  }
}

export const reconcileCommand: Command = {
  words: ['reconcile'],
  usage: 'reconcile --swap <provider>/<swapId> | --since <ISO time> [--dry-run] [--json]',
  summary: 'reconcile final swaps by hand, print every check, and append SwapReconciled (unless --dry-run)',
  async run(args, io) {
    const { values, flags } = parseOptions(args, { values: ['swap', 'since'], flags: ['dry-run', 'json'] });
    if (!values.swap === !values.since) throw new UsageError('give --swap or --since');
    const since = values.since ? new Date(values.since) : undefined;
    if (since && Number.isNaN(since.getTime()))
      throw new UsageError(`--since "${values.since}" is not a time`);
    const config = loadConfig(process.env, [...needs]);
    const logger = createLogger({ level: 'warn', name: 'reconcile' });
    const { reconciler, close } = await openReconciler(config, logger);
    try {
      const refs = values.swap
        ? [await asUsage(() => resolveSwapRef(reconciler.projection, parseSwapRef(values.swap!)))]
        : await reconciler.finalSwapsSince(since!);
      const results: SwapReconciliation[] = [];
      for (const ref of refs) {
        const r = await reconciler.check(ref);
        if (!flags['dry-run']) await reconciler.record(r);
        results.push(r);
      }
      // One swap: its verdict history too (the current one is the last recorded).
      const history = values.swap ? await reconciler.history(refs[0]!) : [];
      if (flags.json)
        io.stdout(
          JSON.stringify(
            values.swap
              ? results.map(({ event, ...r }) => ({ ...r, eventId: event.eventId, history }))
              : results.map(({ event, ...r }) => ({ ...r, eventId: event.eventId })),
            null,
            2,
          ),
        );
      else {
        for (const r of results) printChecks(r, io.stdout);
        if (history.length > 0) {
          io.stdout('verdict history (oldest first; the last folded is the current one):');
          for (const h of history)
            io.stdout(
              `  ${h.reconciledAt}  ${h.verdict.padEnd(16)} based on ${h.basedOnEventId}  (${h.eventId})`,
            );
        }
        io.stdout(
          `${results.length} swap(s) reconciled${flags['dry-run'] ? ' (dry run: nothing appended)' : ''}`,
        );
      }
      return results.some((r) => r.result.verdict === 'MISMATCH') ? 1 : 0;
    } finally {
      await close();
    }
  },
};

export const reconcilerRunCommand: Command = {
  words: ['reconciler', 'run'],
  usage: 'reconciler run',
  summary: 'reconcile swaps from the reconciliation queue as they become final, until SIGTERM',
  async run(args) {
    const { positionals } = parseOptions(args, { values: [] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const config = loadConfig(process.env, [...needs]);
    const logger = createLogger({ level: config.LOG_LEVEL, name: 'reconciler' });
    const metrics = new MetricsRegistry();
    const { reconciler, close } = await openReconciler(config, logger, metrics);
    try {
      const ops = await openOpsListener(config, metrics, dependencyChecks(config), logger);
      reconciler.start(config.RECONCILER_INTERVAL_MS, config.RECONCILER_SWEEP_CRON);
      logger.info('reconciler started');
      // A signal that came while it was starting stops it at once (src/lifecycle/stop.ts).
      await whenStopRequested();
      await ops?.close();
    } finally {
      await close();
    }
    return 0;
  },
};
