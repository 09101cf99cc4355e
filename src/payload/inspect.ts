import { currencyDecimals, type DecimalsLookup } from '../money/currencies.ts';
import { checkPayloadAgainstSwap, type SwapContext } from './check.ts';
import {
  decodeSwapPayload,
  deviceRuleFindings,
  PayloadDecodeError,
  type DecodedSwapPayload,
} from './decode.ts';
import { finding, type Finding } from './findings.ts';
import { keysValidAt, KeyRegistryError, type PartnerKey } from './keys.ts';
import { verifyProviderSig, type ProviderSig, type SignatureVerdict } from './verify.ts';

export interface InspectSwapPayloadInput extends SwapContext {
  readonly providerSig: ProviderSig;
  /** The provider's key history; the keys valid at `createdAt` are tried. */
  readonly keys: readonly PartnerKey[];
  /** SwapResponse.createdAt: picks the key window. */
  readonly createdAt: string | Date;
  /** Decimals by platform currency id; defaults to the platform currency table. */
  readonly magnitudes?: DecimalsLookup | undefined;
}

export interface PayloadInspection {
  /** Present when the payload decodes. Trust it only when `signatureValid` is true. */
  readonly decoded?: DecodedSwapPayload;
  readonly signatureValid: boolean;
  /** Every check made, in order: key window, signature, decoding, device rules, request match. */
  readonly findings: Finding[];
  /** The key that verified the signature; absent when none did. */
  readonly keyId?: string;
}

/**
 * Everything the platform can prove about a swap's signed payload, in one call: picks the partner
 * keys valid at `createdAt` (newest first; the first that verifies wins, so rotation overlaps
 * work), verifies the signature, decodes the payload, applies the device rules and compares it
 * with the request, the response and, for fixed swaps, the quote.
 *
 * Never throws for bad partner data: problems are findings ('mismatch', 'violation',
 * 'unverifiable'). Accept a swap only when `signatureValid` is true and no finding is a mismatch or
 * violation; 'unverifiable' findings need a policy of their own (a fixed quote without an amount
 * echo is one).
 */
export async function inspectSwapPayload(input: InspectSwapPayloadInput): Promise<PayloadInspection> {
  const findings: Finding[] = [];
  const createdAt = input.createdAt instanceof Date ? input.createdAt.toISOString() : String(input.createdAt);

  let candidates: PartnerKey[] = [];
  try {
    candidates = keysValidAt(input.keys, input.createdAt);
    findings.push(
      candidates.length > 0
        ? finding('signature.key_window', 'ok', {
            expected: `a key valid at ${createdAt}`,
            actual: candidates.map((k) => k.keyId).join(', '),
          })
        : finding('signature.key_window', 'unverifiable', {
            expected: `a key valid at ${createdAt}`,
            actual: 'none',
            detail: `${input.keys.length} key(s) configured, none valid at that time`,
          }),
    );
  } catch (e) {
    if (!(e instanceof KeyRegistryError)) throw e;
    findings.push(finding('signature.key_window', 'unverifiable', { detail: e.message }));
  }

  let verdict: SignatureVerdict | undefined;
  let keyId: string | undefined;
  for (const key of candidates) {
    const attempt = await verifyProviderSig(input.providerSig, key);
    if (attempt.valid) {
      verdict = attempt;
      keyId = key.keyId;
      break;
    }
    verdict ??= attempt; // report the newest key's findings when none verifies
  }
  if (verdict) findings.push(...verdict.findings);
  if (!keyId && candidates.length > 1)
    findings.push(
      finding('signature.key_rotation', 'violation', {
        detail: `tried ${candidates.map((k) => k.keyId).join(', ')}; none verifies (findings above are for ${candidates[0]!.keyId})`,
      }),
    );

  let decoded: DecodedSwapPayload | undefined;
  try {
    decoded = decodeSwapPayload(input.providerSig?.payload);
    findings.push(finding('payload.decode', 'ok'));
  } catch (e) {
    if (!(e instanceof PayloadDecodeError)) throw e;
    findings.push(finding('payload.decode', 'violation', { detail: e.message }));
  }
  if (decoded) {
    findings.push(...deviceRuleFindings(decoded));
    findings.push(...checkPayloadAgainstSwap(decoded, input, input.magnitudes ?? currencyDecimals));
  }

  return {
    ...(decoded ? { decoded } : {}),
    signatureValid: keyId !== undefined,
    findings,
    ...(keyId !== undefined ? { keyId } : {}),
  };
}
