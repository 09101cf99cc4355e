import type avro from 'avsc';
import { Decimal } from '../money/decimal.ts';
import { encodeEvent } from '../events/codec.ts';
import { newEvent } from '../events/keys.ts';
import type { SwapCreated, SwapEventOf } from '../events/types.ts';
import type { PartnerKey } from '../payload/index.ts';
import { reportValuesOfRow, type ReportColumns } from '../swap/report.ts';
import type { SwapRef } from '../swap/ref.ts';
import { toSwapReconciled } from './checks.ts';
import { creationFactsFromSwapCreated, finalReportFromSwapRow, inspectAndReconcile } from './facts.ts';
import {
  DEFAULT_CHAIN_POLICY,
  DEFAULT_QUOTE_BANDS,
  FEE_CHECK_KINDS,
  type FeeCheckKind,
  type ReconciliationPolicy,
} from './policy.ts';
import type {
  ChainEvidence,
  ReconciledCheck,
  ReconciliationResult,
  StatusConflict,
  Verdict,
} from './types.ts';

/**
 * Judging a swap: its checks, its SwapReconciled and that event's wire encoding. CPU only (no I/O), the
 * same code on the event loop and in the judge threads (judge-pool.ts), which get plain data: the
 * swap's row, its SwapCreated as JSON text, its conflicts, its provider's keys and the policy as text.
 */

/** What the checks of a provider's swaps read from its setup. */
export interface JudgeSetup {
  readonly payloadKeys: readonly PartnerKey[];
  /** Agreed slippage of float swaps that carry none (ratio text), or null. */
  readonly defaultSlippage: string | null;
}

/** The columns of a swaps row the checks read (as node-postgres gives them: text, booleans). */
export interface JudgedRow extends ReportColumns {
  provider_id: string;
  status: string;
  /** open, closed or final; absent in rows read before the class was loaded. */
  status_class?: string | null;
  extra_fees?: string | null;
  webhook_network_fees?: string | null;
  final: boolean;
  last_event_id: string;
  last_correction_event_id: string | null;
}

/** What the checks of one swap read: its row, its SwapCreated (JSON text), its conflicts, its setup. */
export interface SwapToJudge {
  readonly ref: SwapRef;
  readonly row: JudgedRow;
  readonly createdJson: string;
  readonly conflicts: readonly StatusConflict[];
  readonly setup: JudgeSetup | undefined;
  /** The verdict is based on this event (the queue row's); by default the row's last correction or event. */
  readonly basedOnEventId?: string | undefined;
  /** What the chain watcher saw of its transactions (chain-load.ts); absent: no chain checks are made. */
  readonly chain?: ChainEvidence | undefined;
  /** Report fields never reported before the confirmation deadline (platform.confirmations_never_reported). */
  readonly neverReported?: readonly string[] | undefined;
}

export interface JudgedSwap {
  swapId: string;
  providerId: string;
  basedOnEventId: string;
  result: ReconciliationResult;
  event: SwapEventOf<'SwapReconciled'>;
}

/** The checks of one swap (the signature and the amounts), as a verdict event. */
export async function judgeSwap(s: SwapToJudge, policy: ReconciliationPolicy): Promise<JudgedSwap> {
  const { row, setup } = s;
  const result = await inspectAndReconcile(
    {
      creation: creationFactsFromSwapCreated(JSON.parse(s.createdJson) as SwapCreated),
      final: finalReportFromSwapRow({
        status: row.status,
        final: row.final,
        statusClass: row.status_class ?? null,
        extraFees: row.extra_fees ?? null,
        webhookNetworkFees: row.webhook_network_fees ?? null,
        ...reportValuesOfRow(row),
      }),
      conflicts: s.conflicts,
      providerDefaultSlippage: setup?.defaultSlippage ?? null,
      ...(s.chain ? { chain: s.chain } : {}),
      ...(s.neverReported?.length ? { neverReported: s.neverReported } : {}),
    },
    setup?.payloadKeys ?? [],
    policy,
  );
  const based = s.basedOnEventId ?? row.last_correction_event_id ?? row.last_event_id;
  const { providerId, swapId } = s.ref;
  const event = newEvent('SwapReconciled', new Date(), toSwapReconciled(result, based), {
    providerId,
    swapId,
    source: 'reconciler',
  });
  return { swapId, providerId: row.provider_id, basedOnEventId: based, result, event };
}

/** The checks a verdict's log line names: those that did not pass. */
export function failingChecks(result: ReconciliationResult): ReconciledCheck[] {
  return result.checks.filter((c) => c.verdict === 'MISMATCH' || c.verdict === 'UNVERIFIABLE');
}

/** Swaps to judge as one message to a judge thread; their setups by provider id, sent once. */
export interface JudgeChunk {
  /** The registry id of the envelope the verdicts are written with (the appender's). */
  readonly schemaId: number;
  readonly swaps: readonly Omit<SwapToJudge, 'setup'>[];
  readonly setups: Readonly<Record<string, JudgeSetup | null>>;
}

