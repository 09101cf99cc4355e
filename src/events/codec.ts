import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import avro from 'avsc';
import { envelopeSchema, PAYLOAD_NAMESPACE } from './catalog.ts';
import { EVENT_TYPES, type EventType, type SwapEvent } from './types.ts';
import { UUID_PATTERN } from './ids.ts';
import { instantProblem } from './time.ts';
import { partnerTextProblem } from '../swap/text.ts';

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})$/;

/**
 * Bounds of the envelope's ids, which go into every journal row whatever the fold decides (a rejected
 * event's too): a value Postgres could not store there would fail the batch forever. The providerId is
 * printable and at most 64 characters (the providers file's rule, with '-' for operator events of no
 * provider). swapId and aggregateKey keep their U+0000 to the fold (which rejects the event and journals
 * them visibly altered) but are bounded in length here, so the journal's indexes (at most ~2.7 kB a row)
 * can always hold them.
 */
export const MAX_ENVELOPE_PROVIDER_ID = 64;
export const MAX_ENVELOPE_SWAP_ID = 512;
export const MAX_ENVELOPE_KEY = 600;

/** Why an envelope's ids or times cannot go into a journal row, or undefined when they can. */
export function envelopeProblem(raw: Record<string, unknown>): string | undefined {
  const provider = raw.providerId;
  if (typeof provider !== 'string' || provider === '') return 'providerId is empty';
  const providerProblem = partnerTextProblem(provider, MAX_ENVELOPE_PROVIDER_ID);
  if (providerProblem) return `providerId ${providerProblem}`;
  if (typeof raw.swapId === 'string' && raw.swapId.length > MAX_ENVELOPE_SWAP_ID)
    return `swapId is longer than ${MAX_ENVELOPE_SWAP_ID} characters`;
  if (typeof raw.aggregateKey !== 'string' || raw.aggregateKey.length > MAX_ENVELOPE_KEY)
    return `aggregateKey is not a text of at most ${MAX_ENVELOPE_KEY} characters`;
  // The envelope's times go into every journal row: one Postgres could not store would halt the log.
  // Read by the one strict rule (a real calendar date, an offset within Postgres's ±15:59): JS's Date.parse
  // takes 2026-02-30 and +16:00, which Postgres refuses.
  for (const field of ['occurredAt', 'recordedAt'] as const) {
    const t = raw[field];
    const shown = JSON.stringify(t)?.slice(0, 60);
    if (typeof t !== 'string' || !ISO_TIME.test(t) || !Number.isFinite(Date.parse(t)))
      return `${field} ${shown} is not an ISO-8601 time`;
    const problem = instantProblem(t);
    if (problem) return `${field} ${shown} is not a time Postgres stores: ${problem}`;
  }
  return undefined;
}

export class EventDecodeError extends Error {
  override name = 'EventDecodeError';
}

/** Subject naming is by topic (TopicNameStrategy): `<topic>-value`. */
export function valueSubject(topic: string): string {
  return `${topic}-value`;
}

export class EventEncodeError extends Error {
  override name = 'EventEncodeError';
}

/** Where events are written before being copied out whole; grown to the largest event seen. */
let scratch = Buffer.allocUnsafe(64 * 1024);

/**
 * Confluent's wire format (magic byte 0, 4-byte schema id, Avro body) in one buffer of the exact size,
 * the body written once. A value that does not fit the schema is refused with the paths that do not.
 */
export function wireEncode(type: avro.Type, schemaId: number, value: unknown): Buffer {
  for (;;) {
    let end: number;
    try {
      end = type.encode(value, scratch, 5);
    } catch (e) {
      const problems: string[] = [];
      type.isValid(value, { errorHook: (path) => problems.push(path.join('.') || '(root)') });
      throw new EventEncodeError(
        `not a valid event (${problems.join(', ') || (e as Error).message}): it does not fit the schema`,
      );
    }
    // A negative end is how many bytes were missing: grow and write again (only for a record size).
    if (end < 0) {
      scratch = Buffer.allocUnsafe(Math.max(scratch.length * 2, scratch.length - end));
      continue;
    }
    const out = Buffer.allocUnsafe(end);
    scratch.copy(out, 0, 0, end);
    out[0] = 0;
    out.writeUInt32BE(schemaId, 1);
    return out;
  }
}

