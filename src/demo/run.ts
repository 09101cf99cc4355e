import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../observability/log.ts';
import { seededRandom, startPartnerSimulator, type PartnerSimulator } from '../simulator/index.ts';
import { demoChainUrls } from './chain.ts';
import type { DemoChainPayer } from './payer.ts';
import { DEMO_CLOCK_ALLOWANCE_SECONDS, FIRST_WAVE, nextDemoSwap, stepsOf, type DemoSwap } from './plan.ts';

/** Addresses of the demo user, per partner currency id (valid ones: the demo chains pay them). */
const ADDRESSES: Readonly<Record<string, string>> = {
  btc: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
  ltc: 'ltc1qvuxmy0a9hjxtf0kzavuhpta4q0slgjq8j4cfmz',
  eth: '0xb794f5ea0ba39494ce839613fffba74279579268',
  usdt: '0xb794f5ea0ba39494ce839613fffba74279579268',
  bat: '0xb794f5ea0ba39494ce839613fffba74279579268',
  pol: '0xb794f5ea0ba39494ce839613fffba74279579268',
  sol: '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV',
  xrp: 'rN7n7otQDd6FczFgLdSqtcsAUxDkw6fzRH',
};

export interface DemoOptions {
  readonly providerId: string;
  readonly simulatorPort: number;
  readonly simulatorKeyPem: string;
  readonly webhookUrl: string;
  readonly webhookKey: string;
  readonly gatewayUrl: string;
  readonly walletKey: string;
  /** Wait between swaps after the first wave. */
  readonly intervalMs: number;
  /** Wait between a swap's status steps. */
  readonly stepMs: number;
  readonly seed?: number;
  /** The demo chains' URLs (DEMO_EVM_RPC_URL…) when `up` runs them: payins, payouts and refunds are made there. */
  readonly chainUrls?: Record<string, string>;
  /** The reconciler's clock allowance: a 'payout-predates-swap' swap is made past it after its transfer. */
  readonly clockAllowanceSeconds?: number;
}

export interface RunningDemo {
  readonly simulator: PartnerSimulator;
  stop(): Promise<void>;
}

/** `DEMO_*` variables `up` gives the demo worker (keys through the environment, not the command line). */
export function demoOptionsFromEnv(env: NodeJS.ProcessEnv): DemoOptions {
  const need = (k: string): string => {
    const v = env[k];
    if (!v) throw new Error(`${k} is not set: the demo worker is started by "swap-ledger up"`);
    return v;
  };
  return {
    providerId: need('DEMO_PROVIDER'),
    simulatorPort: Number(need('DEMO_SIMULATOR_PORT')),
    simulatorKeyPem: readFileSync(need('DEMO_SIMULATOR_KEY_FILE'), 'utf8'),
    webhookUrl: need('DEMO_WEBHOOK_URL'),
    webhookKey: need('DEMO_WEBHOOK_KEY'),
    gatewayUrl: need('DEMO_GATEWAY_URL'),
    walletKey: need('DEMO_WALLET_KEY'),
    intervalMs: Number(env.DEMO_INTERVAL_MS ?? 4000),
    stepMs: Number(env.DEMO_STEP_MS ?? 2500),
    clockAllowanceSeconds: Number(
      env.DEMO_CLOCK_ALLOWANCE_SECONDS ??
        env.RECONCILE_CHAIN_CLOCK_ALLOWANCE_SECONDS ??
        DEMO_CLOCK_ALLOWANCE_SECONDS,
    ),
    ...(env.DEMO_EVM_PORT && env.DEMO_ESPLORA_PORT
      ? {
          chainUrls: demoChainUrls({
            evm: Number(env.DEMO_EVM_PORT),
            esplora: Number(env.DEMO_ESPLORA_PORT),
          }),
        }
      : {}),
  };
}

/**
 * The demo: the partner simulator (real HTTP, webhooks to the platform) and a wallet that makes swaps
 * through the gateway, as a user of the platform would, then moves each along its planned path.
 */
