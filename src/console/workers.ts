import { readWorkerHealth, type WorkerEndpoint, type WorkerHealth } from '../observability/worker-health.ts';
import { badge, html, table, type Html } from './html.ts';

/**
 * Each worker's /readyz, read for the operations page. Every page refresh (3 s, per viewer) would
 * otherwise make every worker check Kafka, the registry and Postgres again: answers are kept briefly.
 */
export class WorkerHealthBoard {
  private cached: { at: number; health: Promise<WorkerHealth[]> } | undefined;

  constructor(
    readonly workers: readonly WorkerEndpoint[],
    private readonly options: { maxAgeMs?: number; timeoutMs?: number } = {},
  ) {}

  read(): Promise<WorkerHealth[]> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at > (this.options.maxAgeMs ?? 5000))
      this.cached = {
        at: now,
        health: Promise.all(this.workers.map((w) => readWorkerHealth(w.url, this.options.timeoutMs ?? 3000))),
      };
    return this.cached.health;
  }
}

const reasonOf = (h: WorkerHealth) => (h.state === 'ready' ? '' : h.reason);

/** The workers' table: name, state (ready / not ready / unreachable), the reason, where it was read. */
export async function workersSection(board: WorkerHealthBoard | undefined): Promise<Html> {
  if (!board || board.workers.length === 0)
    return html`<h2>Workers</h2>
      <p class="muted empty">
        no worker health endpoints configured (CONSOLE_WORKER_HEALTH; \`up\` sets it)
      </p>`;
  const health = await board.read();
  const notReady = health.filter((h) => h.state !== 'ready').length;
  return html`<h2>
      Workers <span class="muted">(${health.length - notReady} of ${health.length} ready)</span>
    </h2>
    ${table(
      ['worker', 'health', 'reason', '/readyz'],
      board.workers.map((w, i) => {
        const h = health[i]!;
        return [
          html`<span data-worker="${w.name}" data-health="${h.state}">${w.name}</span>`,
          badge(h.state),
          reasonOf(h),
          `${w.url}/readyz`,
        ];
      }),
    )}`;
}
