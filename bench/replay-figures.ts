/**
 * The replay's figures, each named by what it measured. Issue 15's goal is 1M events rebuilt in < 60 s: only a
 * run that replayed 1M events or more is judged against it. A smaller run (`npm run bench` replays 60,000 by
 * default) says its own size and points to `npm run bench:growth`, which replays 1M; it never projects its
 * time or its rate to 1M (a small replay is dominated by its fixed costs: the group join, the partitions'
 * first fetches, the index builds and checksums).
 */
import { round, type Figure } from './common.ts';

export const MILLION = 1_000_000;
/** Issue 15: 1M events in less than this. */
export const GOAL_SECONDS = 60;
const GOAL_RATE = MILLION / GOAL_SECONDS;

export const count = (n: number) => n.toLocaleString('en');

/** Where the 1M figure is measured, for a run below it. */
export const AT_1M = 'npm run bench:growth replays 1M';

/**
 * The replay's time on the `events` it rebuilt. `atScale`: the run was sized for 1M or more (bench:growth's
 * 1M step is a share of each partition, a few events short of it), so it is judged, per million events.
 */
export function replayTimeFigure(
  events: number,
  seconds: number,
  atScale = events >= MILLION,
  note?: string,
): Figure {
  const name = `replay time, ${count(events)} events`;
  const value = round(seconds, 1);
  if (!atScale)
    return {
      name,
      value,
      unit: 's',
      goal: `none at this size (1M in < ${GOAL_SECONDS} s: ${AT_1M})`,
      note: note ?? `measured on ${count(events)} events, not extrapolated to 1M`,
    };
  const limit = round((GOAL_SECONDS * events) / MILLION, 1);
  return {
    name,
    value,
    unit: 's',
    goal: `< ${count(limit)} s (1M in < ${GOAL_SECONDS} s)`,
    pass: seconds < (GOAL_SECONDS * events) / MILLION,
    ...(note ? { note } : {}),
  };
}

export interface ReplayMeasured {
  /** Events appended to the topic before the replay, and the seconds that took. */
  appended: number;
  appendSeconds: number;
  full: { events: number; seconds: number; peakRssMiB: number };
  tenth: { events: number; peakRssMiB: number };
  /** The projector's batched fold of `events` (one partition, no Kafka), the replay's reference. */
  fold: { events: number; rate: number };
  /** The replay's details (phases, CPU, checksum), printed under the table. */
  note: string;
}

/** `npm run bench`'s replay figures, every name saying how many events it measured. */
export function replayFigures(m: ReplayMeasured): Figure[] {
  const n = count(m.full.events);
  const atScale = m.full.events >= MILLION;
  const rate = Math.round(m.full.events / m.full.seconds);
  const rssRatio = m.full.peakRssMiB / m.tenth.peakRssMiB;
  return [
    {
      name: `append to Kafka (acks=all), ${count(m.appended)} events`,
      value: Math.round(m.appended / m.appendSeconds),
      unit: 'ev/s',
      goal: 'none (input of the replay)',
    },
    {
      name: `replay from Kafka end to end, ${n} events`,
      value: rate,
      unit: 'ev/s',
      reference: {
        name: `batched fold of ${count(m.fold.events)} events, no Kafka, 1 partition`,
        value: m.fold.rate,
        unit: 'ev/s',
      },
      ratio: rate / m.fold.rate,
      ...(atScale
        ? {
            goal: `>= ${count(Math.round(GOAL_RATE))} ev/s (1M in < ${GOAL_SECONDS} s)`,
            pass: rate >= GOAL_RATE,
          }
        : { goal: `none at this size (the 1M rate: ${AT_1M})` }),
      note: m.note,
    },
    replayTimeFigure(m.full.events, m.full.seconds, atScale),
    {
      name: `replay peak RSS, ${n} events`,
      value: m.full.peakRssMiB,
      unit: 'MiB',
      reference: {
        name: `peak RSS at ${count(m.tenth.events)} events (N/10)`,
        value: m.tenth.peakRssMiB,
        unit: 'MiB',
      },
      ratio: rssRatio,
      goal: '<= 1.25x of N/10',
      pass: rssRatio <= 1.25,
    },
  ];
}