export async function startDemo(options: DemoOptions, logger: Logger): Promise<RunningDemo> {
  // The chain wallet (viem, bitcoinjs-lib) loads after the simulator listens: the poller's first catalog
  // sync, at its own start, finds the simulator sooner.
  let payer: Promise<DemoChainPayer> | undefined;
  const chainUrls = options.chainUrls;
  const simulator = await startPartnerSimulator({
    ...(chainUrls ? { chain: { pay: async (move) => (await payer!).pay(move) } } : {}),
    port: options.simulatorPort,
    providerId: options.providerId,
    privateKeyPem: options.simulatorKeyPem,
    webhook: { url: options.webhookUrl, apiKey: options.webhookKey },
    progression: { advanceOn: 'manual' },
  });
  logger.info({ url: simulator.url, provider: options.providerId }, 'partner simulator listening');
  if (chainUrls) payer = import('./payer.ts').then((m) => new m.DemoChainPayer(chainUrls));
  const stopping = new AbortController();
  const random = seededRandom(options.seed ?? Date.now() % 2 ** 31);
  const timers = new Set<NodeJS.Timeout>();

  const call = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${options.gatewayUrl}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': options.walletKey, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(15_000)]),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  };

  const quoteOf = (swap: DemoSwap) =>
    call('/v1/quotes', {
      providerId: options.providerId,
      from: swap.from,
      to: swap.to,
      amount: swap.amount,
      ...(swap.method === 'float' ? { tradeMethod: 'float' } : {}),
    });

  const make = async (swap: DemoSwap): Promise<void> => {
    const quote = swap.withoutQuote ? undefined : await quoteOf(swap);
    if (quote && quote.status !== 200) {
      logger.warn({ status: quote.status, refusal: quote.body.error, swap }, 'demo quote refused');
      return;
    }
    if (swap.fault) simulator.injectSwapFaults([swap.fault], { nextSwaps: 1 });
    const created = await call(
      '/v1/swaps',
      {
        providerId: options.providerId,
        tradeMethod: swap.method,
        ...(quote ? { quoteRef: quote.body.quoteRef } : {}),
        ...(swap.method === 'float' ? { from: swap.from, to: swap.to, amount: swap.amount } : {}),
        payoutAddress: ADDRESSES[swap.to],
        refundAddress: ADDRESSES[swap.from],
        nonce: randomBytes(32).toString('hex'),
        slippage: '0.02',
      },
      { 'idempotency-key': `demo-${randomBytes(8).toString('hex')}` },
    );
    const swapId = created.body.swapId;
    if (typeof swapId !== 'string') {
      simulator.clearFaults();
      logger.warn({ status: created.status, refusal: created.body.error, swap }, 'demo swap refused');
      return;
    }
    logger.info(
      {
        swap: `${options.providerId}/${swapId}`,
        method: swap.method,
        pair: `${swap.from}->${swap.to}`,
        plan: swap.outcome,
        fault: swap.fault,
        ...(swap.withoutQuote ? { quote: 'asked by the gateway' } : {}),
        gateway: created.status,
      },
      'demo swap created',
    );
    stepsOf(swap).forEach((status, i) => {
      const t = setTimeout(
        () => {
          timers.delete(t);
          if (stopping.signal.aborted) return;
          // The chain down: the step still happens, its hashes random (the watcher then finds nothing).
          simulator.advancePaying(swapId, status).catch((e: Error) => {
            logger.warn({ swap: swapId, status, err: e }, 'demo chain payment failed');
            if (!stopping.signal.aborted) simulator.advance(swapId, status);
          });
        },
        options.stepMs * (i + 1),
      );
      timers.add(t);
    });
  };

  const loop = (async () => {
    // The poller syncs the catalog at its start; until then quotes are refused (unknown pair).
    const waitedFrom = Date.now();
    while (!stopping.signal.aborted) {
      const ready = await quoteOf(FIRST_WAVE[0]!).catch(() => undefined);
      // With the demo chains: their wallet funded first, so the first swaps are paid on them.
      let chainReady = payer
        ? await payer
            .then((p) => p.ready())
            .then(
              () => true,
              () => false,
            )
        : true;
      if (!chainReady && Date.now() - waitedFrom > 60_000) {
        logger.warn('the demo chains are not ready after a minute: swaps go on, their hashes random');
        chainReady = true;
      }
      if (ready?.status === 200 && chainReady) break;
      await delay(1000, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
    // The transfers the 'payout-predates-swap' swaps report, made before those swaps exist.
    let paidAheadAt: number | undefined;
    if (payer)
      for (const swap of FIRST_WAVE.filter((s) => s.payAhead !== undefined)) {
        const hash = await simulator
          .payAhead(swap.to, ADDRESSES[swap.to]!, swap.payAhead!)
          .catch((e: Error) => logger.warn({ err: e }, 'demo payment ahead of a swap failed'));
        if (hash) paidAheadAt = Date.now();
      }
    const allowanceMs = (options.clockAllowanceSeconds ?? DEMO_CLOCK_ALLOWANCE_SECONDS) * 1000;
    let made = 0;
    while (!stopping.signal.aborted) {
      const swap = made < FIRST_WAVE.length ? FIRST_WAVE[made]! : nextDemoSwap(random);
      const makeIt = () =>
        make(swap).catch((e: Error) => {
          if (!stopping.signal.aborted) logger.warn({ err: e }, 'demo swap failed');
        });
      // A swap reporting the transfer made ahead is created past the clock allowance (and a second of the
      // block time's rounding) after it, without holding up the others.
      const notBefore =
        swap.payAhead !== undefined && paidAheadAt !== undefined ? paidAheadAt + allowanceMs + 1000 : 0;
      if (Date.now() >= notBefore) await makeIt();
      else {
        const t = setTimeout(() => {
          timers.delete(t);
          if (!stopping.signal.aborted) void makeIt();
        }, notBefore - Date.now());
        timers.add(t);
      }
      made++;
      const wait = made < FIRST_WAVE.length ? 300 : options.intervalMs;
      await delay(wait, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  })();

  return {
    simulator,
    async stop() {
      stopping.abort();
      for (const t of timers) clearTimeout(t);
      await loop;
      await simulator.close();
    },
  };
}
