import { lastSync, readCurrencies, readPairs } from '../catalog/index.ts';
import { refusal, type Answer } from './answers.ts';
import type { GatewayServiceDeps, QuoteBody } from './deps.ts';
import type { ProviderPartner } from '../providers/clients.ts';
import { quoteFlow } from './quote-flow.ts';
import { checkQuoteBody, type SwapBody } from './rules.ts';
import { SwapFlow } from './swap-flow.ts';

export { partnerFailure } from './answers.ts';
export type { Answer } from './answers.ts';

export type { GatewayServiceDeps, QuoteBody } from './deps.ts';

/**
 * The gateway's logic, without HTTP: list the catalog, quote, create swaps. Every refusal before a
 * partner call stores nothing; every partner answer is recorded as an event (QuoteReceived,
 * QuoteRejected, SwapRequested before the swap call, then SwapCreated or SwapCreationFailed).
 */
export class GatewayService {
  private readonly swaps: SwapFlow;

  constructor(private readonly deps: GatewayServiceDeps) {
    this.swaps = new SwapFlow(deps);
  }

  private async provider(providerId: string): Promise<ProviderPartner | Answer> {
    const partner = await this.deps.partners.get(providerId);
    if (!partner)
      return refusal({ status: 404, reason: 'unknown_provider', error: `no provider ${providerId}` });
    if (!partner.setup.enabled)
      return refusal({
        status: 403,
        reason: 'provider_disabled',
        error: `provider ${providerId} is disabled`,
      });
    return partner;
  }

  async currencies(providerId: string, includeDisabled: boolean): Promise<Answer> {
    return this.catalog(providerId, 'currencies', async (p) =>
      (await readCurrencies(this.deps.pool, providerId, { includeDisabled })).map((c) => ({
        id: c.id,
        type: c.type,
        ...(c.chainId !== null ? { chainId: c.chainId } : { blockchain: c.blockchain }),
        ...(c.contract !== null ? { contract: c.contract } : {}),
        platformId: p.setup.currencies[c.id] ?? null,
        enabled: c.enabled,
      })),
    );
  }

  async pairs(
    providerId: string,
    filter: { from?: string | undefined; to?: string | undefined; includeDisabled: boolean },
  ): Promise<Answer> {
    return this.catalog(providerId, 'pairs', async () =>
      (await readPairs(this.deps.pool, providerId, filter)).map((x) => ({
        from: x.from,
        to: x.to,
        tradeMethods: x.tradeMethods,
        minAmount: x.minAmount,
        maxAmount: x.maxAmount,
        enabled: x.enabled,
      })),
    );
  }

  /** A catalog list of an enabled provider, with the time of its last sync. */
  private async catalog(
    providerId: string,
    key: 'currencies' | 'pairs',
    read: (p: ProviderPartner) => Promise<unknown[]>,
  ): Promise<Answer> {
    const p = await this.provider(providerId);
    if ('status' in p) return p;
    const [items, sync] = await Promise.all([read(p), lastSync(this.deps.pool, providerId)]);
    return { status: 200, body: { providerId, syncedAt: sync?.finishedAt ?? null, [key]: items } };
  }

  /** POST /v1/quotes. */
  async quote(body: QuoteBody): Promise<Answer> {
    const bounds = checkQuoteBody(body);
    if (bounds) return refusal(bounds);
    const p = await this.provider(body.providerId);
    if ('status' in p) return p;
    return quoteFlow(this.deps, p, body);
  }

  /** POST /v1/swaps. */
  createSwap(body: SwapBody, idempotencyKey: string): Promise<Answer> {
    return this.swaps.createSwap(body, idempotencyKey, (id) => this.provider(id));
  }
}
