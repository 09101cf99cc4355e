import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/command.ts';
import { main } from '../../src/cli/main.ts';
import { KEYS, OVER_VECTOR, R1, SIGNED, TAMPERED_PAYLOAD, VECTOR } from '../fixtures/payload/vectors.ts';

const path = (url: URL) => fileURLToPath(url);

async function run(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { stdout: (l) => out.push(l), stderr: (l) => err.push(l) };
  const code = await main(['payload', 'verify', ...args], io);
  const report = out.length > 0 ? JSON.parse(out.join('\n')) : undefined;
  return { code, report, out, err };
}

const verify = (payload: string, signature: string, key: string, ...more: string[]) =>
  run('--payload', payload, '--signature', signature, '--key', key, ...more);
const problems = (report: { findings: { outcome: string; check: string }[] }) =>
  report.findings.filter((f) => f.outcome !== 'ok').map((f) => f.check);

describe('swap-ledger payload verify', () => {
  it('verifies and decodes the public vector: one JSON object, exit 0', async () => {
    const { code, report, out, err } = await verify(VECTOR.payload, VECTOR.signature, VECTOR.publicKey);
    expect(code).toBe(0);
    expect(err).toEqual([]);
    expect(out).toHaveLength(1);
    expect(report.signatureValid).toBe(true);
    expect(report.curve).toBe('secp256k1');
    expect(report.decoded).toEqual(VECTOR.fields);
    expect(problems(report)).toEqual([]);
    expect(report.findings.map((f: { check: string }) => f.check)).toContain(
      'device.payin_extra_data.length',
    );
  });

  it.each([
    ['--curve secp256k1', [VECTOR.signature, VECTOR.publicKey, '--curve', 'secp256k1']],
    ['a hex key file', [VECTOR.signature, path(KEYS.vectorHexFile)]],
    ['a PEM file', [OVER_VECTOR.k1Valid, path(KEYS.k1PemFile)]],
    ['a JWK file', [OVER_VECTOR.k1Valid, path(KEYS.k1JwkFile)]],
    ['a compressed key and its curve', [OVER_VECTOR.k1Valid, KEYS.k1CompressedHex, '--curve', 'secp256k1']],
    ['a high-S signature', [OVER_VECTOR.vectorHighS, VECTOR.publicKey]],
  ] as const)('exits 0 with %s', async (_, [signature, key, ...more]) => {
    const { code, report } = await verify(VECTOR.payload, signature, key, ...more);
    expect(code).toBe(0);
    expect(report.signatureValid).toBe(true);
  });

  it('accepts --name=value options', async () => {
    const { code } = await run(
      `--payload=${VECTOR.payload}`,
      `--signature=${VECTOR.signature}`,
      `--key=${VECTOR.publicKey}`,
      '--curve=secp256k1',
    );
    expect(code).toBe(0);
  });

  it('verifies secp256r1 with a PEM file and the curve from the key', async () => {
    const { code, report } = await verify(R1.payload, R1.signature, path(KEYS.r1PemFile));
    expect(code).toBe(0);
    expect(report.curve).toBe('secp256r1');
  });

  it.each([
    ['a tampered payload', TAMPERED_PAYLOAD, VECTOR.signature, VECTOR.publicKey, 'signature.verify'],
    ['a wrong key', VECTOR.payload, VECTOR.signature, KEYS.k1Hex, 'signature.verify'],
    ['a key on the other curve', VECTOR.payload, VECTOR.signature, KEYS.r1Hex, 'signature.verify'],
    ['a signature without the dot', VECTOR.payload, OVER_VECTOR.k1NoDot, KEYS.k1Hex, 'signature.verify'],
    [
      'a signature over the unpadded payload',
      VECTOR.payload,
      OVER_VECTOR.k1Unpadded,
      KEYS.k1Hex,
      'signature.verify',
    ],
    [
      'a signature over the raw bytes',
      VECTOR.payload,
      OVER_VECTOR.k1RawBytes,
      KEYS.k1Hex,
      'signature.verify',
    ],
    ['a DER signature', VECTOR.payload, OVER_VECTOR.vectorDer, VECTOR.publicKey, 'signature.encoding'],
  ])('exits 1 on %s, still printing the decoded fields', async (_, payload, signature, key, failed) => {
    const { code, report, err } = await verify(payload, signature, key);
    expect(code).toBe(1);
    expect(err).toEqual([]);
    expect(report.signatureValid).toBe(false);
    expect(problems(report)).toContain(failed);
    expect(report.decoded.currency_from).toBe('BTC');
  });

  it('prints the tampered amount as decoded', async () => {
    const { report } = await verify(TAMPERED_PAYLOAD, VECTOR.signature, VECTOR.publicKey);
    expect(report.decoded.amount_to_provider).toBe('1151');
  });

  it('prints amounts above 2^64 as exact decimal strings', async () => {
    const { code, report } = await verify(SIGNED.bigAmounts.payload, SIGNED.bigAmounts.signature, KEYS.k1Hex);
    expect(code).toBe(0);
    expect(report.decoded.amount_to_provider).toBe('18446744073709551617');
    expect(report.decoded.amount_to_wallet).toBe('340282366920938463463374607431768211455');
  });

  it('reports device-rule violations in the findings; the exit code follows the signature', async () => {
    const { code, report } = await verify(SIGNED.extraBoth.payload, SIGNED.extraBoth.signature, KEYS.k1Hex);
    expect(code).toBe(0);
    expect(problems(report)).toEqual(['device.payin_extra.exclusive']);
    expect(report.decoded.payin_extra_data).toBe('00');
    expect(report.decoded.payin_extra_id).toBe('424242');
  });

  it.each([
    ['a missing --key', ['--payload', VECTOR.payload, '--signature', VECTOR.signature], /--key is required/],
    [
      'a missing --signature',
      ['--payload', VECTOR.payload, '--key', VECTOR.publicKey],
      /--signature is required/,
    ],
    [
      'an unknown --curve',
      [
        '--payload',
        VECTOR.payload,
        '--signature',
        VECTOR.signature,
        '--key',
        VECTOR.publicKey,
        '--curve',
        'p384',
      ],
      /--curve must be/,
    ],
    ['an unknown option', ['--payload', VECTOR.payload, '--sig', VECTOR.signature], /unknown option --sig/],
    ['a stray argument', ['extra'], /unexpected argument "extra"/],
    [
      'an unreadable key file',
      ['--payload', VECTOR.payload, '--signature', VECTOR.signature, '--key', '/nonexistent/key.pem'],
      /not a readable file \(ENOENT\)/,
    ],
    [
      'the secp256k1 vector key as --curve secp256r1',
      [
        '--payload',
        VECTOR.payload,
        '--signature',
        VECTOR.signature,
        '--key',
        VECTOR.publicKey,
        '--curve',
        'secp256r1',
      ],
      /--key: the public key is not a point on secp256r1/,
    ],
    [
      'an r1 PEM as --curve secp256k1',
      [
        '--payload',
        R1.payload,
        '--signature',
        R1.signature,
        '--key',
        path(KEYS.r1PemFile),
        '--curve',
        'secp256k1',
      ],
      /--key: the PEM is a secp256r1 key, not secp256k1/,
    ],
    [
      'an undecodable payload',
      ['--payload', 'CAE', '--signature', VECTOR.signature, '--key', VECTOR.publicKey],
      /--payload: payload is not a NewTransactionResponse: .*wire type/,
    ],
    [
      'a payload in standard base64',
      [
        '--payload',
        VECTOR.payload.replace(/_/g, '/'),
        '--signature',
        VECTOR.signature,
        '--key',
        VECTOR.publicKey,
      ],
      /--payload: .*standard base64/,
    ],
  ])('exits 2 on %s with one line on stderr and nothing on stdout', async (_, args, message) => {
    const { code, out, err } = await run(...args);
    expect(code).toBe(2);
    expect(out).toEqual([]);
    expect(err).toHaveLength(1);
    expect(err[0]).not.toContain('\n');
    expect(err[0]).toMatch(message);
  });

  it('is listed by help', async () => {
    const out: string[] = [];
    await main(['help'], { stdout: (l) => out.push(l), stderr: () => {} });
    expect(out.join('\n')).toMatch(/payload verify --payload <b64url> --signature <b64url> --key/);
  });
});