/** The envelope type every codec writes with (`envelopeSchema()`): for encoders outside a codec. */
export function envelopeType(): avro.Type {
  return avro.Type.forSchema(envelopeSchema() as avro.Schema);
}

/**
 * An event in the registry's wire format under `schemaId`, written with the envelope `type`. The payload
 * is an Avro union of records, which avsc represents wrapped in an object keyed by the record's full name.
 */
export function encodeEvent(type: avro.Type, schemaId: number, event: SwapEvent): Buffer {
  const { payload, ...envelope } = event;
  return wireEncode(type, schemaId, {
    ...envelope,
    payload: { [`${PAYLOAD_NAMESPACE}.${event.eventType}`]: payload },
  });
}

/**
 * Sets a subject's compatibility level, as several workers starting together on a fresh topic all do.
 * Apicurio answers the losers of that race 409 ("A rule named 'COMPATIBILITY' already exists"): a 409
 * is read back, and the level already set to the one asked for is success; another level, or a 409 whose
 * rule is not readable yet, is tried again (`attempts` in all, 100 ms doubling), then refused. A 5xx (the
 * registry's storage restarting under it) is tried again the same way.
 */
export async function setCompatibility(
  registryUrl: string,
  subject: string,
  level: string,
  attempts = 6,
): Promise<void> {
  const url = `${registryUrl}/config/${encodeURIComponent(subject)}`;
  let last = '';
  for (let attempt = 1, wait = 100; ; attempt++, wait *= 2) {
    const res = await fetch(url, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility: level }),
    });
    if (res.ok) return;
    last = `HTTP ${res.status} ${(await res.text().catch(() => '')).slice(0, 200)}`;
    // A 5xx: the registry's own storage lost its connection (a Postgres restart) or it is starting: retried.
    if (res.status >= 500) {
      if (attempt >= attempts)
        throw new Error(`registry failed the compatibility setting of ${subject} ${attempts} times: ${last}`);
      await new Promise((r) => setTimeout(r, wait));
      continue;
    }
    if (res.status !== 409)
      throw new Error(`registry refused the compatibility setting of ${subject}: ${last}`);
    const current = await fetch(url).then(
      async (r) =>
        r.ok ? ((await r.json()) as { compatibilityLevel?: string }).compatibilityLevel : undefined,
      () => undefined,
    );
    if (current === level) return; // another worker set the same level first
    if (current !== undefined) last += `; the subject's level is ${current}`;
    if (attempt >= attempts)
      throw new Error(`registry refused the compatibility setting of ${subject} ${attempts} times: ${last}`);
    await new Promise((r) => setTimeout(r, wait));
  }
}

/**
 * Avro encoding of the event envelope through the schema registry. The payload is an Avro union of
 * records, which avsc represents wrapped in an object keyed by the record's full name.
 */
export class EventCodec {
  private schemaId: number | undefined;
  readonly schema = envelopeSchema();
  readonly registry: SchemaRegistry;
  /** The current envelope, the reader of every event whatever schema version wrote it. */
  private readonly readerType = avro.Type.forSchema(this.schema as avro.Schema);
  /** Per writer schema id: how to read it as the current envelope (built once, not per message). */
  private readonly resolvers = new Map<number, avro.Resolver | 'same'>();

  constructor(
    readonly registryUrl: string,
    readonly topic: string,
  ) {
    this.registry = new SchemaRegistry({ host: registryUrl });
  }

