import { describe, expect, it } from 'vitest';
import { intOption, type BenchResult } from '../../bench/common.ts';
import { renderTable } from '../../bench/readme.ts';

const result: BenchResult = {
  kind: 'bench',
  date: '2026-11-23T11:11:06.887Z',
  machine: {
    cores: 2,
    cpu: 'AMD EPYC',
    memoryGiB: 23.5,
    loadAverage: { start: 27.45, end: 19.83 },
    node: 'v20.20.2',
  },
  options: { events: 60000, batch: 5000 },
  figures: [
    {
      name: 'projector batched write path, 60,000 events',
      value: 2848,
      unit: 'ev/s',
      reference: { name: 'raw COPY of the same rows', value: 6667, unit: 'ev/s' },
      ratio: 2848 / 6667,
      goal: '>= 60% of COPY',
      pass: false,
    },
    {
      name: 'replay peak RSS, 60,000 events',
      value: 265,
      unit: 'MiB',
      ratio: 1.2,
      goal: '<= 1.25x',
      pass: true,
    },
    { name: 'append to Kafka (acks=all), 60,000 events', value: 6300, unit: 'ev/s', goal: 'none' },
  ],
};

describe('bench README table', () => {
  it('states the machine, the load and the options, then one row per figure with its verdict', () => {
    const lines = renderTable([result]).split('\n');
    expect(lines[0]).toBe(
      '`npm run bench` on 2026-11-23 11:11 UTC: 2 cores (AMD EPYC), 23.5 GiB, Node v20.20.2, load average 27.45 -> 19.83; events 60000, batch 5000.',
    );
    expect(lines).toContain(
      '| projector batched write path, 60,000 events | 2,848 ev/s | 6,667 ev/s (raw COPY of the same rows) | 43% | >= 60% of COPY | **FAIL** |',
    );
    expect(lines).toContain('| replay peak RSS, 60,000 events | 265 MiB |  | 120% | <= 1.25x | PASS |');
    expect(lines).toContain('| append to Kafka (acks=all), 60,000 events | 6,300 ev/s |  |  | none |  |');
  });
});

describe('bench options', () => {
  it('reads --name N, falls back when absent, and refuses what is not a positive integer', () => {
    expect(intOption('events', 60000, ['node', 'run.ts', '--events', '1000000'])).toBe(1_000_000);
    expect(intOption('events', 60000, ['node', 'run.ts'])).toBe(60000);
    for (const bad of ['0', '-5', '1e6', 'many', undefined])
      expect(() => intOption('events', 1, ['node', 'run.ts', '--events', ...(bad ? [bad] : [])])).toThrow(
        /--events needs a positive integer/,
      );
  });
});
