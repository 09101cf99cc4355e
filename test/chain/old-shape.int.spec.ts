import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { envelopeSchema } from '../../src/events/catalog.ts';
import { EventCodec, encodeEvent } from '../../src/events/codec.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import { chainObserved } from '../../src/testing/chain.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { spec } from '../../src/testing/fold-spec.ts';
import { testStack, uniqueName } from '../support/context.ts';

/**
 * `contractCall` became a field of ChainTransactionObserved (BACKWARD: a boolean defaulting to false). An
 * observation written before, by the envelope without it, still decodes through the real registry, and one
 * whose detail carried the watcher's note of that time still folds as a contract call, so it is judged as it was.
 */

/** The current envelope with ChainTransactionObserved as it was before `contractCall`. */
function envelopeBeforeContractCall(): Record<string, unknown> {
  const schema = structuredClone(envelopeSchema());
  let found = 0;
  const strip = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(strip);
    if (!node || typeof node !== 'object') return;
    const record = node as { name?: string; fields?: { name: string }[] };
    if (record.name?.endsWith('ChainTransactionObserved') && Array.isArray(record.fields)) {
      record.fields = record.fields.filter((f) => f.name !== 'contractCall');
      found++;
    }
    Object.values(node).forEach(strip);
  };
  strip(schema);
  expect(found, 'the envelope defines ChainTransactionObserved once').toBe(1);
  return schema;
}

async function registered(schema: Record<string, unknown>): Promise<number> {
  const subject = `${uniqueName('before-contract-call')}-value`;
  const res = await fetch(`${testStack().registryUrl}/subjects/${encodeURIComponent(subject)}/versions`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ schema: JSON.stringify(schema) }),
  });
  expect(res.ok, await res.clone().text()).toBe(true);
  return ((await res.json()) as { id: number }).id;
}

describe('an observation written before contractCall was a field (real registry)', () => {
  it('decodes with contractCall false, and folds as a contract call where its detail said so', async () => {
    const old = envelopeBeforeContractCall();
    const oldId = await registered(old);
    const oldType = avro.Type.forSchema(old as avro.Schema);
    const codec = new EventCodec(testStack().registryUrl, uniqueName('before-contract-call'));
    const written = (detail: string | null) => {
      const event = chainObserved('s1', { txid: 'out', detail });
      delete event.payload.contractCall;
      return encodeEvent(oldType, oldId, event);
    };
    const noted = await codec.decode(
      written('a contract call: native value moved internally is not visible'),
    );
    const plain = await codec.decode(written(null));
    if (noted.eventType !== 'ChainTransactionObserved' || plain.eventType !== 'ChainTransactionObserved')
      throw new Error('decoded as another event type');
    expect(noted.payload.contractCall).toBe(false);
    expect(plain.payload.contractCall).toBe(false);

    const folded = (event: SwapEvent) =>
      [
        ...spec()
          .given(
            swapCreated('s1'),
            statusReported('s1', 'FINISHED', {
              amount: '0.248',
              payinTransactionId: 'in',
              payoutTransactionId: 'out',
            }),
          )
          .when(event)
          .then({ outcome: 'applied' })
          .ws.chainObservations.values(),
      ][0]!;
    expect(folded(noted).contractCall).toBe(true);
    expect(folded(plain).contractCall).toBe(false);
  });
});
