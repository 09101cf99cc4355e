import { resolve } from 'node:path';
import type { Config } from '../config/config.ts';
import { createPool } from '../db/client.ts';
import { migratePlatform, migrateProjection } from '../db/migrate.ts';
import { createConfiguredTopics } from '../events/open.ts';
import { TopicReplicationError } from '../events/topics.ts';
import { migrateFinanceViews } from '../ledger/finance-views.ts';
import { freePort } from '../demo/port.ts';
import { hardhatCli } from '../demo/evm-node.ts';
import { DEMO_CLOCK_ALLOWANCE_SECONDS } from '../demo/plan.ts';

const CLOCK_ALLOWANCE_KEY = 'RECONCILE_CHAIN_CLOCK_ALLOWANCE_SECONDS';
import { generateApiKey } from '../providers/api-keys.ts';
import { formatWorkerEndpoints } from '../observability/worker-health.ts';
import { Supervisor, type WorkerSpec } from './supervisor.ts';
import { replicaInstances, replicaPorts } from './replicas.ts';

export interface UpOptions {
  readonly demo: boolean;
  readonly financeSchema: string;
  readonly demoDir: string;
  readonly write: (line: string) => void;
  /** How long a worker may take to answer /readyz with 200 before `up` reports it NOT READY. */
  readonly readyTimeoutMs?: number;
  /** Instances of each worker but the console and the demo (default 1): `up --replicas N`. */
  readonly replicas?: number;
}

export interface Up {
  readonly supervisor: Supervisor;
  readonly consoleUrl: string;
}

const hostOf = (h: string) => (h.includes(':') ? `[${h}]` : h);

/** The workers that open a metrics listener, in the order a configured METRICS_PORT numbers them. */
const WITH_METRICS = [
  { name: 'projector', args: ['projector', 'run'] },
  { name: 'reconciler', args: ['reconciler', 'run'] },
  { name: 'webhook', args: ['webhook', 'serve'] },
  { name: 'gateway', args: ['gateway', 'serve'] },
  { name: 'poller', args: ['poller', 'run'] },
  // Only with CHAIN_SOURCES_FILE: without a source there is nothing to watch.
  { name: 'chain', args: ['chain', 'watch'] },
] as const;

/**
 * Each worker's own metrics port (one shared METRICS_PORT would collide): METRICS_PORT + 0..5 in the
 * order above when it is set, so scrape targets stay put; free ports otherwise.
 */
async function metricsListeners(config: Config, withGateway: boolean, withChain: boolean) {
  // A wildcard listener is read back on loopback.
  const host = ['0.0.0.0', '::'].includes(config.METRICS_HOST) ? '127.0.0.1' : config.METRICS_HOST;
  const out: { name: string; args: string[]; port: number; url: string }[] = [];
  for (const [i, w] of WITH_METRICS.entries()) {
    if (w.name === 'gateway' && !withGateway) continue;
    if (w.name === 'chain' && !withChain) continue;
    const port = config.METRICS_PORT ? config.METRICS_PORT + i : await freePort(config.METRICS_HOST);
    if (port > 65_535)
      throw new Error(`METRICS_PORT ${config.METRICS_PORT} + ${i} for ${w.name} is past 65535`);
    out.push({ name: w.name, args: [...w.args], port, url: `http://${hostOf(host)}:${port}` });
  }
  return out;
}

/**
 * Everything `swap-ledger up` does before supervising: migrations, topics, the demo partner when asked,
 * a console login key when none is configured; then the workers, each a `swap-ledger` child process.
 */
