/**
 * Swap statuses and their classes, and the per-provider status mapping shared by every ingest path
 * (webhook, poller): a partner's raw status string becomes an internal status, and its class (open,
 * closed, final) is decided here, at ingest, and written into the StatusReported event. The projector
 * never reads configuration, so a later change of a mapping never changes what a replay rebuilds.
 */

/** The internal statuses (partner interface v2, Status.status). */
export const INTERNAL_STATUSES = [
  'FINISHED',
  'EXPIRED',
  'ON_HOLD',
  'PENDING',
  'REFUNDED',
  'UNKNOWN',
] as const;
export type InternalStatus = (typeof INTERNAL_STATUSES)[number];

/** The statuses the posting rules and the reconciler's outcomes name one by one. */
export const FINISHED = 'FINISHED' satisfies InternalStatus;
export const REFUNDED = 'REFUNDED' satisfies InternalStatus;
export const EXPIRED = 'EXPIRED' satisfies InternalStatus;

/** The status of a swap the partner created and has not reported on yet (the fold's own). */
export const CREATED_STATUS = 'CREATED';

/**
 * open: the swap may still change. closed: it ended without moving money but may reopen (a deposit that
 * arrives after expiry is processed by real partners: a later FINISHED or REFUNDED applies). final: its
 * status and known figures never change again, except by an operator's SwapCorrected.
 */
export type StatusClass = 'open' | 'closed' | 'final';
export const STATUS_CLASSES: readonly StatusClass[] = ['open', 'closed', 'final'];

/** Final statuses unless a provider says otherwise (docs/architecture.md, "Statuses"). */
export const DEFAULT_FINAL_STATUSES: readonly InternalStatus[] = [FINISHED, REFUNDED];
/** Closed-but-reopenable statuses, unless a provider lists one of them among its final ones. */
export const CLOSED_STATUSES: readonly InternalStatus[] = [EXPIRED];
/** The statuses in which a swap has ended by default (final or closed): the console's "ended" count. */
export const ENDED_STATUSES: readonly InternalStatus[] = [...DEFAULT_FINAL_STATUSES, ...CLOSED_STATUSES];
/** The internal statuses in the order a swap lives through them, for lists and filters. */
export const LIFECYCLE_ORDER: readonly InternalStatus[] = [
  'PENDING',
  'ON_HOLD',
  'UNKNOWN',
  'EXPIRED',
  'FINISHED',
  'REFUNDED',
];

/** The class of a status under a provider's final set. */
export function statusClassOf(status: string, finals: ReadonlySet<string>): StatusClass {
  if (finals.has(status)) return 'final';
  return (CLOSED_STATUSES as readonly string[]).includes(status) ? 'closed' : 'open';
}

/**
 * Why a swap may not stand at `status` with finality `final`, or undefined when it may: the statuses of
 * the open class (PENDING, ON_HOLD, UNKNOWN, and the fold's CREATED) are never final, FINISHED and REFUNDED
 * (money moved, or was given back) always are, and EXPIRED may be either (closed by default, final where a
 * provider lists it). Only a SwapCorrected sets both at once; the fold checks it too, so an event that
 * bypassed the command cannot make a "PENDING, final" swap whose postings are all reversed.
 */
export function finalityProblem(status: string, final: boolean): string | undefined {
  if (
    final &&
    !(DEFAULT_FINAL_STATUSES as readonly string[]).includes(status) &&
    !(CLOSED_STATUSES as readonly string[]).includes(status)
  )
    return `${status} is an open status and never final`;
  if (!final && (DEFAULT_FINAL_STATUSES as readonly string[]).includes(status))
    return `${status} is a final status and never open`;
  return undefined;
}

export function isInternalStatus(value: unknown): value is InternalStatus {
  return typeof value === 'string' && (INTERNAL_STATUSES as readonly string[]).includes(value);
}

/** A provider's effective mapping: exact partner string to internal status, and its final statuses. */
export interface StatusMapping {
  readonly statuses: ReadonlyMap<string, InternalStatus>;
  readonly finals: ReadonlySet<InternalStatus>;
}

export interface MappedStatus {
  readonly providerStatus: string;
  readonly status: InternalStatus;
  readonly statusClass: StatusClass;
  /** statusClass === 'final', kept for the event's `final` field. */
  readonly final: boolean;
}

export class StatusMappingError extends Error {
  override name = 'StatusMappingError';
}

/**
 * The effective mapping of a provider: the identity for the six internal statuses, then the
 * provider's entries, which add partner strings or override defaults; an entry mapped to `null`
 * removes a default (that string is then refused). Matching is exact (case and spaces count): a
 * partner that sends "finished" needs an entry for it.
 */
export function buildStatusMapping(
  overrides: Readonly<Record<string, string | null>> = {},
  finals: readonly string[] = DEFAULT_FINAL_STATUSES,
): StatusMapping {
  const statuses = new Map<string, InternalStatus>(INTERNAL_STATUSES.map((s) => [s, s]));
  for (const [partner, internal] of Object.entries(overrides)) {
    if (partner === '') throw new StatusMappingError('a partner status must not be empty');
    if (internal === null) statuses.delete(partner);
    else if (isInternalStatus(internal)) statuses.set(partner, internal);
    else
      throw new StatusMappingError(
        `partner status ${JSON.stringify(partner)} maps to ${JSON.stringify(internal)}, not one of ${INTERNAL_STATUSES.join(', ')}`,
      );
  }
  return { statuses, finals: finalSet(finals) };
}

/** A mapping from stored rows (the effective map as loaded into Postgres). */
export function statusMappingFromEntries(
  entries: Iterable<readonly [string, string]>,
  finals: readonly string[],
): StatusMapping {
  const statuses = new Map<string, InternalStatus>();
  for (const [partner, internal] of entries) {
    if (!isInternalStatus(internal))
      throw new StatusMappingError(`stored mapping ${partner} -> ${internal} is not an internal status`);
    statuses.set(partner, internal);
  }
  return { statuses, finals: finalSet(finals) };
}

function finalSet(finals: readonly string[]): ReadonlySet<InternalStatus> {
  for (const f of finals)
    if (!isInternalStatus(f))
      throw new StatusMappingError(
        `final status ${JSON.stringify(f)} is not one of ${INTERNAL_STATUSES.join(', ')}`,
      );
  return new Set(finals as InternalStatus[]);
}

/** The internal status and final flag of a partner status, or undefined when it cannot be mapped. */
export function mapStatus(mapping: StatusMapping, providerStatus: string): MappedStatus | undefined {
  const status = mapping.statuses.get(providerStatus);
  if (status === undefined) return undefined;
  const statusClass = statusClassOf(status, mapping.finals);
  return { providerStatus, status, statusClass, final: statusClass === 'final' };
}