describe('bin/swap-ledger.mjs payload verify (real process)', () => {
  const bin = fileURLToPath(new URL('../../bin/swap-ledger.mjs', import.meta.url));
  const spawn = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [bin, 'payload', 'verify', ...args], (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout, stderr }),
      );
    });

  it('exits 0, 1 and 2 as documented', async () => {
    const [valid, invalid, undecodable, usage] = await Promise.all([
      spawn('--payload', VECTOR.payload, '--signature', VECTOR.signature, '--key', VECTOR.publicKey),
      spawn('--payload', VECTOR.payload, '--signature', OVER_VECTOR.k1NoDot, '--key', KEYS.k1Hex),
      spawn('--payload', 'CAE', '--signature', VECTOR.signature, '--key', VECTOR.publicKey),
      spawn('--payload', '', '--signature', VECTOR.signature, '--key', VECTOR.publicKey),
    ]);
    expect(valid.code).toBe(0);
    expect(JSON.parse(valid.stdout)).toMatchObject({ signatureValid: true, decoded: VECTOR.fields });
    expect(valid.stderr).toBe('');
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.stdout).signatureValid).toBe(false);
    expect(undecodable.code).toBe(2);
    expect(undecodable.stdout).toBe('');
    expect(undecodable.stderr.trimEnd().split('\n')).toEqual([
      'swap-ledger payload verify: --payload: payload is not a NewTransactionResponse: field 1 (payin_address) has wire type 0, expected 2',
    ]);
    expect(usage.code).toBe(2);
    expect(usage.stdout).toBe('');
    expect(usage.stderr.trimEnd().split('\n')).toEqual([
      'swap-ledger payload verify: --payload is required; usage: swap-ledger payload verify --payload <b64url> --signature <b64url> --key <hex|pem|jwk|file> [--curve secp256k1|secp256r1]',
    ]);
  }, 30_000);
});
