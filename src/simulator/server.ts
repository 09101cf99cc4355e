import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PartnerKey } from '../payload/index.ts';
import type { DecimalText, PartnerOperation, StatusWebhookRequest } from '../partner/types.ts';
import { wireCurrency, wirePair, type SimCurrency, type SimPair } from './catalog.ts';
import { CallFaultQueue, answerWithFault } from './call-faults.ts';
import { movesFor, payAhead, payMoves, type ChainPayment } from './chain-pay.ts';
import type { CallFault, InjectOptions, SwapFault } from './faults.ts';
import { handleCall, requestObject, type Reply } from './http.ts';
import { setStatus, stepForward, view } from './progression.ts';
import { Pricing } from './pricing.ts';
import { PayloadSigner, type SimulatorPublicKey } from './signer.ts';
import { SwapBook } from './swaps.ts';
import type {
  PartnerSimulator,
  PartnerSimulatorOptions,
  SimCall,
  SimSwapView,
  StatusOverrides,
  StatusStep,
  WebhookDelivery,
} from './types.ts';
import { Webhooks } from './webhooks.ts';

/**
 * A partner of interface v2 over real HTTP (node:http), for tests and for humans (`swap-ledger sim`).
 * Everything is in memory; every answer can be replaced by an injected fault. This file wires the parts:
 * http (routes), pricing (catalog, quotes), swaps (creation), progression (statuses), webhooks, call faults.
 */

export async function startPartnerSimulator(
  options: PartnerSimulatorOptions = {},
): Promise<PartnerSimulator> {
  const sim = new Simulator(options);
  await sim.listen();
  return sim;
}

class Simulator implements PartnerSimulator {
  readonly providerId: string;
  readonly signer: PayloadSigner;
  url = '';
  port = 0;
  private readonly pricing: Pricing;
  private readonly book: SwapBook;
  private readonly webhooks: Webhooks;
  private readonly callFaults = new CallFaultQueue();
  private readonly callLog: SimCall[] = [];
  /** What it paid on its `chain`, oldest first (chain-pay.ts). */
  private readonly paid: ChainPayment[] = [];
  private readonly closing = new AbortController();
  private readonly server = createServer(
    (req, res) =>
      void handleCall(req, res, {
        options: this.options,
        takeFault: (operation, swapId) => this.callFaults.take(operation, swapId),
        record: (call) => this.callLog.push(call),
        answer: (operation, query, body, fault) => this.answer(operation, query, body, fault),
      }),
  );
  private ticker: NodeJS.Timeout | undefined;
  private readonly now: () => Date;

  constructor(private readonly options: PartnerSimulatorOptions) {
    this.providerId = options.providerId ?? 'simulator';
    this.signer = options.privateKeyPem
      ? PayloadSigner.fromPem(options.privateKeyPem)
      : PayloadSigner.generate(options.curve ?? 'secp256k1');
    this.now = options.now ?? (() => new Date());
    this.pricing = new Pricing(options, this.now);
    this.book = new SwapBook(options, this.pricing, this.signer, this.now);
    this.webhooks = new Webhooks(options, this.providerId, this.book, this.closing.signal);
  }

  get publicKey(): SimulatorPublicKey {
    return this.signer.publicKey;
  }

  partnerKey(
    keyId = `${this.providerId}-${this.signer.curve}`,
    validFrom = '2000-01-01T00:00:00Z',
  ): PartnerKey {
    return { keyId, curve: this.signer.curve, publicKey: this.signer.publicKey.hex, validFrom };
  }

  async listen(): Promise<void> {
    const host = this.options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port ?? 0, host, () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${this.port}`;
    const every = this.options.progression?.advanceOn;
    if (typeof every === 'object') {
      this.ticker = setInterval(() => this.tick(), every.everyMs);
      this.ticker.unref();
    }
  }

  async close(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    this.closing.abort();
    await this.settled();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  injectFault(operation: PartnerOperation, fault: CallFault, options: InjectOptions = {}): void {
    this.callFaults.inject(operation, fault, options);
  }

  injectSwapFaults(
    faults: readonly SwapFault[],
    target: { swapId: string } | { nextSwaps: number } = { nextSwaps: 1 },
  ): void {
    this.book.injectFaults(faults, target);
  }

  clearFaults(): void {
    this.callFaults.clear();
    this.book.clearFaults();
  }

  advance(
    swapId: string,
    status: StatusStep,
    fields?: StatusOverrides,
    options: { notify?: boolean } = {},
  ): SimSwapView {
    const swap = this.book.must(swapId);
    setStatus(this.book.rules, swap, status, fields);
    if (options.notify ?? true) this.webhooks.auto(swap);
    return view(swap, this.options);
  }

  async advancePaying(swapId: string, status: StatusStep): Promise<SimSwapView> {
    const swap = this.book.must(swapId);
    if (this.options.chain)
      await payMoves(this.options.chain, swap, movesFor(this.book.rules, swap, status), this.paid, this.now);
    return this.advance(swapId, status);
  }

  async payAhead(currencyId: string, to: string, amount: DecimalText): Promise<string | undefined> {
    const currency = this.pricing.currency(currencyId);
    if (!currency) throw new Error(`payAhead: currency ${currencyId} is not in the simulator's catalog`);
    if (!this.options.chain) return undefined;
    return payAhead(this.options.chain, { currency, to, amount }, this.paid, this.now);
  }

  step(swapId: string): SimSwapView {
    const swap = this.book.must(swapId);
    if (stepForward(this.book.rules, swap)) this.webhooks.auto(swap);
    return view(swap, this.options);
  }

  swaps(): SimSwapView[] {
    return this.book.all().map((s) => view(s, this.options));
  }

  swap(swapId: string): SimSwapView | undefined {
    const s = this.book.get(swapId);
    return s && view(s, this.options);
  }

  calls(operation?: PartnerOperation): SimCall[] {
    return this.callLog.filter((c) => operation === undefined || c.operation === operation);
  }

  webhookDeliveries(): WebhookDelivery[] {
    return this.webhooks.all();
  }

  settled(): Promise<void> {
    return this.webhooks.settled();
  }

  setCurrencies(currencies: readonly SimCurrency[]): void {
    this.pricing.currencies = [...currencies];
  }

  setPairs(pairs: readonly SimPair[]): void {
    this.pricing.pairs = [...pairs];
  }

  pushWebhook(swapId: string, overrides: Partial<StatusWebhookRequest> = {}): Promise<WebhookDelivery> {
    return this.webhooks.push(swapId, overrides);
  }

  private tick(): void {
    for (const swap of this.book.all()) if (stepForward(this.book.rules, swap)) this.webhooks.auto(swap);
  }

  private answer(
    operation: PartnerOperation,
    query: Record<string, string>,
    body: unknown,
    fault: CallFault | undefined,
  ): Promise<Reply | 'dropped'> {
    const route = (): unknown => {
      switch (operation) {
        case 'currencies':
          return this.pricing.list(this.pricing.currencies.map(wireCurrency), 'currencies', query, fault);
        case 'pairs':
          return this.pricing.list(this.pricing.pairs.map(wirePair), 'pairs', query, fault);
        case 'quote':
          return this.pricing.quote(requestObject(body));
        case 'swap-fixed':
          return this.book.create('fixed', requestObject(body));
        case 'swap-float':
          return this.book.create('float', requestObject(body));
        case 'status':
          return this.book.status(query, (swap) => this.webhooks.auto(swap));
      }
    };
    return answerWithFault(operation, fault, route, this.closing.signal, this.now);
  }
}