  /** Registers the envelope under `<topic>-value` with BACKWARD compatibility; idempotent. */
  async register(): Promise<number> {
    const subject = valueSubject(this.topic);
    await setCompatibility(this.registryUrl, subject, 'BACKWARD');
    const { id } = await this.registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(this.schema) },
      { subject },
    );
    this.schemaId = id;
    return id;
  }

  /**
   * Written with the envelope this codec registered (the registry gives back the id of that very schema),
   * in the registry's wire format. Not through the registry client's encode: it writes a body over 1 KiB
   * twice (avsc's shared 1 KiB buffer overflows, so it measures, allocates and writes again), then copies
   * it once more behind the header. A verdict is over 1 KiB, so this path is cheaper for every verdict
   * (docs/benchmarks.md).
   */
  async encode(event: SwapEvent): Promise<Buffer> {
    return encodeEvent(this.readerType, await this.writerSchemaId(), event);
  }

  /** The id the registry gave this codec's envelope (registered first if need be): what encode writes. */
  async writerSchemaId(): Promise<number> {
    if (this.schemaId === undefined) await this.register();
    return this.schemaId!;
  }

  /**
   * Decodes with the current envelope as reader schema, so older events gain new fields' defaults.
   * The wire format is Confluent's: magic byte 0, 4-byte schema id, Avro body.
   */
  async decode(buffer: Buffer): Promise<SwapEvent> {
    if (buffer.length < 5 || buffer[0] !== 0)
      throw new EventDecodeError('not in the schema registry wire format');
    const schemaId = buffer.readUInt32BE(1);
    let resolver = this.resolvers.get(schemaId);
    if (!resolver) {
      let writer: avro.Type;
      try {
        writer = (await this.registry.getSchema(schemaId)) as unknown as avro.Type;
      } catch (e) {
        // An id the registry does not know is the message's fault; a registry that does not answer is not.
        if ((e as { status?: number }).status === 404) {
          throw new EventDecodeError(`schema id ${schemaId} is unknown to the registry`);
        }
        throw e;
      }
      try {
        resolver = writer.equals(this.readerType) ? 'same' : this.readerType.createResolver(writer);
      } catch (e) {
        // The registry answered with a schema the envelope cannot read: the message's fault, for good.
        throw new EventDecodeError(
          `schema id ${schemaId} cannot be read as the current envelope: ${(e as Error).message}`,
        );
      }
      this.resolvers.set(schemaId, resolver);
    }
    let raw: Record<string, unknown>;
    try {
      const body = buffer.subarray(5);
      raw = (
        resolver === 'same' ? this.readerType.fromBuffer(body) : this.readerType.fromBuffer(body, resolver)
      ) as Record<string, unknown>;
    } catch (e) {
      throw new EventDecodeError(
        `not a decodable swap event (schema id ${schemaId}): ${(e as Error).message}`,
      );
    }
    return this.checked(raw);
  }

  /**
   * Reads an event written as JSON (an operator's repaired event), held to the same schema and rules
   * as one read from Kafka.
   */
  parseEventJson(json: string): SwapEvent {
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(json) as Record<string, unknown>;
    } catch (e) {
      throw new EventDecodeError(`not JSON: ${(e as Error).message}`);
    }
    if (!obj || typeof obj !== 'object') throw new EventDecodeError('not a JSON object');
    const wrapped = { ...obj, payload: { [`${PAYLOAD_NAMESPACE}.${String(obj.eventType)}`]: obj.payload } };
    const problems: string[] = [];
    this.readerType.isValid(wrapped, { errorHook: (path) => problems.push(path.join('.') || '(root)') });
    if (problems.length > 0)
      throw new EventDecodeError(`does not fit the event schema at ${problems.join(', ')}`);
    return this.checked(wrapped);
  }

  private checked(raw: Record<string, unknown>): SwapEvent {
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
    // An envelope no journal row could hold is undecodable: dead-lettered with its bytes, never folded.
    const problem = envelopeProblem(raw);
    if (problem) throw new EventDecodeError(problem);
    return { ...(raw as object), payload } as SwapEvent;
  }
}
