import { describe, expect, it } from 'vitest';
import { replayFigures, replayTimeFigure, type ReplayMeasured } from '../../bench/replay-figures.ts';
import { renderTable } from '../../bench/readme.ts';

const measured = (events: number, seconds: number): ReplayMeasured => ({
  appended: events,
  appendSeconds: events / 40_000,
  full: { events, seconds, peakRssMiB: 466 },
  tenth: { events: Math.round(events / 10), peakRssMiB: 400 },
  fold: { events: 60_000, rate: 22_132 },
  note: 'phases',
});

const rows = (events: number, seconds: number) =>
  renderTable([
    {
      kind: 'bench',
      date: '2026-12-01T21:00:00.000Z',
      machine: { cores: 2, cpu: 'AMD EPYC', memoryGiB: 23.5, loadAverage: { start: 1, end: 1 }, node: 'v20' },
      options: { events },
      figures: replayFigures(measured(events, seconds)),
    },
  ])
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| figure'));

describe("npm run bench's replay figures", () => {
  it('at the default 60,000 events: each name says 60,000, no verdict against 1M, and bench:growth named for it', () => {
    const figures = replayFigures(measured(60_000, 6.8));
    for (const f of figures) expect(f.name).toMatch(/, 60,000 events$/);
    expect(figures.map((f) => f.name).join(' ')).not.toMatch(/1M|1,000,000|million/i);
    const rate = figures.find((f) => f.name.startsWith('replay from Kafka'))!;
    const time = figures.find((f) => f.name.startsWith('replay time'))!;
    for (const f of [rate, time]) {
      expect(f.pass, f.name).toBeUndefined();
      expect(f.goal).toContain('npm run bench:growth');
    }
    expect(rate.reference?.name).toBe('batched fold of 60,000 events, no Kafka, 1 partition');
    expect(rows(60_000, 6.8)).toEqual([
      '| append to Kafka (acks=all), 60,000 events | 40,000 ev/s |  |  | none (input of the replay) |  |',
      '| replay from Kafka end to end, 60,000 events | 8,824 ev/s | 22,132 ev/s (batched fold of 60,000 events, no Kafka, 1 partition) | 40% | none at this size (the 1M rate: npm run bench:growth replays 1M) |  |',
      '| replay time, 60,000 events | 6.8 s |  |  | none at this size (1M in < 60 s: npm run bench:growth replays 1M) |  |',
      '| replay peak RSS, 60,000 events | 466 MiB | 400 MiB (peak RSS at 6,000 events (N/10)) | 117% | <= 1.25x of N/10 | PASS |',
    ]);
  });

  it('at 1M events: judged against the goal of 1M in < 60 s', () => {
    expect(rows(1_000_000, 52.5)).toEqual([
      '| append to Kafka (acks=all), 1,000,000 events | 40,000 ev/s |  |  | none (input of the replay) |  |',
      '| replay from Kafka end to end, 1,000,000 events | 19,048 ev/s | 22,132 ev/s (batched fold of 60,000 events, no Kafka, 1 partition) | 86% | >= 16,667 ev/s (1M in < 60 s) | PASS |',
      '| replay time, 1,000,000 events | 52.5 s |  |  | < 60 s (1M in < 60 s) | PASS |',
      '| replay peak RSS, 1,000,000 events | 466 MiB | 400 MiB (peak RSS at 100,000 events (N/10)) | 117% | <= 1.25x of N/10 | PASS |',
    ]);
    const slow = replayFigures(measured(1_000_000, 61));
    expect(slow.filter((f) => f.pass === false).map((f) => f.name)).toEqual([
      'replay from Kafka end to end, 1,000,000 events',
      'replay time, 1,000,000 events',
    ]);
  });
});

describe("bench:growth's replay time", () => {
  it('names the events its 1M step rebuilt (a share of each partition) and judges them per million', () => {
    const f = replayTimeFigure(999_996, 59.9, true);
    expect(f).toMatchObject({
      name: 'replay time, 999,996 events',
      value: 59.9,
      goal: '< 60 s (1M in < 60 s)',
      pass: true,
    });
    expect(replayTimeFigure(3_000_000, 181, true)).toMatchObject({
      goal: '< 180 s (1M in < 60 s)',
      pass: false,
    });
  });
});
