import type pg from 'pg';
import { PLATFORM_SCHEMA } from '../db/platform-schema.ts';
import { sealEvidence, type EvidenceKey, type EvidencePack } from '../cases/evidence.ts';
import { decodeSwapPayload, describeSwapPayload } from '../payload/decode.ts';
import { formatSwapRef, type SwapRef } from '../swap/ref.ts';
import type { SwapCreated } from '../events/types.ts';

/**
 * Gathers a swap's evidence pack from the projection (and the partner's key from the platform schema):
 * the request, the quote, the signed payload raw and decoded with the key that verifies it, every partner
 * report with its time and channel, every chain observation with its source, the verdict history with each
 * check, the postings and the case. Sealed by src/cases/evidence.ts; `pool` searches the projection schema.
 */

export class EvidenceError extends Error {
  override name = 'EvidenceError';
}

type Row = Record<string, unknown>;

async function journal(pool: pg.Pool, where: string, params: unknown[]): Promise<Row[]> {
  const r = await pool.query(
    `select event_id, event_type, source, occurred_at, recorded_at, outcome, reason, topic, partition,
            "offset"::text as "offset", payload
       from event_journal where ${where} order by topic, partition, "offset"`,
    params,
  );
  return r.rows;
}

/** The channel a partner report came by: the webhook (push) or a status poll (pull). */
const channelOf = (source: string) =>
  source === 'webhook' ? 'webhook' : source === 'poll' ? 'GET /status (poll)' : source;

/** The key the swap names, else the newest one valid at its creation (the pack shows which; verify checks it). */
async function keyFor(
  pool: pg.Pool,
  providerId: string,
  keyId: string | null,
  createdAt: string,
): Promise<EvidenceKey | null> {
  const r = await pool.query<{
    key_id: string;
    curve: string;
    public_key: string;
    valid_from: Date | string;
    valid_to: Date | string | null;
  }>(
    `select key_id, curve, public_key, valid_from, valid_to from ${PLATFORM_SCHEMA}.provider_payload_keys
      where provider_id = $1 and (key_id = $2 or valid_from <= $3 and (valid_to is null or valid_to > $3))
      order by key_id = $2 desc nulls last, valid_from desc limit 1`,
    [providerId, keyId, createdAt],
  );
  const k = r.rows[0];
  if (!k) return null;
  return {
    keyId: k.key_id,
    curve: k.curve as EvidenceKey['curve'],
    publicKey: k.public_key,
    validFrom: new Date(k.valid_from).toISOString(),
    validTo: k.valid_to ? new Date(k.valid_to).toISOString() : null,
  };
}

export async function buildEvidencePack(
  pool: pg.Pool,
  ref: SwapRef,
  now = new Date(),
): Promise<EvidencePack> {
  const swapRows = await pool.query('select * from swaps where provider_id = $1 and swap_id = $2', [
    ref.providerId,
    ref.swapId,
  ]);
  const swap = swapRows.rows[0] as Row | undefined;
  if (!swap) throw new EvidenceError(`no swap ${formatSwapRef(ref)} in the projection`);
  const own = await journal(pool, 'provider_id = $1 and swap_id = $2', [ref.providerId, ref.swapId]);
  const requestEvents = await journal(pool, 'aggregate_key = $1', [`request:${swap.request_id as string}`]);
  const quoteEvents = swap.quote_ref
    ? await journal(pool, 'aggregate_key = $1', [`quote:${swap.quote_ref as string}`])
    : [];
  const created = own.find((e) => e.event_type === 'SwapCreated' && e.outcome === 'applied');
  if (!created) throw new EvidenceError(`${formatSwapRef(ref)} has no applied SwapCreated in the journal`);
  const c = created.payload as SwapCreated;
  const createdAt = new Date(swap.created_at as string).toISOString();
  let decoded: Record<string, string> | null = null;
  try {
    decoded = describeSwapPayload(decodeSwapPayload(c.providerSigPayload));
  } catch {
    decoded = null; // the verdict's signature check says why; the pack shows the raw payload
  }
  const event = (e: Row) => ({
    eventId: e.event_id,
    type: e.event_type,
    source: e.source,
    occurredAt: e.occurred_at,
    recordedAt: e.recorded_at,
    logPosition: `${e.topic as string}/${e.partition as number}@${e.offset as string}`,
    journal: { outcome: e.outcome, reason: e.reason },
    payload: e.payload,
  });
  const verdicts = await pool.query(
    `select h.event_id, h.based_on_event_id, h.verdict, h.reconciled_at, h.checks, h.event_id = r.event_id as current
       from reconciliation_history h
       left join reconciliations r on r.provider_id = h.provider_id and r.swap_id = h.swap_id
      where h.provider_id = $1 and h.swap_id = $2 order by h.reconciled_at, h.event_id`,
    [ref.providerId, ref.swapId],
  );
  const postings = await pool.query(
    `select posting_id, entry_id, line, entry_kind, swap_version, account, currency, amount, effective_at, recorded_at
       from ledger_postings where provider_id = $1 and swap_id = $2 order by swap_version, entry_id, line`,
    [ref.providerId, ref.swapId],
  );
  const caseRow = await pool.query(
    `select state, outcome, trigger, trigger_event_id, opened_at, openings, resolved_at, amount_at_stake,
            stake_currency, pending_write_off, resolution, history
       from cases where provider_id = $1 and swap_id = $2`,
    [ref.providerId, ref.swapId],
  );
  const { version: _v, last_event_id: _l, updated_at: _u, ...swapState } = swap;
  return sealEvidence({
    generatedAt: now.toISOString(),
    swap: { ref: formatSwapRef(ref), providerId: ref.providerId, swapId: ref.swapId, state: swapState },
    request: requestEvents.map(event),
    quote: { terms: c.quote, events: quoteEvents.map(event) },
    signedPayload: {
      createdAt,
      field: c.providerSigField,
      raw: { payload: c.providerSigPayload, signature: c.providerSigSignature },
      decoded,
      signingInput: '"." + payload, exactly as received (RFC 7515 flattened JWS, empty protected header)',
      key: await keyFor(pool, ref.providerId, c.keyId, createdAt),
      platformVerdict: { signatureValid: c.signatureValid, keyId: c.keyId, findings: c.findings },
    },
    partnerReports: own
      .filter((e) => e.event_type === 'StatusReported' || e.event_type === 'StatusContradicted')
      .map((e) => ({ channel: channelOf(e.source as string), ...event(e) })),
    chainObservations: own
      .filter((e) => e.event_type === 'ChainTransactionObserved')
      .map((e) => ({ chainSource: (e.payload as { source: string }).source, ...event(e) })),
    corrections: own.filter((e) => e.event_type === 'SwapCorrected').map(event),
    verdicts: verdicts.rows.map((v: Row) => ({
      eventId: v.event_id,
      basedOnEventId: v.based_on_event_id,
      verdict: v.verdict,
      reconciledAt: v.reconciled_at,
      current: v.current === true,
      checks: v.checks,
    })),
    postings: postings.rows,
    case: caseRow.rows[0] ?? null,
  });
}
