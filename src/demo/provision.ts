import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './port.ts';
import type pg from 'pg';
import { PayloadSigner } from '../simulator/index.ts';
import { generateApiKey, apiKeyDigest } from '../providers/api-keys.ts';
import { readProvidersFile } from '../providers/file.ts';
import { loadProviders } from '../providers/store.ts';

/** The demo partner's provider id (the simulator plays it). */
export const DEMO_PROVIDER = 'demo-partner';

/** Partner ids of the simulator's catalog and the platform's ids they stand for. */
export const DEMO_CURRENCIES: Readonly<Record<string, string>> = {
  btc: 'BTC',
  eth: 'ETH',
  ltc: 'LTC',
  usdt: 'USDT',
  sol: 'SOL',
  xrp: 'XRP',
  bat: 'BAT',
  pol: 'POL',
};

/** Kept in the demo folder (mode 0600) so a second `up` reuses them and old payloads still verify. */
interface DemoSecrets {
  /** Absent in files written before it was kept. */
  createdAt?: string;
  simulatorKeyPem: string;
  webhookKey: string;
  walletKey: string;
}

export interface DemoSetup {
  readonly providerId: string;
  readonly simulatorPort: number;
  /** SHA-256 digest of the demo wallet's gateway key (for GATEWAY_API_KEY_DIGESTS). */
  readonly walletKeyDigest: string;
  /** Only the demo worker's: where the simulator listens, its key file, the keys it uses. */
  readonly demoEnv: Record<string, string>;
}

function readOrMakeSecrets(dir: string): DemoSecrets {
  const file = join(dir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as DemoSecrets;
  const secrets: DemoSecrets = {
    createdAt: new Date().toISOString(),
    simulatorKeyPem: PayloadSigner.generate('secp256k1').privateKeyPem(),
    webhookKey: generateApiKey().key,
    walletKey: generateApiKey().key,
  };
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  chmodSync(file, 0o600);
  return secrets;
}

// In its own module: `up` and the demo's chain node find a port without loading the demo's provisioning.
export { freePort };

/**
 * Provisions the demo partner: keys (made once, kept in `dir`), a providers file written there and
 * loaded into the registry like any partner's, with the simulator's signing key and the webhook key.
 */
export async function provisionDemo(
  pool: pg.Pool,
  options: { dir: string; simulatorPort?: number; webhookUrl: string; gatewayUrl: string },
): Promise<DemoSetup> {
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const secrets = readOrMakeSecrets(options.dir);
  const signer = PayloadSigner.fromPem(secrets.simulatorKeyPem);
  const keyFile = join(options.dir, 'simulator-key.pem');
  writeFileSync(keyFile, secrets.simulatorKeyPem, { mode: 0o600 });
  const simulatorPort = options.simulatorPort ?? (await freePort());
  const file = join(options.dir, 'providers.yaml');
  const webhookDigest = apiKeyDigest(secrets.webhookKey).toString('hex');
  writeFileSync(
    file,
    [
      '# Written by `swap-ledger up` for the demo: the partner simulator as a provider.',
      'providers:',
      `  - id: ${DEMO_PROVIDER}`,
      '    displayName: Demo partner (simulator)',
      `    client: { baseUrl: "http://127.0.0.1:${simulatorPort}", timeouts: { readMs: 5000, swapMs: 5000 }, retry: { maxAttempts: 2, baseDelayMs: 100 } }`,
      // The key id names the key: a demo folder made afresh adds its key beside older ones in the registry.
      `    webhookKeys: [{ keyId: demo-${webhookDigest.slice(0, 12)}, sha256: "${webhookDigest}" }]`,
      `    payloadKeys: [{ keyId: demo-${signer.curve}, curve: ${signer.curve}, publicKey: "${signer.publicKey.hex}", validFrom: "${secrets.createdAt ?? '2000-01-01T00:00:00Z'}" }]`,
      `    currencies: { ${Object.entries(DEMO_CURRENCIES)
        .map(([p, q]) => `${p}: ${q}`)
        .join(', ')} }`,
      '    statusMap: { EXCHANGING: PENDING, SENDING: PENDING }',
      '    pollIntervalSeconds: 2',
      '    rateLimit: { perSecond: 200, burst: 400 }',
      '',
    ].join('\n'),
  );
  await loadProviders(pool, readProvidersFile(file, {}));
  return {
    providerId: DEMO_PROVIDER,
    simulatorPort,
    walletKeyDigest: apiKeyDigest(secrets.walletKey).toString('hex'),
    demoEnv: {
      DEMO_PROVIDER,
      DEMO_SIMULATOR_PORT: String(simulatorPort),
      DEMO_SIMULATOR_KEY_FILE: keyFile,
      DEMO_WEBHOOK_URL: options.webhookUrl,
      DEMO_WEBHOOK_KEY: secrets.webhookKey,
      DEMO_GATEWAY_URL: options.gatewayUrl,
      DEMO_WALLET_KEY: secrets.walletKey,
    },
  };
}
