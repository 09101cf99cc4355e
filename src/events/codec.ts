import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { envelopeSchema, PAYLOAD_NAMESPACE } from './catalog.ts';
import { EVENT_TYPES, type EventType, type SwapEvent } from './types.ts';
import { UUID_PATTERN } from './ids.ts';

export class EventDecodeError extends Error {
  override name = 'EventDecodeError';
}

/** Subject naming is by topic (TopicNameStrategy): `<topic>-value`. */
export function valueSubject(topic: string): string {
  return `${topic}-value`;
}

/**
 * Avro encoding of the event envelope through the schema registry. The payload is an Avro union of
 * records, which avsc represents wrapped in an object keyed by the record's full name.
 */
export class EventCodec {
  private schemaId: number | undefined;
  readonly schema = envelopeSchema();
  readonly registry: SchemaRegistry;

  constructor(
    readonly registryUrl: string,
    readonly topic: string,
  ) {
    this.registry = new SchemaRegistry({ host: registryUrl });
  }

  /** Registers the envelope under `<topic>-value` with BACKWARD compatibility; idempotent. */
  async register(): Promise<number> {
    const subject = valueSubject(this.topic);
    const res = await fetch(`${this.registryUrl}/config/${encodeURIComponent(subject)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility: 'BACKWARD' }),
    });
    if (!res.ok)
      throw new Error(`registry refused the compatibility setting of ${subject}: HTTP ${res.status}`);
    const { id } = await this.registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(this.schema) },
      { subject },
    );
    this.schemaId = id;
    return id;
  }

  async encode(event: SwapEvent): Promise<Buffer> {
    if (this.schemaId === undefined) await this.register();
    const { payload, ...envelope } = event;
    return this.registry.encode(this.schemaId!, {
      ...envelope,
      payload: { [`${PAYLOAD_NAMESPACE}.${event.eventType}`]: payload },
    });
  }

  /** Decodes with the current envelope as reader schema, so older events gain new fields' defaults. */
  async decode(buffer: Buffer): Promise<SwapEvent> {
    let raw: Record<string, unknown>;
    try {
      raw = (await this.registry.decode(buffer, {
        [SchemaType.AVRO]: { readerSchema: this.schema as never },
      })) as Record<string, unknown>;
    } catch (e) {
      throw new EventDecodeError(`not a decodable swap event: ${(e as Error).message}`);
    }
    const wrapped = raw.payload as Record<string, unknown> | null;
    const [branch, payload] = Object.entries(wrapped ?? {})[0] ?? [];
    const type = branch?.slice(PAYLOAD_NAMESPACE.length + 1) as EventType | undefined;
    if (!type || !(EVENT_TYPES as readonly string[]).includes(type)) {
      throw new EventDecodeError(`unknown payload type ${branch ?? '(none)'}`);
    }
    if (raw.eventType !== type) {
      throw new EventDecodeError(`eventType ${String(raw.eventType)} does not match its payload ${type}`);
    }
    if (typeof raw.eventId !== 'string' || !UUID_PATTERN.test(raw.eventId)) {
      throw new EventDecodeError(`eventId ${String(raw.eventId)} is not a UUID`);
    }
    return { ...(raw as object), payload } as SwapEvent;
  }
}
