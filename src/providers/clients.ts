import { currencyDecimals } from '../money/currencies.ts';
import { PartnerClient, type PartnerClientOptions } from '../partner/client.ts';
import { type Db } from './store.ts';
import { readProviderSetup, type ProviderSetup } from './reads.ts';

/** A provider's setup as last read from the registry, and a partner client built from it. */
export interface ProviderPartner {
  readonly setup: ProviderSetup;
  readonly client: PartnerClient;
}

/**
 * Partner clients per provider for the processes that call partners (gateway, poller, catalog sync),
 * built from the registry in Postgres (readProviderSetup) and re-read after `refreshMs`, so an edited
 * base URL, credential or key list reaches a running process without a restart. A provider that is
 * unknown is `undefined`; a disabled one is returned (callers decide: the gateway refuses it).
 */
export class ProviderClients {
  private readonly cache = new Map<string, { at: number; value: Promise<ProviderPartner | undefined> }>();

  constructor(
    private readonly db: Db,
    private readonly options: {
      refreshMs: number;
      /** Applied over each provider's own client options (e.g. the poller's retry policy). */
      clientOverrides?: Partial<Omit<PartnerClientOptions, 'provider' | 'baseUrl' | 'payloadKeys'>>;
      now?: () => number;
      /** Where credential references are resolved from (this process's environment by default). */
      env?: NodeJS.ProcessEnv;
    },
  ) {}

  get(providerId: string): Promise<ProviderPartner | undefined> {
    const now = (this.options.now ?? Date.now)();
    const hit = this.cache.get(providerId);
    if (hit && now - hit.at < this.options.refreshMs) return hit.value;
    const value = readProviderSetup(this.db, providerId, this.options.env ?? process.env).then((setup) =>
      setup
        ? {
            setup,
            client: new PartnerClient({
              ...setup.client,
              payloadKeys: setup.payloadKeys,
              // A partner figure is refused with more decimals than its platform currency has.
              currencyDecimals: (id) => {
                const platformId = setup.currencies[id];
                return platformId === undefined ? undefined : currencyDecimals(platformId);
              },
              ...this.options.clientOverrides,
              retry: { ...setup.client.retry, ...this.options.clientOverrides?.retry },
            }),
          }
        : undefined,
    );
    // A failed read is not cached: the next call tries again.
    value.catch(() => this.cache.delete(providerId));
    this.cache.set(providerId, { at: now, value });
    return value;
  }

  /** Ids of the enabled providers. */
  async enabledIds(): Promise<string[]> {
    const r = await this.db.query<{ id: string }>(
      `select id from platform.providers where enabled order by id`,
    );
    return r.rows.map((row) => row.id);
  }
}
