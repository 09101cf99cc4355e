import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../../src/observability/metrics.ts';

describe('metrics registry', () => {
  it('exposes labelled counters and histograms in the Prometheus text format', () => {
    const registry = new MetricsRegistry();
    const responses = registry.counter('webhook_responses_total', 'Responses\nby status', [
      'provider',
      'status',
    ]);
    const latency = registry.histogram('latency_seconds', 'Latency', ['status'], [0.01, 0.1]);
    responses.inc({ provider: 'a', status: '200' });
    responses.inc({ status: '200', provider: 'a' }, 2);
    responses.inc({ provider: 'we"ird\\', status: '401' });
    latency.observe({ status: '200' }, 0.005);
    latency.observe({ status: '200' }, 0.05);
    latency.observe({ status: '200' }, 3);
    expect(responses.get({ provider: 'a', status: '200' })).toBe(3);
    expect(latency.count({ status: '200' })).toBe(3);
    expect(registry.expose()).toBe(
      [
        '# HELP webhook_responses_total Responses\\nby status',
        '# TYPE webhook_responses_total counter',
        'webhook_responses_total{provider="a",status="200"} 3',
        'webhook_responses_total{provider="we\\"ird\\\\",status="401"} 1',
        '# HELP latency_seconds Latency',
        '# TYPE latency_seconds histogram',
        'latency_seconds_bucket{status="200",le="0.01"} 1',
        'latency_seconds_bucket{status="200",le="0.1"} 2',
        'latency_seconds_bucket{status="200",le="+Inf"} 3',
        'latency_seconds_sum{status="200"} 3.055',
        'latency_seconds_count{status="200"} 3',
        '',
      ].join('\n'),
    );
  });

  it('refuses wrong labels, a falling counter, duplicate names and unordered buckets', () => {
    const registry = new MetricsRegistry();
    const c = registry.counter('c_total', 'c', ['a']);
    expect(() => c.inc({ b: 'x' })).toThrow(/takes labels a/);
    expect(() => c.inc({ a: 'x' }, -1)).toThrow(/only goes up/);
    expect(() => registry.counter('c_total', 'again')).toThrow(/twice/);
    expect(() => registry.histogram('h', 'h', [], [1, 1])).toThrow(/increasing/);
    expect(() => registry.counter('bad-name', 'x')).toThrow(/not valid/);
  });
});
