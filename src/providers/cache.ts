import type { Logger } from '../observability/log.ts';
import { ApiKeyIndex } from './api-keys.ts';
import { type Db } from './store.ts';
import { readRegistry, type ProviderRuntime } from './reads.ts';

/** One consistent view of the registry: swapped whole on each refresh, never edited in place. */
export interface RegistrySnapshot {
  readonly keys: ApiKeyIndex;
  readonly providers: ReadonlyMap<string, ProviderRuntime>;
  /** Date.now() of the read. */
  readonly loadedAt: number;
}

export interface RegistryCacheOptions {
  /** Re-read interval: how long a revoked key or a changed mapping may take to reach this process. */
  refreshMs: number;
  logger?: Logger;
}

/**
 * The provider registry held in memory, so authenticating a webhook never touches Postgres. It is
 * re-read every `refreshMs`; a failed re-read keeps the last good snapshot (and logs), and the first
 * read must succeed for `start` to resolve.
 */
export class ProviderRegistryCache {
  private current: RegistrySnapshot | undefined;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly options: RegistryCacheOptions,
  ) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => {
      this.refresh().catch((e: unknown) =>
        this.options.logger?.warn({ err: e }, 'provider registry refresh failed; keeping the last snapshot'),
      );
    }, this.options.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  snapshot(): RegistrySnapshot {
    if (!this.current) throw new Error('provider registry not loaded yet');
    return this.current;
  }

  /** Re-reads now (concurrent calls share one read). */
  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const data = await readRegistry(this.db);
        this.current = {
          keys: new ApiKeyIndex(data.keys),
          providers: new Map(data.providers.map((p) => [p.id, p])),
          loadedAt: Date.now(),
        };
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }
}
