import type { CaseState } from './machine.ts';

/** Why a case is told: it opened, it opened again after a resolution, or it stayed open past the age limit. */
export type CaseNotificationKind = 'opened' | 'reopened' | 'aged';

/** What the notifier reads of a case (the `cases` row). */
export interface NotifiedCase {
  readonly providerId: string;
  readonly swapId: string;
  readonly state: CaseState;
  readonly trigger: string;
  readonly openedAt: string;
  readonly openings: number;
  readonly amountAtStake: string | null;
  readonly stakeCurrency: string | null;
  readonly failing: string;
}

/**
 * One message owed, keyed so that it is owed once: (provider, swap, opening, kind). A replay rebuilds the same
 * cases with the same openings, so a rebuilt projection owes nothing new.
 */
export interface CaseNotification {
  readonly providerId: string;
  readonly swapId: string;
  readonly opening: number;
  readonly kind: CaseNotificationKind;
  readonly message: CaseNotificationMessage;
}

/**
 * The JSON posted to CASE_NOTIFY_URL: `text` is what chat webhooks (Slack, Mattermost, Teams' incoming
 * webhooks) show; `case` carries the same facts for a receiver that reads fields.
 */
export interface CaseNotificationMessage {
  readonly text: string;
  readonly case: {
    readonly provider: string;
    readonly swapId: string;
    readonly kind: CaseNotificationKind;
    readonly state: CaseState;
    readonly trigger: string;
    readonly opening: number;
    readonly openedAt: string;
    readonly amountAtStake: string | null;
    readonly currency: string | null;
    readonly failing: string;
  };
}

/**
 * The messages a case owes at `nowMs`: its opening (the first, or a reopening), and once per opening its
 * passing the age limit while unresolved. A resolved case owes its opening still (it may have opened and
 * settled between two rounds: it was opened all the same).
 */
export function owedNotifications(c: NotifiedCase, nowMs: number, ageLimitMs: number): CaseNotification[] {
  const owed: CaseNotification[] = [];
  const of = (kind: CaseNotificationKind): CaseNotification => ({
    providerId: c.providerId,
    swapId: c.swapId,
    opening: c.openings,
    kind,
    message: messageOf(c, kind),
  });
  owed.push(of(c.openings > 1 ? 'reopened' : 'opened'));
  if (c.state !== 'resolved' && nowMs - Date.parse(c.openedAt) >= ageLimitMs) owed.push(of('aged'));
  return owed;
}

function messageOf(c: NotifiedCase, kind: CaseNotificationKind): CaseNotificationMessage {
  const what = { opened: 'opened', reopened: 'reopened', aged: 'still open past its age limit' }[kind];
  const stake =
    c.amountAtStake !== null ? `, ${c.amountAtStake} ${c.stakeCurrency ?? ''} at stake`.trimEnd() : '';
  return {
    text: `swap-ledger: case ${c.providerId}/${c.swapId} ${what} (${c.trigger}${stake}; state ${c.state}, opened ${c.openedAt}): ${c.failing}`,
    case: {
      provider: c.providerId,
      swapId: c.swapId,
      kind,
      state: c.state,
      trigger: c.trigger,
      opening: c.openings,
      openedAt: c.openedAt,
      amountAtStake: c.amountAtStake,
      currency: c.stakeCurrency,
      failing: c.failing,
    },
  };
}

/** The wait before delivery attempt `attempts + 1` after `attempts` failures: 5 s doubling, at most an hour. */
export function notificationRetryMs(attempts: number): number {
  return Math.min(3_600_000, 5_000 * 2 ** Math.max(0, Math.min(attempts - 1, 20)));
}
