import type avro from 'avsc';
import { envelopeType } from '../events/codec.ts';
import { formatSwapRef, type SwapRef } from '../swap/ref.ts';
import { JudgePool } from './judge-pool.ts';
import { judgeChunk, type JudgeChunk, type JudgedOutcome, type JudgeSetup } from './judging.ts';
import { ReconcileError, type LoadedSwap } from './loading.ts';
import type { ReconciliationPolicy } from './policy.ts';

/** A swap's verdict judged and encoded, ready to append. */
export type EncodedVerdict = Extract<JudgedOutcome, { ok: true }> & { value: Buffer };

/**
 * A round's swaps (a queue round's or a sweep's) judged and encoded together: in one chunk per judge thread
 * when there are threads, else one on the event loop.
 */
export class RoundJudge {
  private pool: JudgePool | undefined;
  private envelope: avro.Type | undefined;

  constructor(
    private readonly options: {
      readonly threads: number;
      readonly policy: ReconciliationPolicy;
      /** The registry id of the envelope the verdicts are written with (the appender's). */
      readonly writerSchemaId: () => Promise<number>;
      readonly onThreadLost: (e: Error) => void;
    },
  ) {}

  private judgePool(): JudgePool | undefined {
    if (this.options.threads > 0)
      this.pool ??= new JudgePool(this.options.threads, this.options.policy, this.options.onThreadLost);
    return this.pool;
  }

  /** Starts the judge threads (if any) and waits until they answer. */
  async ready(): Promise<void> {
    await this.judgePool()?.ready();
  }

  async close(): Promise<void> {
    await this.pool?.close();
    this.pool = undefined;
  }

  /**
   * The verdicts of the loaded swaps among `claimed` (a queue round's rows or a sweep's), each based on
   * the event it was claimed by, judged together (judgeRound): a promise per claim's event id. A swap that
   * could not be loaded has none.
   */
  async judgeClaimed(
    loaded: ReadonlyMap<string, LoadedSwap | ReconcileError>,
    claimed: readonly { ref: SwapRef; basedOnEventId: string }[],
  ): Promise<Map<string, Promise<EncodedVerdict>>> {
    const ready: LoadedSwap[] = [];
    for (const { ref, basedOnEventId } of claimed) {
      const swap = loaded.get(formatSwapRef(ref))!;
      if (!(swap instanceof ReconcileError)) ready.push({ ...swap, basedOnEventId });
    }
    const verdicts = await this.judgeRound(ready);
    return new Map(ready.map((s, i) => [s.basedOnEventId!, verdicts[i]!]));
  }

  /**
   * A round's swaps judged and encoded, in one chunk per judge thread (or one on the event loop): a
   * promise per swap of its verdict's outcome and wire bytes, in the swaps' order.
   */
  private async judgeRound(swaps: readonly LoadedSwap[]): Promise<Promise<EncodedVerdict>[]> {
    if (swaps.length === 0) return [];
    const schemaId = await this.options.writerSchemaId();
    const pool = this.judgePool();
    const parts = Math.min(pool?.size ?? 1, swaps.length);
    const per = Math.ceil(swaps.length / parts);
    const verdicts: Promise<EncodedVerdict>[] = [];
    for (let at = 0; at < swaps.length; at += per) {
      const part = swaps.slice(at, at + per);
      const setups: Record<string, JudgeSetup | null> = {};
      for (const s of part) setups[s.ref.providerId] = s.setup ?? null;
      const chunk: JudgeChunk = {
        schemaId,
        // Everything a swap's checks read but its provider's setup (sent once per chunk) and its final time.
        swaps: part.map(({ setup: _setup, finalAtMs: _finalAt, ...judged }) => judged),
        setups,
      };
      const judged = pool
        ? pool.judge(chunk)
        : judgeChunk(chunk, this.options.policy, (this.envelope ??= envelopeType()));
      part.forEach((_, i) =>
        verdicts.push(
          judged.then(({ bytes, outcomes }) => {
            const o = outcomes[i]!;
            if (!o.ok) throw new ReconcileError(o.message);
            return { ...o, value: Buffer.from(bytes, o.offset, o.length) };
          }),
        ),
      );
    }
    return verdicts;
  }
}
