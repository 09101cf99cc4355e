/**
 * The per-provider status mapping, shared by every ingest path (webhook, poller): a partner's raw
 * status string becomes an internal status, and whether that status is final is decided here, at
 * ingest, and written into the StatusReported event. The projector never reads configuration, so a
 * later change of a mapping never changes what a replay rebuilds.
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

/** Final statuses unless a provider says otherwise (DESIGN.md, "Status rules"). */
export const DEFAULT_FINAL_STATUSES: readonly InternalStatus[] = ['FINISHED', 'REFUNDED', 'EXPIRED'];

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
  return { providerStatus, status, final: mapping.finals.has(status) };
}
