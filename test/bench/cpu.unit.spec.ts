import { describe, expect, it } from 'vitest';
import os from 'node:os';
import { coresAllow, cpuPerItem, cpuReading, type CpuReading } from '../../bench/common.ts';

const reading = (
  self: number,
  machine: number,
  processes: [number, 'postgres' | 'kafka' | 'registry', number][],
) =>
  ({
    self,
    machine,
    processes: new Map(processes.map(([pid, group, seconds]) => [pid, { group, seconds }])),
  }) satisfies CpuReading;

describe('CPU per item between two readings', () => {
  it('adds each group’s processes, counts a process that started whole and one that ended not at all', () => {
    const before = reading(1, 10, [
      [100, 'postgres', 5],
      [101, 'postgres', 2], // ends before the second reading
      [200, 'kafka', 30],
    ]);
    const after = reading(3, 16, [
      [100, 'postgres', 5.5],
      [102, 'postgres', 0.25], // a backend that started in between
      [200, 'kafka', 30.5],
      [300, 'registry', 40], // first seen now: all its seconds count
    ]);
    expect(cpuPerItem(before, after, 1000)).toEqual({
      self: 2000,
      postgres: 750,
      kafka: 500,
      registry: 40_000,
      machine: 6000,
    });
  });

  it('says what rate the cores allow at a cost per item', () => {
    const cores = os.availableParallelism();
    expect(coresAllow(1000)).toBe(cores * 1000);
    expect(coresAllow(400)).toBe(cores * 2500);
    expect(coresAllow(0)).toBe(cores * 1e6); // a cost under a microsecond: not a division by zero
  });

  it('reads this process and the machine from /proc, both moving forward', () => {
    const first = cpuReading();
    let x = 0;
    for (let i = 0; i < 5_000_000; i++) x += i % 7;
    const second = cpuReading();
    expect(x).toBeGreaterThan(0);
    expect(second.self).toBeGreaterThan(first.self);
    expect(second.machine).toBeGreaterThanOrEqual(first.machine);
    expect(first.machine).toBeGreaterThan(0);
  });
});
