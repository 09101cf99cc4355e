/**
 * A tiny in-process metrics registry: counters and histograms with labels, exposed in the Prometheus
 * text format (version 0.0.4). Enough for the webhook's refusal counts and latencies without a
 * dependency. Label values come from our own code (status codes, authenticated provider ids), never
 * raw from a request, so series stay bounded.
 */

type Labels = Readonly<Record<string, string>>;

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatNumber(n: number): string {
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  if (Number.isNaN(n)) return 'NaN';
  return String(n);
}

abstract class Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    if (!NAME.test(name)) throw new Error(`metric name ${name} is not valid`);
    for (const l of labelNames) if (!LABEL.test(l) || l === 'le') throw new Error(`label ${l} is not valid`);
  }

  protected key(labels: Labels): string {
    const names = Object.keys(labels);
    if (names.length !== this.labelNames.length || !this.labelNames.every((n) => n in labels))
      throw new Error(`${this.name} takes labels ${this.labelNames.join(', ')}, got ${names.join(', ')}`);
    return JSON.stringify(this.labelNames.map((n) => labels[n]));
  }

  protected render(values: readonly string[], extra: [string, string][] = []): string {
    const pairs: [string, string][] = [
      ...this.labelNames.map((n, i): [string, string] => [n, values[i]!]),
      ...extra,
    ];
    if (pairs.length === 0) return '';
    return `{${pairs.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
  }

  abstract expose(): string[];
}

export class Counter extends Metric {
  private readonly values = new Map<string, number>();

  inc(labels: Labels = {}, by = 1): void {
    if (!(by >= 0)) throw new Error(`${this.name}: a counter only goes up`);
    const k = this.key(labels);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }

  get(labels: Labels = {}): number {
    return this.values.get(this.key(labels)) ?? 0;
  }

  expose(): string[] {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of this.values)
      lines.push(`${this.name}${this.render(JSON.parse(k) as string[])} ${formatNumber(v)}`);
    return lines;
  }
}

export class Histogram extends Metric {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
    if (buckets.length === 0 || buckets.some((b, i) => i > 0 && b <= buckets[i - 1]!))
      throw new Error(`${name}: buckets must be increasing`);
  }

  observe(labels: Labels, value: number): void {
    const k = this.key(labels);
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    this.buckets.forEach((b, i) => {
      if (value <= b) s.counts[i]!++;
    });
    s.sum += value;
    s.count++;
  }

  /** Observations so far (tests). */
  count(labels: Labels = {}): number {
    return this.series.get(this.key(labels))?.count ?? 0;
  }

  sum(labels: Labels = {}): number {
    return this.series.get(this.key(labels))?.sum ?? 0;
  }

  expose(): string[] {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of this.series) {
      const values = JSON.parse(k) as string[];
      this.buckets.forEach((b, i) =>
        lines.push(`${this.name}_bucket${this.render(values, [['le', formatNumber(b)]])} ${s.counts[i]}`),
      );
      lines.push(`${this.name}_bucket${this.render(values, [['le', '+Inf']])} ${s.count}`);
      lines.push(`${this.name}_sum${this.render(values)} ${formatNumber(s.sum)}`);
      lines.push(`${this.name}_count${this.render(values)} ${s.count}`);
    }
    return lines;
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.register(new Counter(name, help, labelNames));
  }

  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ): Histogram {
    return this.register(new Histogram(name, help, labelNames, buckets));
  }

  private register<M extends Metric>(metric: M): M {
    if (this.metrics.has(metric.name)) throw new Error(`metric ${metric.name} is registered twice`);
    this.metrics.set(metric.name, metric);
    return metric;
  }

  /** The Prometheus text exposition of every metric. */
  expose(): string {
    return [...this.metrics.values()].flatMap((m) => m.expose()).join('\n') + '\n';
  }
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
