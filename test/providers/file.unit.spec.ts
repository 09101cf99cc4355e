import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/providers/api-keys.ts';
import { ProvidersFileError, parseProvidersFile, readProvidersFile } from '../../src/providers/file.ts';
import { mapStatus } from '../../src/swap/status.ts';

const EXAMPLE = new URL('../../config/providers.example.yaml', import.meta.url);
const K1 =
  '0478d5facdae2305f48795d3ce7d9244f5060d2f800901da5746d1f4177ae8d7bbe63f3870efc0d36af8f91962811e1d8d9df91ce3b3ea2cd9f550c7d465f8b7b3';

function problemsOf(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseProvidersFile(text, { env });
  } catch (e) {
    expect(e).toBeInstanceOf(ProvidersFileError);
    return (e as ProvidersFileError).problems;
  }
  throw new Error('expected a ProvidersFileError');
}

describe('providers file', () => {
  it('reads the example file, with the partner credential taken from the environment', () => {
    const [p] = readProvidersFile(EXAMPLE.pathname, { PARTNER_A_API_KEY: 'partner-secret' });
    expect(p!.id).toBe('partner-a');
    expect(p!.client).toMatchObject({
      provider: 'partner-a',
      baseUrl: 'https://api.partner-a.example/v2',
      headers: { 'x-api-key': 'partner-secret' },
      timeouts: { readMs: 10000, swapMs: 30000 },
    });
    expect(p!.webhookKeys.map((k) => k.keyId)).toEqual(['k2026-02', 'k2025-08']);
    expect(p!.webhookKeys[1]!.revokedAt).toBe('2026-02-15T00:00:00Z');
    expect(p!.payloadKeys[0]).toMatchObject({ keyId: 'sig-2025', curve: 'secp256k1' });
    expect(p!.currencies).toEqual({ btc: 'BTC', eth: 'ETH', usdterc20: 'USDT' });
    expect(mapStatus(p!.statusMapping, 'finished')).toMatchObject({ status: 'FINISHED', final: true });
    expect(mapStatus(p!.statusMapping, 'exchanging')).toMatchObject({ status: 'PENDING', final: false });
    expect(mapStatus(p!.statusMapping, 'UNKNOWN')).toBeUndefined();
    expect(mapStatus(p!.statusMapping, 'PENDING')).toMatchObject({ status: 'PENDING' });
    expect(p!.rateLimit).toEqual({ perSecond: 50, burst: 100 });
    expect(p!.pollIntervalSeconds).toBe(60);
  });

  it('fills defaults: enabled, display name, default final statuses, poll interval and rate limit', () => {
    const [p] = parseProvidersFile('providers:\n  - id: p1\n    client: { baseUrl: "http://127.0.0.1:9" }\n');
    expect(p).toMatchObject({
      id: 'p1',
      displayName: 'p1',
      enabled: true,
      webhookKeys: [],
      payloadKeys: [],
      currencies: {},
      pollIntervalSeconds: 60,
      rateLimit: { perSecond: 50, burst: 100 },
    });
    // EXPIRED is closed (reopenable), not final, unless the file lists it.
    expect([...p!.statusMapping.finals].sort()).toEqual(['FINISHED', 'REFUNDED']);
    // networkFees is read by evidence unless the entry overrides it.
    expect(p).toMatchObject({ defaultSlippage: null, webhookNetworkFees: 'evidence' });
  });

  it('lists every problem at once, across providers, without echoing secret values', () => {
    const clear = generateApiKey();
    const digest = generateApiKey().sha256;
    const text = `
providers:
  - id: Bad_ID
    client: { baseUrl: "ftp://x" }
  - id: p2
    colour: blue
    enabled: "yes"
    client:
      baseUrl: https://p2.example
      headers: { authorization: "Bearer \${P2_TOKEN}" }
    webhookKeys:
      - { keyId: k1, sha256: "${clear.key}" }
      - { keyId: k1, sha256: "abc" }
      - { keyId: k3, sha256: "${digest}", revokedAt: yesterday }
    payloadKeys:
      - { keyId: s1, curve: secp256k1, publicKey: "04abcd", validFrom: "2025-01-01T00:00:00Z" }
      - { keyId: s2, curve: ed25519, publicKey: "${K1}", validFrom: "2025-01-01T00:00:00Z" }
    currencies: { btc: BITCOIN }
    statusMap: { done: COMPLETED }
    finalStatuses: [FINISHED, DONE]
    pollIntervalSeconds: 0
    rateLimit: { perSecond: 0, burst: 1.5 }
  - id: p3
    client: { baseUrl: "https://p3.example" }
    webhookKeys: [{ keyId: a, sha256: "${digest}" }]
  - id: p3
    client: { baseUrl: "https://p3.example" }
`;
    const problems = problemsOf(text);
    const all = problems.join('\n');
    for (const expected of [
      /providers\[0\]\.id: must be lower-case/,
      /providers\[0\]\.client\.baseUrl: must use http or https/,
      /providers\[1\] \(p2\)\.colour: unknown key/,
      /p2\)\.enabled: must be true or false/,
      /p2\)\.client\.headers\.authorization: environment variable P2_TOKEN is not set/,
      /webhookKeys\[0\]\.sha256: holds an API key in clear/,
      /webhookKeys\[1\]\.keyId: k1 appears twice/,
      /webhookKeys\[1\]\.sha256: must be a quoted string of 64 hex digits/,
      /webhookKeys\[2\]\.revokedAt: must be an ISO-8601 timestamp/,
      /payloadKeys\[0\]: .*65 bytes/,
      /payloadKeys\[1\]: .*curve must be secp256k1 or secp256r1/,
      /currencies\.btc: "BITCOIN" is not a platform currency id/,
      /statusMap\.done: must be one of FINISHED, .* or null, got "COMPLETED"/,
      /finalStatuses: "DONE" not among/,
      /pollIntervalSeconds: must be a whole number/,
      /rateLimit\.perSecond: must be a whole number/,
      /rateLimit\.burst: must be a whole number/,
      /providers\[3\]\.id: p3 is also providers\[2\]/,
    ])
      expect(all).toMatch(expected);
    expect(all).not.toContain(clear.key);
    expect(all).not.toContain('Bearer');
  });

  it('refuses the same digest listed for two providers (a key must name one provider)', () => {
    const { sha256 } = generateApiKey();
    const problems = problemsOf(`
providers:
  - { id: a, client: { baseUrl: "https://a.example" }, webhookKeys: [{ keyId: k, sha256: "${sha256}" }] }
  - { id: b, client: { baseUrl: "https://b.example" }, webhookKeys: [{ keyId: k, sha256: "${sha256.toUpperCase()}" }] }
`);
    expect(problems).toEqual([`b.webhookKeys k: the same digest is also listed as a/k`]);
  });

  it('refuses text that is not YAML or has no providers list, naming the file', () => {
    expect(problemsOf('providers: [')[0]).toMatch(/not valid YAML/);
    expect(problemsOf('nothing: here')[0]).toMatch(/must be a mapping with a list "providers"/);
    expect(() => readProvidersFile('/nonexistent/providers.yaml')).toThrow(/cannot be read \(ENOENT\)/);
  });

  it('the example file holds no key in clear', () => {
    expect(readFileSync(EXAMPLE, 'utf8')).not.toMatch(/slk_[A-Za-z0-9_-]{20}/);
  });
});
