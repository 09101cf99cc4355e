import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { bytesToBigint, decodeBase64url, toHex } from './encoding.ts';
import { finding, type Finding } from './findings.ts';

const PROTO_FILE = fileURLToPath(
  new URL('../../schemas/payload/new_transaction_response.proto', import.meta.url),
);
const MESSAGE = 'ledger_swap.NewTransactionResponse';

/**
 * The signed `NewTransactionResponse` (docs/architecture.md, "Signed payload"), field names as in the .proto.
 * Absent fields hold their proto3 default ('' or empty bytes, so a missing amount is 0n).
 */
export interface DecodedSwapPayload {
  readonly payin_address: string;
  readonly payin_extra_id: string;
  readonly refund_address: string;
  readonly refund_extra_id: string;
  readonly payout_address: string;
  readonly payout_extra_id: string;
  readonly currency_from: string;
  readonly currency_to: string;
  /** Atomic units of currency_from. */
  readonly amount_to_provider: bigint;
  /** Atomic units of currency_to, payout network fee included. */
  readonly amount_to_wallet: bigint;
  readonly device_transaction_id: string;
  readonly device_transaction_id_ng: Uint8Array;
  readonly payin_extra_data: Uint8Array;
  /** The amounts' bytes as signed; the device bounds their length, which the bigint hides. */
  readonly amount_to_provider_bytes: Uint8Array;
  readonly amount_to_wallet_bytes: Uint8Array;
}

export type PayloadDecodeFailure = 'base64url' | 'empty' | 'protobuf';

/** The payload text cannot be read as a NewTransactionResponse; `failure` says at which layer. */
export class PayloadDecodeError extends Error {
  override name = 'PayloadDecodeError';
  constructor(
    readonly failure: PayloadDecodeFailure,
    reason: string,
  ) {
    super(`payload is not a NewTransactionResponse: ${reason}`);
  }
}

type FieldKind = 'string' | 'bytes';
// Field number -> name and kind, checked against the loaded .proto at first use.
const FIELDS: ReadonlyMap<number, readonly [string, FieldKind]> = new Map([
  [1, ['payin_address', 'string']],
  [2, ['payin_extra_id', 'string']],
  [3, ['refund_address', 'string']],
  [4, ['refund_extra_id', 'string']],
  [5, ['payout_address', 'string']],
  [6, ['payout_extra_id', 'string']],
  [7, ['currency_from', 'string']],
  [8, ['currency_to', 'string']],
  [9, ['amount_to_provider', 'bytes']],
  [10, ['amount_to_wallet', 'bytes']],
  [11, ['device_transaction_id', 'string']],
  [12, ['device_transaction_id_ng', 'bytes']],
  [13, ['payin_extra_data', 'bytes']],
]);

let messageType: protobuf.Type | undefined;

function newTransactionResponse(): protobuf.Type {
  if (!messageType) {
    // keepCase: the decoded names stay those of the .proto and of docs/architecture.md.
    const type = new protobuf.Root().loadSync(PROTO_FILE, { keepCase: true }).lookupType(MESSAGE);
    for (const [id, [name, kind]] of FIELDS) {
      const field = type.fieldsById[id];
      if (field?.name !== name || field.type !== kind)
        throw new Error(
          `${PROTO_FILE}: field ${id} is not \`${kind} ${name}\`; the decoder and the .proto disagree`,
        );
    }
    messageType = type;
  }
  return messageType;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * protobufjs reads a field by its number whatever its wire type, and replaces bad UTF-8 silently;
 * this pass refuses both so the decoded strings are exactly the signed ones.
 */
function checkWireFormat(bytes: Uint8Array): void {
  const reader = protobuf.Reader.create(bytes);
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const id = tag >>> 3;
    const wireType = tag & 7;
    const known = FIELDS.get(id);
    if (!known) {
      reader.skipType(wireType);
      continue;
    }
    if (wireType !== 2) throw new Error(`field ${id} (${known[0]}) has wire type ${wireType}, expected 2`);
    const value = reader.bytes();
    if (known[1] === 'string') {
      try {
        utf8.decode(value);
      } catch {
        throw new Error(`field ${id} (${known[0]}) is not valid UTF-8`);
      }
    }
  }
}

