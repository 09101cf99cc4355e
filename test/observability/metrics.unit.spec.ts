import { describe, expect, it } from 'vitest';
import { MetricsRegistry, valueOf } from '../../src/observability/metrics.ts';

describe('metrics registry (prom-client)', () => {
  it('exposes labelled counters, gauges and histograms in the Prometheus text format', async () => {
    const registry = new MetricsRegistry();
    const responses = registry.counter('swap_ledger_t_responses_total', 'Responses\nby status', ['status']);
    const latency = registry.histogram('swap_ledger_t_latency_seconds', 'Latency', ['status'], [0.01, 0.1]);
    let collected = 0;
    registry.gauge('swap_ledger_t_depth', 'Depth', [], function () {
      this.set(++collected * 10);
    });
    responses.inc({ status: '200' });
    responses.inc({ status: '200' }, 2);
    responses.inc({ status: 'we"ird\\' });
    latency.observe({ status: '200' }, 0.005);
    latency.observe({ status: '200' }, 0.05);
    latency.observe({ status: '200' }, 3);
    expect(await valueOf(responses, { status: '200' })).toBe(3);
    expect(await valueOf(responses, { status: '500' })).toBe(0);
    expect(await valueOf(latency, { status: '200' })).toBe(3);
    const text = await registry.expose();
    expect(registry.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text).toContain('# HELP swap_ledger_t_responses_total Responses\\nby status');
    expect(text).toContain('swap_ledger_t_responses_total{status="200"} 3');
    expect(text).toContain('swap_ledger_t_responses_total{status="we\\"ird\\\\"} 1');
    expect(text).toContain('swap_ledger_t_latency_seconds_bucket{le="0.1",status="200"} 2');
    expect(text).toContain('swap_ledger_t_latency_seconds_count{status="200"} 3');
    // A gauge with a collect function is read at each scrape.
    expect(text).toMatch(/^swap_ledger_t_depth \d+$/m);
    expect(await registry.expose()).toContain(`swap_ledger_t_depth ${collected * 10}`);
    expect(registry.names()).toEqual([
      'swap_ledger_t_responses_total',
      'swap_ledger_t_latency_seconds',
      'swap_ledger_t_depth',
    ]);
  });

  it('refuses wrong labels, a falling counter and duplicate names', () => {
    const registry = new MetricsRegistry();
    const c = registry.counter('c_total', 'c', ['a']);
    expect(() => c.inc({ b: 'x' })).toThrow(/label/i);
    expect(() => c.inc({ a: 'x' }, -1)).toThrow(/decrease/);
    expect(() => registry.counter('c_total', 'again')).toThrow(/already been registered/);
    // Two registries are independent (two servers in one test process).
    expect(() => new MetricsRegistry().counter('c_total', 'c')).not.toThrow();
  });
});
