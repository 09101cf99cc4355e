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
  it('adds each group’s processes: one that started counts whole, one that ended through its parent', () => {
    const before = reading(1, 10, [
      [100, 'postgres', 5], // the postmaster
      [101, 'postgres', 2], // a backend that ends before the second reading
      [200, 'kafka', 30],
    ]);
    const after = reading(3, 16, [
      // The postmaster's own 0.5 s more, and in its cutime/cstime the ended backend's 2.3 s in all.
      [100, 'postgres', 5.5 + 2.3],
      [102, 'postgres', 0.25], // a backend that started in between
      [200, 'kafka', 30.5],
      [300, 'registry', 40], // first seen now: all its seconds count
    ]);
    expect(cpuPerItem(before, after, 1000)).toEqual({
      self: 2000,
      postgres: 1050, // 0.5 + 0.3 (the ended backend's last) + 0.25
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
