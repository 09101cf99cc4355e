import client from 'prom-client';

/**
 * Metrics through prom-client. A MetricsRegistry is one prom-client Registry plus short factories, so
 * call sites stay one line; each process serves its registry on its own metrics listener
 * (./listener.ts), never on a partner- or wallet-facing port. Label values come from our own code
 * (status codes, outcomes, reason codes), never raw from a request, so series stay bounded.
 */

export type Counter = client.Counter<string>;
export type Gauge = client.Gauge<string>;
export type Histogram = client.Histogram<string>;
type Labels = Readonly<Record<string, string | number>>;

/** Every metric this code registers is named `swap_ledger_*` (alerts and the dashboard rely on it). */
export const METRIC_PREFIX = 'swap_ledger_';

export class MetricsRegistry {
  readonly prom = new client.Registry();

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return new client.Counter({ name, help, labelNames, registers: [this.prom] });
  }

  gauge(
    name: string,
    help: string,
    labelNames: readonly string[] = [],
    collect?: (this: Gauge) => void | Promise<void>,
  ): Gauge {
    return new client.Gauge({
      name,
      help,
      labelNames,
      registers: [this.prom],
      ...(collect ? { collect } : {}),
    });
  }

  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ): Histogram {
    return new client.Histogram({ name, help, labelNames, buckets: [...buckets], registers: [this.prom] });
  }

  /** Node's own metrics (event loop lag, heap, GC, handles), once per process registry. */
  collectDefaults(): void {
    client.collectDefaultMetrics({ register: this.prom });
  }

  /** The Prometheus text exposition of every metric. */
  expose(): Promise<string> {
    return this.prom.metrics();
  }

  get contentType(): string {
    return this.prom.contentType;
  }

  /** Names of every registered metric (the alert rules are checked against these). */
  names(): string[] {
    return this.prom.getMetricsAsArray().map((m) => m.name);
  }
}

/** The current value of one series of a counter or gauge (0 if never set), or a histogram's count. */
export async function valueOf(metric: Counter | Gauge | Histogram, labels: Labels = {}): Promise<number> {
  const { values } = await metric.get();
  const wanted = Object.entries(labels).map(([k, v]) => [k, String(v)] as const);
  const isHistogram = (metric as { observe?: unknown }).observe !== undefined;
  const match = values.find(
    (v) =>
      (!isHistogram || (v as { metricName?: string }).metricName?.endsWith('_count')) &&
      Object.keys(v.labels).filter((k) => k !== 'le').length === wanted.length &&
      wanted.every(([k, val]) => String(v.labels[k]) === val),
  );
  return match?.value ?? 0;
}
