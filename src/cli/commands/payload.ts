import { readFileSync } from 'node:fs';
import { parseOptions, UsageError, type CliIo, type Command } from '../command.ts';
import {
  CURVES,
  decodeSwapPayload,
  describeSwapPayload,
  deviceRuleFindings,
  importVerificationKey,
  KeyImportError,
  PayloadDecodeError,
  verifyProviderSig,
  type Curve,
  type DecodedSwapPayload,
  type VerificationKey,
} from '../../payload/index.ts';

const USAGE =
  'payload verify --payload <b64url> --signature <b64url> --key <hex|pem|jwk|file> [--curve secp256k1|secp256r1]';

/** --key is inline hex, PEM or JWK JSON, or else the path of a file holding one of them. */
function keyText(value: string): string {
  const inline = value.trim();
  if (/^(0x)?[0-9a-fA-F]+$/.test(inline) || inline.startsWith('-----BEGIN') || inline.startsWith('{'))
    return inline;
  try {
    return readFileSync(value, 'utf8');
  } catch (e) {
    throw new UsageError(
      `--key is not hex, PEM or JWK, and not a readable file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
}

/**
 * `payload verify`: prints one JSON object (signatureValid, curve, decoded fields, findings).
 * Exit 0 when the signature verifies, 1 when it does not (device-rule findings do not change the
 * exit code; read them in the output), 2 on usage, key or payload decoding errors.
 */
export const payloadVerifyCommand: Command = {
  words: ['payload', 'verify'],
  usage: USAGE,
  summary: 'decode a signed swap payload, apply the device rules and verify its signature',
  async run(args: string[], io: CliIo): Promise<number> {
    const { values, positionals } = parseOptions(args, { values: ['payload', 'signature', 'key', 'curve'] });
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    for (const name of ['payload', 'signature', 'key'] as const)
      if (!values[name]) throw new UsageError(`--${name} is required`);
    const curve = values.curve as Curve | undefined;
    if (curve !== undefined && !CURVES.includes(curve))
      throw new UsageError(`--curve must be secp256k1 or secp256r1, got "${curve}"`);

    let key: VerificationKey;
    try {
      key = importVerificationKey({ curve, publicKey: keyText(values.key!) });
    } catch (e) {
      if (!(e instanceof KeyImportError)) throw e;
      io.stderr(`swap-ledger payload verify: --key: ${e.message}`);
      return 2;
    }
    let decoded: DecodedSwapPayload;
    try {
      decoded = decodeSwapPayload(values.payload!);
    } catch (e) {
      if (!(e instanceof PayloadDecodeError)) throw e;
      io.stderr(`swap-ledger payload verify: --payload: ${e.message}`);
      return 2;
    }

    const verdict = await verifyProviderSig({ payload: values.payload!, signature: values.signature! }, key);
    const report = {
      signatureValid: verdict.valid,
      curve: key.curve,
      decoded: describeSwapPayload(decoded),
      findings: [...verdict.findings, ...deviceRuleFindings(decoded)],
    };
    io.stdout(JSON.stringify(report, null, 2));
    return verdict.valid ? 0 : 1;
  },
};
