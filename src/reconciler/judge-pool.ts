import { Worker, type MessagePort } from 'node:worker_threads';
import { envelopeType } from '../events/codec.ts';
import type { ReconciliationPolicy } from './policy.ts';
import {
  judgeChunk,
  policyFromText,
  policyToText,
  type JudgeChunk,
  type JudgedChunk,
  type PolicyText,
} from './judging.ts';

/**
 * Threads that judge and encode the reconciler's verdicts, so that the worker's event loop keeps only its
 * queries and Kafka: judging is most of a swap's CPU (the signature, the checks, the Avro encoding),
 * and one event loop was the reconciler's limit while the machine's other core idled.
 * A chunk goes to the thread with the fewest chunks in flight. A thread that dies fails its chunks (their
 * swaps stay queued, taken again) and is started anew for the next chunk.
 */
export class JudgePool {
  private readonly slots: Slot[];
  private readonly policy: PolicyText;
  private seq = 0;
  private closed = false;

  constructor(
    threads: number,
    policy: ReconciliationPolicy,
    /** Told once for each thread that died or exited (not when the pool is closed). */
    private readonly onLost?: (e: Error) => void,
  ) {
    if (!Number.isInteger(threads) || threads < 1)
      throw new RangeError(`a judge pool needs at least one thread, not ${threads}`);
    this.policy = policyToText(policy);
    this.slots = Array.from({ length: threads }, () => ({ worker: undefined, pending: new Map() }));
  }

  get size(): number {
    return this.slots.length;
  }

  judge(chunk: JudgeChunk): Promise<JudgedChunk> {
    let slot = this.slots[0]!;
    for (const s of this.slots) if (s.pending.size < slot.pending.size) slot = s;
    return this.post(slot, chunk);
  }

  /** Every thread started and answering (loading the sources takes a thread about a second). */
  async ready(): Promise<void> {
    await Promise.all(this.slots.map((s) => this.post(s, { schemaId: 0, swaps: [], setups: {} })));
  }

  private post(slot: Slot, chunk: JudgeChunk): Promise<JudgedChunk> {
    if (this.closed) return Promise.reject(new Error('the judge pool is closed'));
    const worker = (slot.worker ??= this.start(slot));
    const id = ++this.seq;
    return new Promise<JudgedChunk>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      // Kept alive while it has work; an idle pool never holds the process open.
      worker.ref();
      worker.postMessage({ id, chunk });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.slots.map(async (s) => {
        const w = s.worker;
        s.worker = undefined;
        if (w) await w.terminate();
        fail(s, new Error('the judge pool was closed'));
      }),
    );
  }

  private start(slot: Slot): Worker {
    const worker = new Worker(new URL('./judge-thread.mjs', import.meta.url), {
      workerData: { policy: this.policy },
    });
    worker.unref();
    worker.on('message', (m: ThreadReply) => {
      const p = slot.pending.get(m.id);
      if (!p) return;
      slot.pending.delete(m.id);
      if (slot.pending.size === 0) worker.unref();
      if ('result' in m) p.resolve(m.result);
      else p.reject(new Error(`a judge thread failed a chunk: ${m.error}`));
    });
    const gone = (e: Error) => {
      // Once per thread ('error' comes before 'exit'); a closed pool failed its chunks itself.
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      fail(slot, e);
      this.onLost?.(e);
    };
    worker.on('error', (e) => gone(new Error(`a judge thread died: ${e.message}`)));
    worker.on('exit', (code) => gone(new Error(`a judge thread exited (code ${code})`)));
    return worker;
  }
}

interface Slot {
  worker: Worker | undefined;
  pending: Map<number, { resolve: (r: JudgedChunk) => void; reject: (e: Error) => void }>;
}

type ThreadReply = { id: number; result: JudgedChunk } | { id: number; error: string };

function fail(slot: Slot, e: Error): void {
  const pending = [...slot.pending.values()];
  slot.pending.clear();
  for (const p of pending) p.reject(e);
}

/** A judge thread's loop (judge-thread.mjs): each chunk judged in turn, its bytes transferred back. */
export function serveJudging(port: MessagePort, data: { policy: PolicyText }): void {
  const policy = policyFromText(data.policy);
  const envelope = envelopeType();
  let queue = Promise.resolve();
  port.on('message', ({ id, chunk }: { id: number; chunk: JudgeChunk }) => {
    queue = queue.then(async () => {
      try {
        const result = await judgeChunk(chunk, policy, envelope);
        port.postMessage({ id, result } satisfies ThreadReply, [result.bytes]);
      } catch (e) {
        port.postMessage({ id, error: (e as Error).message ?? String(e) } satisfies ThreadReply);
      }
    });
  });
}