/** Decodes `providerSig.payload` (base64url, padded or not). Throws PayloadDecodeError. */
export function decodeSwapPayload(payloadB64url: string): DecodedSwapPayload {
  const text = decodeBase64url(payloadB64url);
  if ('reason' in text) throw new PayloadDecodeError('base64url', text.reason);
  if (text.bytes.length === 0) throw new PayloadDecodeError('empty', 'it is empty');
  const type = newTransactionResponse();
  let message: Record<string, unknown>;
  try {
    checkWireFormat(text.bytes);
    message = type.toObject(type.decode(text.bytes), { defaults: true }) as Record<string, unknown>;
  } catch (e) {
    throw new PayloadDecodeError('protobuf', (e as Error).message);
  }
  const str = (name: string): string => message[name] as string;
  const bytes = (name: string): Uint8Array => new Uint8Array(message[name] as Uint8Array);
  const amountToProvider = bytes('amount_to_provider');
  const amountToWallet = bytes('amount_to_wallet');
  return {
    payin_address: str('payin_address'),
    payin_extra_id: str('payin_extra_id'),
    refund_address: str('refund_address'),
    refund_extra_id: str('refund_extra_id'),
    payout_address: str('payout_address'),
    payout_extra_id: str('payout_extra_id'),
    currency_from: str('currency_from'),
    currency_to: str('currency_to'),
    amount_to_provider: bytesToBigint(amountToProvider),
    amount_to_wallet: bytesToBigint(amountToWallet),
    device_transaction_id: str('device_transaction_id'),
    device_transaction_id_ng: bytes('device_transaction_id_ng'),
    payin_extra_data: bytes('payin_extra_data'),
    amount_to_provider_bytes: amountToProvider,
    amount_to_wallet_bytes: amountToWallet,
  };
}

/** The decoded fields as JSON-safe text: amounts as decimal atomic units, bytes as lower-case hex. */
export function describeSwapPayload(decoded: DecodedSwapPayload): Record<string, string> {
  return {
    payin_address: decoded.payin_address,
    payin_extra_id: decoded.payin_extra_id,
    refund_address: decoded.refund_address,
    refund_extra_id: decoded.refund_extra_id,
    payout_address: decoded.payout_address,
    payout_extra_id: decoded.payout_extra_id,
    currency_from: decoded.currency_from,
    currency_to: decoded.currency_to,
    amount_to_provider: decoded.amount_to_provider.toString(),
    amount_to_wallet: decoded.amount_to_wallet.toString(),
    device_transaction_id: decoded.device_transaction_id,
    device_transaction_id_ng: toHex(decoded.device_transaction_id_ng),
    payin_extra_data: toHex(decoded.payin_extra_data),
  };
}

const MAX_AMOUNT_BYTES = 16;
const DEVICE_TRANSACTION_ID_NG_BYTES = 32;

function amountRules(
  name: 'amount_to_provider' | 'amount_to_wallet',
  raw: Uint8Array,
  value: bigint,
): Finding[] {
  return [
    finding(`device.${name}.length`, raw.length <= MAX_AMOUNT_BYTES ? 'ok' : 'violation', {
      expected: `at most ${MAX_AMOUNT_BYTES} bytes`,
      actual: `${raw.length} bytes`,
    }),
    finding(`device.${name}.nonzero`, value !== 0n ? 'ok' : 'violation', {
      expected: 'not zero',
      actual: value.toString(),
    }),
  ];
}

/**
 * The hardware signing device's rules on the payload (docs/architecture.md, "Signed payload"), one finding per
 * rule, 'ok' ones included. "Set" means non-empty, as proto3 presence goes: a single 0x00 byte of
 * payin_extra_data counts as set for the exclusivity rule.
 */
export function deviceRuleFindings(decoded: DecodedSwapPayload): Finding[] {
  const idLength = decoded.device_transaction_id_ng.length;
  const extraData = decoded.payin_extra_data;
  const extraDataShapeOk =
    extraData.length === 0 || (extraData.length === 1 && extraData[0] === 0) || extraData.length === 33;
  const bothExtras = decoded.payin_extra_id !== '' && extraData.length > 0;
  return [
    finding(
      'device.device_transaction_id_ng.length',
      idLength === DEVICE_TRANSACTION_ID_NG_BYTES ? 'ok' : 'violation',
      {
        expected: `${DEVICE_TRANSACTION_ID_NG_BYTES} bytes`,
        actual: `${idLength} bytes`,
      },
    ),
    ...amountRules('amount_to_provider', decoded.amount_to_provider_bytes, decoded.amount_to_provider),
    ...amountRules('amount_to_wallet', decoded.amount_to_wallet_bytes, decoded.amount_to_wallet),
    finding('device.payin_extra.exclusive', bothExtras ? 'violation' : 'ok', {
      expected: 'payin_extra_id and payin_extra_data not both set',
      actual: bothExtras
        ? 'both set'
        : decoded.payin_extra_id !== ''
          ? 'payin_extra_id only'
          : extraData.length > 0
            ? 'payin_extra_data only'
            : 'neither set',
    }),
    finding('device.payin_extra_data.length', extraDataShapeOk ? 'ok' : 'violation', {
      expected: 'empty, a single 0x00 byte, or 33 bytes',
      actual: extraData.length === 1 ? `1 byte 0x${toHex(extraData)}` : `${extraData.length} bytes`,
    }),
  ];
}
