import { financeSchemaOption, parseOptions, UsageError, runUntilSignal, type Command } from '../command.ts';
import { settleDemoInvoice } from '../../demo/invoice.ts';
import { createLogger } from '../../observability/log.ts';
import { demoOptionsFromEnv, startDemo } from '../../demo/run.ts';
import { startDemoOperators } from '../../demo/operators.ts';
import { importDemoStatement } from '../../demo/statement.ts';
import { DEMO_CURRENCIES } from '../../demo/provision.ts';
import { parseReconciliationPolicy } from '../../reconciler/policy.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { openAppender } from '../../events/open.ts';
import { chainClients, loadChainSources } from '../../chain/index.ts';

export const demoRunCommand: Command = {
  words: ['demo', 'run'],
  usage: 'demo run',
  summary:
    'the demo partner (simulator) and a stream of demo swaps through the gateway; started by "up" (DEMO_* variables)',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['finance-schema'] });
    const finance = financeSchemaOption(values['finance-schema']);
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    let options;
    try {
      options = demoOptionsFromEnv(process.env);
    } catch (e) {
      io.stderr((e as Error).message);
      return 2;
    }
    const logger = createLogger({ name: 'demo' });
    const demo = await startDemo(options, logger);
    // The demo's operators act on the cases its faults open (src/demo/operators.ts), as `case` commands would.
    const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 2 });
    const appender = await openAppender(config, 'demo-ops', logger);
    // The sources file `up` wrote for the watcher, read with the demo chains' URLs.
    const chainAccess =
      options.chainUrls && config.CHAIN_SOURCES_FILE
        ? (() => {
            const sources = loadChainSources(config.CHAIN_SOURCES_FILE);
            return { sources, clients: chainClients(sources, options.chainUrls) };
          })()
        : undefined;
    const operators = startDemoOperators({
      pool,
      append: (e) => appender.append(e),
      providerId: options.providerId,
      simulator: demo.simulator,
      chains: options.chainUrls !== undefined,
      ...(chainAccess ? { chainAccess } : {}),
      logger,
    });
    // The partner's statement of the month, with its honest differences, imported once its swaps are folded.
    const fees = parseReconciliationPolicy(config.RECONCILE ?? {}).fees;
    // Then the month's referral invoice, issued and paid by the partner (on the demo chain where it can).
    let stage: 'statement' | 'invoice' | 'done' = 'statement';
    let step: Promise<void> = Promise.resolve();
    const monthEndTimer = setInterval(() => {
      step = step.then(async () => {
        if (stage === 'statement') {
          const imported = await importDemoStatement({
            pool,
            append: (e) => appender.append(e),
            providerId: options.providerId,
            swaps: () => demo.simulator.swaps(),
            platformIds: DEMO_CURRENCIES,
            fees,
            logger,
          }).catch((e: unknown) => {
            logger.warn({ err: e }, "demo partner's statement not imported; tried again");
            return false;
          });
          if (imported) stage = 'invoice';
        } else if (stage === 'invoice') {
          const settled = await settleDemoInvoice({
            pool,
            append: (e) => appender.append(e),
            providerId: options.providerId,
            period: new Date().toISOString().slice(0, 7),
            finance,
            simulator: demo.simulator,
            ...(chainAccess ? { chainAccess } : {}),
            logger,
          }).catch((e: unknown) => {
            logger.warn({ err: e }, "demo partner's invoice not settled; tried again");
            return false;
          });
          if (settled) stage = 'done';
        }
      });
    }, 10_000);
    return runUntilSignal(
      {
        async stop() {
          clearInterval(monthEndTimer);
          await step;
          await operators.stop();
          await demo.stop();
          await appender.stop();
          await pool.end();
        },
      },
      logger,
      'demo',
    );
  },
};

export const demoChainCommand: Command = {
  words: ['demo', 'chain'],
  usage: 'demo chain',
  summary:
    'the demo\'s chains: Hardhat\'s EVM node with the demo tokens, and an Esplora server for BTC and LTC; started by "up" (DEMO_EVM_PORT, DEMO_ESPLORA_PORT)',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['finance-schema'] });
    const finance = financeSchemaOption(values['finance-schema']);
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const evm = Number(process.env.DEMO_EVM_PORT);
    const esplora = Number(process.env.DEMO_ESPLORA_PORT);
    if (!Number.isInteger(evm) || !Number.isInteger(esplora) || evm < 1 || esplora < 1) {
      io.stderr(
        'DEMO_EVM_PORT and DEMO_ESPLORA_PORT are not set: the demo chains are started by "swap-ledger up"',
      );
      return 2;
    }
    const logger = createLogger({ name: 'demo-chain' });
    // Loaded here: viem and the node launcher are this worker's alone, not every command's.
    const { startDemoChain } = await import('../../demo/chain.ts');
    const chain = await startDemoChain({ evm, esplora }, logger);
    return runUntilSignal(chain, logger, 'demo-chain');
  },
};
