import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/**
 * The partner's side of the signed payload (docs/architecture.md, "Signed payload"): a protobuf
 * NewTransactionResponse, base64url WITH padding as text, signed with ECDSA/SHA-256 over the ASCII of
 * "." + text, signature as 64-byte R||S in base64url (padded,
 * like the public test vector). This is what a real partner does, so it lives with
 * the simulator and never with the platform's verifier.
 */

const PROTO_FILE = fileURLToPath(
  new URL('../../schemas/payload/new_transaction_response.proto', import.meta.url),
);

/** The two curves partners sign with; 'prime256v1' is OpenSSL's name of secp256r1 and accepted as such. */
export type SimulatorCurve = 'secp256k1' | 'secp256r1' | 'prime256v1';
export const SIMULATOR_CURVES: readonly SimulatorCurve[] = ['secp256k1', 'secp256r1', 'prime256v1'];

function nodeCurve(curve: SimulatorCurve): 'secp256k1' | 'prime256v1' {
  return curve === 'secp256k1' ? 'secp256k1' : 'prime256v1';
}

/** Fields of the payload; amounts in atomic units, the nonce as its 32 bytes. */
export interface SwapPayloadFields {
  readonly payin_address: string;
  readonly payin_extra_id?: string;
  readonly refund_address: string;
  readonly refund_extra_id?: string;
  readonly payout_address: string;
  readonly payout_extra_id?: string;
  readonly currency_from: string;
  readonly currency_to: string;
  readonly amount_to_provider: bigint;
  readonly amount_to_wallet: bigint;
  readonly device_transaction_id?: string;
  readonly device_transaction_id_ng: Uint8Array;
  readonly payin_extra_data?: Uint8Array;
}

let messageType: protobuf.Type | undefined;
function newTransactionResponse(): protobuf.Type {
  messageType ??= new protobuf.Root()
    .loadSync(PROTO_FILE, { keepCase: true })
    .lookupType('ledger_swap.NewTransactionResponse');
  return messageType;
}

/** Big-endian unsigned, minimal length (0 is empty: the proto3 default); the device takes at most 16 bytes. */
export function bigintToBytes(n: bigint): Uint8Array {
  if (n < 0n) throw new RangeError('amount must not be negative');
  if (n === 0n) return new Uint8Array(0);
  let hex = n.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  if (hex.length > 32) throw new RangeError(`amount ${n} needs more than 16 bytes`);
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/** Proto3 as real partners emit it: fields at their default ('' or empty bytes) are left out. */
export function encodeSwapPayload(f: SwapPayloadFields): Uint8Array {
  const type = newTransactionResponse();
  const all: Record<string, string | Uint8Array | undefined> = {
    payin_address: f.payin_address,
    payin_extra_id: f.payin_extra_id,
    refund_address: f.refund_address,
    refund_extra_id: f.refund_extra_id,
    payout_address: f.payout_address,
    payout_extra_id: f.payout_extra_id,
    currency_from: f.currency_from,
    currency_to: f.currency_to,
    amount_to_provider: bigintToBytes(f.amount_to_provider),
    amount_to_wallet: bigintToBytes(f.amount_to_wallet),
    device_transaction_id: f.device_transaction_id,
    device_transaction_id_ng: f.device_transaction_id_ng,
    payin_extra_data: f.payin_extra_data,
  };
  const present = Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined && v.length > 0));
  return type.encode(type.fromObject(present)).finish();
}

/** base64url with '=' padding, as partners send the payload text. */
export function toPaddedBase64url(bytes: Uint8Array): string {
  const text = Buffer.from(bytes).toString('base64url');
  return text + '='.repeat((4 - (text.length % 4)) % 4);
}

export interface SimulatorPublicKey {
  /** As the payload module names curves. */
  readonly curve: 'secp256k1' | 'secp256r1';
  /** JWS algorithm of the curve. */
  readonly alg: 'ES256K' | 'ES256';
  /** Uncompressed SEC1 point (04 || X || Y), hex: the form the public test vector's (docs/architecture.md) uses. */
  readonly hex: string;
  readonly pem: string;
  readonly jwk: { readonly kty: 'EC'; readonly crv: string; readonly x: string; readonly y: string };
}

export class PayloadSigner {
  readonly publicKey: SimulatorPublicKey;

  readonly curve: 'secp256k1' | 'secp256r1';

  private constructor(
    curve: SimulatorCurve,
    private readonly privateKey: KeyObject,
  ) {
    this.curve = nodeCurve(curve) === 'secp256k1' ? 'secp256k1' : 'secp256r1';
    const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
    const x = Buffer.from(jwk.x!, 'base64url');
    const y = Buffer.from(jwk.y!, 'base64url');
    this.publicKey = {
      curve: this.curve,
      alg: this.curve === 'secp256k1' ? 'ES256K' : 'ES256',
      hex: '04' + x.toString('hex') + y.toString('hex'),
      pem: createPublicKey(privateKey).export({ format: 'pem', type: 'spki' }).toString(),
      jwk: { kty: 'EC', crv: jwk.crv!, x: jwk.x!, y: jwk.y! },
    };
  }

  static generate(curve: SimulatorCurve): PayloadSigner {
    if (!SIMULATOR_CURVES.includes(curve)) throw new Error(`unsupported curve ${String(curve)}`);
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: nodeCurve(curve) });
    return new PayloadSigner(curve, privateKey);
  }

  /** From a PKCS#8 or SEC1 PEM private key on one of the two curves. */
  static fromPem(pem: string): PayloadSigner {
    const key = createPrivateKey(pem);
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve !== 'secp256k1' && curve !== 'prime256v1') {
      throw new Error(`simulator key must be on secp256k1 or prime256v1, got ${String(curve)}`);
    }
    return new PayloadSigner(curve, key);
  }

  privateKeyPem(): string {
    return this.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  }

  /** 64-byte R||S over "." + payloadText (the flattened-JWS signing input with an empty protected header). */
  signPayloadText(payloadText: string): string {
    const signature = sign('sha256', Buffer.from('.' + payloadText, 'ascii'), {
      key: this.privateKey,
      dsaEncoding: 'ieee-p1363',
    });
    return toPaddedBase64url(signature); // padded like the public test vector
  }

  signSwapPayload(fields: SwapPayloadFields): { payload: string; signature: string } {
    const payload = toPaddedBase64url(encodeSwapPayload(fields));
    return { payload, signature: this.signPayloadText(payload) };
  }
}