/** A judged swap's verdict in a chunk's result: its wire bytes lie at [offset, offset + length). */
export type JudgedOutcome =
  | {
      ok: true;
      eventId: string;
      aggregateKey: string;
      occurredAt: string;
      basedOnEventId: string;
      verdict: Verdict;
      failing: ReconciledCheck[];
      offset: number;
      length: number;
    }
  | { ok: false; message: string };

/** The verdicts of a chunk: every encoding in one buffer (one transfer back), an outcome per swap in order. */
export interface JudgedChunk {
  bytes: ArrayBuffer;
  outcomes: JudgedOutcome[];
}

/**
 * Judges and encodes a chunk's swaps. A swap that cannot be judged is an outcome of its own, never the
 * chunk's failure: the others' verdicts stand.
 */
export async function judgeChunk(
  chunk: JudgeChunk,
  policy: ReconciliationPolicy,
  envelope: avro.Type,
): Promise<JudgedChunk> {
  const encoded: Buffer[] = [];
  const outcomes: JudgedOutcome[] = [];
  let size = 0;
  for (const swap of chunk.swaps) {
    try {
      const judged = await judgeSwap(
        { ...swap, setup: chunk.setups[swap.ref.providerId] ?? undefined },
        policy,
      );
      const value = encodeEvent(envelope, chunk.schemaId, judged.event);
      outcomes.push({
        ok: true,
        eventId: judged.event.eventId,
        aggregateKey: judged.event.aggregateKey,
        occurredAt: judged.event.occurredAt,
        basedOnEventId: judged.basedOnEventId,
        verdict: judged.result.verdict,
        failing: failingChecks(judged.result),
        offset: size,
        length: value.length,
      });
      encoded.push(value);
      size += value.length;
    } catch (e) {
      outcomes.push({ ok: false, message: (e as Error).message ?? String(e) });
    }
  }
  const bytes = new ArrayBuffer(size);
  const view = new Uint8Array(bytes);
  let at = 0;
  for (const b of encoded) {
    view.set(b, at);
    at += b.length;
  }
  return { bytes, outcomes };
}

/** A policy as plain text (its tolerances are Decimals, which a thread's message would strip). */
export type PolicyText = Partial<
  Record<FeeCheckKind, Record<'favour' | 'disfavour', { absolute: string; relative: string }>>
> & {
  quote: { fixed: string; float: string };
  chain?: { clockAllowanceSeconds: number; refundFeeAllowance: Record<string, string> };
};

export function policyToText(policy: ReconciliationPolicy): PolicyText {
  const quote = policy.quote ?? DEFAULT_QUOTE_BANDS;
  const chain = policy.chain ?? DEFAULT_CHAIN_POLICY;
  return Object.fromEntries([
    ['quote', { fixed: quote.fixed.toFixed(), float: quote.float.toFixed() }],
    [
      'chain',
      {
        clockAllowanceSeconds: chain.clockAllowanceSeconds,
        refundFeeAllowance: Object.fromEntries(
          Object.entries(chain.refundFeeAllowance).map(([c, d]) => [c, d.toFixed()]),
        ),
      },
    ],
    ...FEE_CHECK_KINDS.map((k) => {
      const t = policy.fees[k];
      const side = (s: typeof t.favour) => ({
        absolute: s.absolute.toFixed(),
        relative: s.relative.toFixed(),
      });
      return [k, { favour: side(t.favour), disfavour: side(t.disfavour) }];
    }),
  ]) as PolicyText;
}

export function policyFromText(text: PolicyText): ReconciliationPolicy {
  const side = (s: { absolute: string; relative: string }) =>
    Object.freeze({ absolute: new Decimal(s.absolute), relative: new Decimal(s.relative) });
  return Object.freeze({
    fees: Object.freeze(
      Object.fromEntries(
        FEE_CHECK_KINDS.map((k) => {
          const t = text[k];
          if (!t) throw new Error(`the policy text has no ${k} tolerance`);
          return [k, Object.freeze({ favour: side(t.favour), disfavour: side(t.disfavour) })];
        }),
      ),
    ) as ReconciliationPolicy['fees'],
    quote: Object.freeze({ fixed: new Decimal(text.quote.fixed), float: new Decimal(text.quote.float) }),
    chain: text.chain
      ? Object.freeze({
          clockAllowanceSeconds: text.chain.clockAllowanceSeconds,
          refundFeeAllowance: Object.freeze(
            Object.fromEntries(
              Object.entries(text.chain.refundFeeAllowance).map(([c, d]) => [c, new Decimal(d)]),
            ),
          ),
        })
      : DEFAULT_CHAIN_POLICY,
  });
}