export async function platformUp(config: Config, options: UpOptions): Promise<Up> {
  const say = (line: string) =>
    options.write(`up         | ${new Date().toISOString().slice(11, 19)} ${line}`);
  await migratePlatform(config.DATABASE_URL);
  await migrateProjection(config.DATABASE_URL, config.PROJECTION_SCHEMA);
  await migrateFinanceViews(config.DATABASE_URL, config.PROJECTION_SCHEMA, options.financeSchema);
  say(`migrated: schemas platform, ${config.PROJECTION_SCHEMA}; finance views in ${options.financeSchema}`);
  // The same plan of the topics as `swap-ledger topics create`.
  const { report, warning } = await createConfiguredTopics(config);
  // The demo runs on the one-broker dev stack by design: said as a note there, a warning anywhere else.
  if (warning) say(`${options.demo ? 'note' : 'warning'}: ${warning}`);
  const short = report.filter((t) => t.problems.length > 0);
  if (short.length > 0)
    throw new TopicReplicationError(
      short.map((t) => `${t.topic} is less replicated than configured (${t.problems.join(', ')})`).join('; '),
    );
  say(
    `topics ready: ${report.map((t) => `${t.topic} (${t.partitions} partitions, replication ${t.replicationFactor}, min ISR ${t.minInsyncReplicas})`).join(', ')}`,
  );

  // Port 0 means "any": chosen here, because the demo and the console URL must know it.
  const ports = {
    webhook: config.WEBHOOK_PORT || (await freePort()),
    gateway: config.GATEWAY_PORT || (await freePort()),
    console: config.CONSOLE_PORT || (await freePort()),
  };
  const env: Record<string, string> = {
    WEBHOOK_PORT: String(ports.webhook),
    GATEWAY_PORT: String(ports.gateway),
    CONSOLE_PORT: String(ports.console),
  };
  const replicas = options.replicas ?? 1;
  const webhookPorts = await replicaPorts(ports.webhook, config.WEBHOOK_PORT > 0, replicas, 'WEBHOOK_PORT');
  const gatewayPorts = await replicaPorts(ports.gateway, config.GATEWAY_PORT > 0, replicas, 'GATEWAY_PORT');
  let consoleKey: string | undefined;
  const consoleKeys = [
    config.CONSOLE_KEY_DIGESTS,
    config.CONSOLE_OPERATOR_KEY_DIGESTS,
    config.CONSOLE_APPROVER_KEY_DIGESTS,
  ];
  if (consoleKeys.every((k) => k.length === 0)) {
    const key = generateApiKey();
    consoleKey = key.key;
    env.CONSOLE_OPERATOR_KEY_DIGESTS = key.sha256;
  }

  const demoWorkers: WorkerSpec[] = [];
  const walletDigests = [...config.GATEWAY_API_KEY_DIGESTS];
  if (options.demo) {
    // The demo's provisioning (the simulator's signer) and chains (viem, bitcoinjs-lib) load only when the demo runs.
    const { provisionDemo } = await import('../demo/provision.ts');
    const pool = createPool(config.DATABASE_URL, { max: 1, applicationName: 'swap-ledger-up' });
    try {
      const demo = await provisionDemo(pool, {
        dir: resolve(options.demoDir),
        webhookUrl: `http://${hostOf(config.WEBHOOK_HOST)}:${ports.webhook}`,
        gatewayUrl: `http://${hostOf(config.GATEWAY_HOST)}:${ports.gateway}`,
      });
      // The demo wallet's key beside any configured ones.
      walletDigests.push(demo.walletKeyDigest);
      env.GATEWAY_API_KEY_DIGESTS = walletDigests.join(',');
      // Faster ticks than production so a demo swap is polled and confirmed within seconds.
      if (!process.env.POLL_CRON) env.POLL_CRON = '*/2 * * * * *';
      // The first catalog sync may come before the simulator listens: tried again within seconds, not 15 min.
      if (!process.env.CATALOG_SYNC_CRON) env.CATALOG_SYNC_CRON = '*/20 * * * * *';
      const demoEnv = { ...demo.demoEnv };
      // The demo's chains (Hardhat's node, an Esplora server) and their sources file, unless chain sources
      // are configured (then those are watched) or Hardhat, a devDependency, is not installed.
      if (config.CHAIN_SOURCES_FILE !== '') say('demo chains not started: CHAIN_SOURCES_FILE is set');
      else if (!hardhatCli()) say('demo chains not started: the devDependency hardhat is not installed');
      else {
        const [{ demoChainUrls, writeDemoChainSources }, { DEMO_REFERRAL_ADDRESSES }] = await Promise.all([
          import('../demo/chain.ts'),
          import('../demo/invoice.ts'),
        ]);
        const chainPorts = { evm: await freePort(), esplora: await freePort() };
        Object.assign(env, demoChainUrls(chainPorts), {
          CHAIN_SOURCES_FILE: writeDemoChainSources(resolve(options.demoDir)),
        });
        // Where the demo partner pays its referral invoice (`invoice settle --tx` checks it), unless configured.
        if (Object.keys(config.REFERRAL_ADDRESSES).length === 0)
          env.REFERRAL_ADDRESSES = Object.entries(DEMO_REFERRAL_ADDRESSES)
            .map(([currency, address]) => `${currency}=${address}`)
            .join(',');
        const portsEnv = {
          DEMO_EVM_PORT: String(chainPorts.evm),
          DEMO_ESPLORA_PORT: String(chainPorts.esplora),
        };
        Object.assign(demoEnv, portsEnv);
        // The demo chains are mined on this machine's clock (no miner runs ahead): seconds of clock allowance,
        // not hours, so the demo's transfer made before its swap is caught as predating it (plan.ts).
        const allowance = config.RECONCILE[CLOCK_ALLOWANCE_KEY] ?? String(DEMO_CLOCK_ALLOWANCE_SECONDS);
        env[CLOCK_ALLOWANCE_KEY] = demoEnv.DEMO_CLOCK_ALLOWANCE_SECONDS = allowance;
        demoWorkers.push({ name: 'demo-chain', args: ['demo', 'chain'], env: portsEnv });
        say(
          `demo chains: EVM node (Hardhat EDR) on 127.0.0.1:${chainPorts.evm}, Esplora (BTC, LTC) on 127.0.0.1:${chainPorts.esplora}; sources in ${env.CHAIN_SOURCES_FILE}`,
        );
      }
      demoWorkers.push({
        name: 'demo',
        args: ['demo', 'run', '--finance-schema', options.financeSchema],
        env: demoEnv,
      });
      say(`demo: partner simulator as provider ${demo.providerId} on 127.0.0.1:${demo.simulatorPort}`);
    } finally {
      await pool.end();
    }
  }
  if (walletDigests.length === 0) say('gateway not started: GATEWAY_API_KEY_DIGESTS lists no wallet key');
  const listening = await metricsListeners(
    config,
    walletDigests.length > 0,
    (env.CHAIN_SOURCES_FILE ?? config.CHAIN_SOURCES_FILE) !== '',
  );
  const instances = await replicaInstances(listening, replicas, {
    port: config.METRICS_PORT,
    host: config.METRICS_HOST,
  });
  if (replicas > 1)
    say(
      `${replicas} instances of each worker: webhook on ports ${webhookPorts.join(', ')}, gateway on ${gatewayPorts.join(', ')} (the demo sends to the first of each)`,
    );
  say(
    `metrics and health (/metrics /healthz /readyz): ${instances.map((l) => `${l.name} ${l.url}`).join(', ')}`,
  );
  const workers: WorkerSpec[] = [
    ...instances.map((l) => ({
      name: l.name,
      args: l.args,
      env: {
        METRICS_PORT: String(l.port),
        WEBHOOK_PORT: String(webhookPorts[l.replica]),
        GATEWAY_PORT: String(gatewayPorts[l.replica]),
      },
      readyUrl: l.url,
    })),
    {
      name: 'console',
      args: ['console', 'serve', '--finance-schema', options.financeSchema],
      env: { CONSOLE_WORKER_HEALTH: formatWorkerEndpoints(instances) },
    },
    ...demoWorkers,
  ];

  const supervisor = new Supervisor(workers, {
    write: options.write,
    env: { ...process.env, ...env },
    ...(options.readyTimeoutMs !== undefined ? { readyTimeoutMs: options.readyTimeoutMs } : {}),
  });
  const consoleUrl = `http://${hostOf(config.CONSOLE_HOST)}:${ports.console}`;
  supervisor.start();
  say(`console: ${consoleUrl}/`);
  // Apart from the URL: a key in a link would land in the browser's history (the console refuses it there).
  if (consoleKey) say(`console operator login key (paste it on ${consoleUrl}/login): ${consoleKey}`);
  return { supervisor, consoleUrl };
}
