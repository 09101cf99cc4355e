import type { StatusReported } from '../events/types.ts';
import { reportDifferences, reportValues, REPORT_FIELDS, type ReportedSwap } from '../swap/report.ts';

/**
 * Change detection of the poller, pure: a poll result is appended only when the projector would change
 * something with it, by the fold's own rule (reportDifferences, src/swap/report.ts). A swap the projector
 * has not folded yet (only the gateway's created_swaps knows it) counts as CREATED with nothing known, so
 * any report changes it.
 */

/** A swap of the polling set as the projection shows it (`version` null: not projected yet). */
export interface PolledSwap extends ReportedSwap {
  readonly swapId: string;
  readonly providerId: string;
  readonly version: number | null;
}

/**
 * What the report would change on the swap: `status`, `statusClass`, `final` and value names; for a final
 * swap, the values it fills and the fields it contradicts (the fold records those: worth appending).
 */
export function changesOf(swap: PolledSwap, report: StatusReported): string[] {
  const d = reportDifferences(swap, report);
  if (d.kind === 'open') return Object.keys(d.changes);
  return [...Object.keys(d.fills), ...d.conflicts.map((c) => `conflict:${c.field}`)];
}

/** A text that is equal for two reports that would change the same things the same way. */
export function reportFingerprint(r: StatusReported): string {
  const v = reportValues(r);
  return JSON.stringify([r.status, r.statusClass, r.final, ...REPORT_FIELDS.map((f) => v[f])]);
}
