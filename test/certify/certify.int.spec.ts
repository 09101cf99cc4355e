import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import type { CliIo } from '../../src/cli/command.ts';
import { buildStatusMapping } from '../../src/swap/status.ts';
import { certifyPartner, type CertifyReport, type CertifyTarget } from '../../src/certify/index.ts';
import {
  FINAL_STATUS_FAULTS,
  PAYLOAD_FAULTS,
  PayloadSigner,
  startPartnerSimulator,
  type CallFault,
  type InjectOptions,
  type PartnerSimulator,
  type PartnerSimulatorOptions,
  type SwapFault,
} from '../../src/simulator/index.ts';
import type { PartnerOperation } from '../../src/partner/types.ts';
import { apiKeyDigest, generateApiKey } from '../../src/providers/api-keys.ts';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import { parseProvidersFile } from '../../src/providers/file.ts';
import { loadProviders } from '../../src/providers/store.ts';
import { testStack, uniqueName } from '../support/context.ts';

/**
 * Certification against the partner simulator over real HTTP (loopback): with no fault every requirement
 * passes; with each named fault the requirement(s) that rule covers fail, with evidence, and nothing else.
 */

const PROVIDER = 'simco';
const WEBHOOK_KEY = 'slk_certify-test-webhook-key-0001';
const CURRENCIES = {
  btc: 'BTC',
  ltc: 'LTC',
  eth: 'ETH',
  usdt: 'USDT',
  bat: 'BAT',
  pol: 'POL',
  sol: 'SOL',
  xrp: 'XRP',
};
const TIME_LIMIT_MS = 3000; // generous: the machine running the tests may be busy

let sims: PartnerSimulator[] = [];
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

interface Case {
  readonly name: string;
  readonly sim?: PartnerSimulatorOptions;
  readonly callFault?: { op: PartnerOperation; fault: CallFault; options?: InjectOptions };
  readonly swapFaults?: readonly SwapFault[];
  /** Changes the registry entry against the simulator. */
  readonly target?: (t: CertifyTarget, sim: PartnerSimulator) => CertifyTarget;
  readonly webhookKey?: string;
  /** false: no webhook listener. */
  readonly webhook?: false;
  /** Requirement ids expected to FAIL; every other one must not. */
  readonly fails: readonly string[];
  readonly warns?: readonly string[];
}

/**
 * Starts a simulator (swaps finish on their first /status poll and push webhooks) and certifies it. The
 * webhook listener's port is picked free beforehand (the simulator must know it at start); another
 * socket on this machine may take it meanwhile (the simulator's own listener, any test's outgoing
 * connection), so an EADDRINUSE starts the case again on another port.
 */
async function certify(
  c: Omit<Case, 'name' | 'fails'>,
): Promise<{ report: CertifyReport; sim: PartnerSimulator }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await certifyOnce(c);
    } catch (e) {
      if ((e as { code?: string }).code !== 'EADDRINUSE' || attempt >= 5) throw e;
    }
  }
}

async function certifyOnce(
  c: Omit<Case, 'name' | 'fails'>,
): Promise<{ report: CertifyReport; sim: PartnerSimulator }> {
  const port = await freePort();
  const sim = await startPartnerSimulator({
    providerId: PROVIDER,
    progression: { advanceOn: 'poll' },
    webhook: { url: `http://127.0.0.1:${port}`, apiKey: c.webhookKey ?? WEBHOOK_KEY },
    ...c.sim,
  });
  sims.push(sim);
  if (c.callFault) sim.injectFault(c.callFault.op, c.callFault.fault, c.callFault.options);
  if (c.swapFaults) sim.injectSwapFaults(c.swapFaults, { nextSwaps: 1 });
  let target: CertifyTarget = {
    providerId: PROVIDER,
    baseUrl: sim.url,
    headers: {},
    payloadKeys: [sim.partnerKey()],
    currencies: CURRENCIES,
    statusMapping: buildStatusMapping(),
    webhookKeyDigests: [apiKeyDigest(WEBHOOK_KEY).toString('hex')],
  };
  if (c.target) target = c.target(target, sim);
  const report = await certifyPartner(target, {
    createSwaps: true,
    pageLimit: 3,
    ...(c.webhook === false ? {} : { webhook: { host: '127.0.0.1', port } }),
    webhookWaitMs: 4000,
    timeLimitMs: TIME_LIMIT_MS,
  });
  return { report, sim };
}

function verdicts(report: CertifyReport, verdict: string): string[] {
  return report.requirements.filter((r) => r.verdict === verdict).map((r) => r.id);
}

const malformed = (
  op: PartnerOperation,
  variant: 'drop-field' | 'number-for-decimal' | 'set-field',
  field?: string,
): Case['callFault'] => ({
  op,
  fault: { kind: 'malformed-body', variant, ...(field ? { field } : {}) },
});

const CASES: readonly Case[] = [
  // Catalog
  {
    name: 'currencies: next_cursor repeats',
    callFault: { op: 'currencies', fault: { kind: 'repeat-cursor' }, options: { times: 50 } },
    fails: ['catalog.currencies.cursor'],
  },
  {
    name: 'pairs: next_cursor repeats',
    callFault: { op: 'pairs', fault: { kind: 'repeat-cursor' }, options: { times: 50 } },
    fails: ['catalog.pairs.cursor'],
  },
  {
    name: 'currencies: next_cursor missing',
    callFault: malformed('currencies', 'drop-field'),
    fails: ['catalog.currencies.pages'],
  },
  {
    name: 'currencies: a type neither coin nor token',
    callFault: malformed('currencies', 'set-field'),
    fails: ['catalog.currencies.rules'],
  },
  {
    name: 'currencies: 500',
    callFault: { op: 'currencies', fault: { kind: 'server-error' } },
    fails: ['catalog.currencies.pages'],
  },
  {
    name: 'pairs: minSwapAmount as a JSON number',
    callFault: malformed('pairs', 'number-for-decimal'),
    fails: ['catalog.pairs.rules'],
  },
  {
    name: 'pairs: tradeMethod not a list',
    callFault: malformed('pairs', 'set-field'),
    fails: ['catalog.pairs.rules'],
  },
  {
    name: 'pairs: HTML body',
    callFault: { op: 'pairs', fault: { kind: 'malformed-body', variant: 'not-json' } },
    fails: ['catalog.pairs.pages'],
  },
  {
    name: 'registry: a currency without a platform id',
    target: (t) => ({ ...t, currencies: { ...CURRENCIES, sol: undefined as unknown as string } }),
    fails: ['catalog.currencies.mapped'],
  },
  // Quote
  {
    name: 'quote: amountTo as a JSON number',
    callFault: malformed('quote', 'number-for-decimal'),
    fails: ['quote.fixed'],
  },
  { name: 'quote: amountTo missing', callFault: malformed('quote', 'drop-field'), fails: ['quote.fixed'] },
  {
    name: 'quote: expiry not a timestamp',
    callFault: malformed('quote', 'set-field'),
    fails: ['quote.expiry'],
  },
  { name: 'quote: expires too soon', sim: { quoteTtlMs: 5_000 }, fails: ['quote.expiry'] },
  {
    name: 'quote: undocumented error key',
    callFault: { op: 'quote', fault: { kind: 'error-key', messageKey: 'QUOTE_BUSY', status: 400 } },
    fails: ['quote.fixed'],
  },
  {
    name: 'quote: connection dropped',
    callFault: { op: 'quote', fault: { kind: 'drop-connection' } },
    fails: ['quote.fixed'],
  },
  {
    name: 'quote: 502 text',
    callFault: {
      op: 'quote',
      fault: { kind: 'http-status', status: 502, body: 'bad gateway', contentType: 'text/plain' },
    },
    fails: ['quote.fixed'],
  },
  {
    name: 'quote: slower than the limit',
    callFault: { op: 'quote', fault: { kind: 'slow', delayMs: TIME_LIMIT_MS + 800 } },
    fails: ['http.response-time'],
  },
  {
    name: 'quote: 420 without Retry-After',
    callFault: { op: 'quote', fault: { kind: 'rate-limited', retryAfter: null } },
    fails: ['http.rate-limit'],
  },
  // Swaps: the signed payload (the next created swap is the fixed one)
  // The quote faults leave the payload honest (it signs the quoted output): the reconciler's quote checks
  // judge them, certification has nothing of the interface to refuse.
  ...PAYLOAD_FAULTS.filter((f) => f !== 'network-fee-above-quote' && f !== 'referral-below-quote').map(
    (f): Case => ({
      name: `payload fault ${f}`,
      swapFaults: [f],
      fails: [f === 'invalid-signature' ? 'swap.signature' : 'swap.payload'],
    }),
  ),
  {
    name: 'swap/fixed: providerSig missing',
    callFault: malformed('swap-fixed', 'drop-field'),
    fails: ['swap.fixed'],
  },
  {
    name: 'swap/fixed: providerFees as a JSON number',
    callFault: malformed('swap-fixed', 'number-for-decimal'),
    fails: ['swap.fixed'],
  },
  {
    name: 'swap/fixed: createdAt not a timestamp',
    callFault: malformed('swap-fixed', 'set-field'),
    fails: ['swap.fixed'],
  },
  {
    name: 'swap/fixed: NO_DEPOSIT_WALLET_ERROR',
    callFault: { op: 'swap-fixed', fault: { kind: 'error-key', messageKey: 'NO_DEPOSIT_WALLET_ERROR' } },
    fails: ['swap.fixed'],
  },
  {
    name: 'swap/fixed: connection dropped after creation',
    callFault: { op: 'swap-fixed', fault: { kind: 'drop-connection' } },
    fails: ['swap.fixed'],
  },
  {
    name: 'swap/float: providerSig missing',
    callFault: malformed('swap-float', 'drop-field'),
    fails: ['swap.float'],
  },
  {
    name: 'swap/float: empty body',
    callFault: { op: 'swap-float', fault: { kind: 'malformed-body', variant: 'empty-body' } },
    fails: ['swap.float'],
  },
  // Signature field name and curve
  {
    name: 'signature field payload_signature only',
    sim: { signatureField: 'payload_signature' },
    fails: [],
    warns: ['swap.signature'],
  },
  { name: 'signature field both', sim: { signatureField: 'both' }, fails: [] },
  { name: 'curve secp256r1, registered as such', sim: { curve: 'secp256r1' }, fails: [] },
  {
    name: 'curve secp256r1, registered as secp256k1',
    sim: { curve: 'secp256r1' },
    target: (t, sim) => ({ ...t, payloadKeys: [{ ...sim.partnerKey(), curve: 'secp256k1' }] }),
    fails: ['swap.signature'],
  },
  {
    name: 'signed with a key not registered',
    target: (t) => ({
      ...t,
      payloadKeys: [
        {
          keyId: 'other',
          curve: 'secp256k1',
          publicKey: PayloadSigner.generate('secp256k1').publicKey.hex,
          validFrom: '2000-01-01T00:00:00Z',
        },
      ],
    }),
    fails: ['swap.signature'],
  },
  // Status
  {
    name: 'status: status missing',
    callFault: malformed('status', 'drop-field'),
    fails: ['status.response'],
  },
  {
    name: 'status: providerFees as a JSON number',
    callFault: malformed('status', 'number-for-decimal'),
    fails: ['status.decimals'],
  },
  {
    name: 'status: amount not a decimal',
    callFault: malformed('status', 'set-field'),
    fails: ['status.decimals'],
  },
  {
    name: 'status: 500',
    callFault: { op: 'status', fault: { kind: 'server-error' } },
    fails: ['status.response'],
  },
  {
    name: 'status: a string the status map does not know',
    sim: { progression: { advanceOn: 'poll', script: ['PENDING', 'EXCHANGING'] } },
    fails: ['status.mapped', 'webhook.status'],
  },
  {
    name: 'status: JSON cut in the middle',
    callFault: { op: 'status', fault: { kind: 'malformed-body', variant: 'truncated-json' } },
    fails: ['status.response'],
  },
  // Final-status faults: observable here because the simulator finishes swaps on the first poll
  {
    name: 'final fault final-amount-below-signed',
    swapFaults: ['final-amount-below-signed'],
    fails: ['status.final-figures'],
  },
  {
    name: 'final fault fees-differ-from-creation',
    swapFaults: ['fees-differ-from-creation'],
    fails: ['status.final-figures'],
  },
  {
    name: 'final fault missing-payin-hash',
    swapFaults: ['missing-payin-hash'],
    fails: ['status.final-fields'],
  },
  {
    name: 'final fault missing-payout-hash',
    swapFaults: ['missing-payout-hash'],
    fails: ['status.final-fields'],
  },
  {
    name: 'final fault missing-final-amount',
    swapFaults: ['missing-final-amount'],
    fails: ['status.final-fields', 'webhook.amount'],
  },
  // Webhook
  { name: 'webhook: a key not registered', webhookKey: 'slk_not-the-registered-key', fails: ['webhook.key'] },
  {
    name: 'webhook: another providerId',
    sim: { providerId: 'someone-else' },
    fails: ['webhook.provider-id'],
  },
];

describe('partner certify against the simulator (real HTTP)', () => {
  it('passes every requirement when the partner follows the interface (rate limits not observed: SKIP)', async () => {
    const { report, sim } = await certify({});
    const notPass = report.requirements
      .filter((r) => r.verdict !== 'PASS')
      .map((r) => `${r.id} ${r.verdict} ${r.summary}`);
    expect(notPass).toEqual(['http.rate-limit SKIP the partner sent no 420/429 during the run']);
    expect(report.requirements.length).toBeGreaterThanOrEqual(30);
    // It really created fixed and float swaps and a second one for the same quote.
    expect(sim.swaps().map((s) => s.tradeMethod)).toEqual(['fixed', 'float', 'fixed']);
    expect(new Set(sim.swaps().map((s) => s.swapId)).size).toBe(3);
  });

  it.each(CASES)('$name: fails $fails and nothing else', async (c) => {
    const { report } = await certify(c);
    expect(verdicts(report, 'FAIL').sort()).toEqual([...c.fails].sort());
    if (c.warns) expect(verdicts(report, 'WARN')).toEqual(c.warns);
    for (const id of c.fails) {
      const r = report.requirements.find((x) => x.id === id)!;
      const failing = r.checks.filter((k) => k.verdict === 'FAIL');
      expect(failing.length).toBeGreaterThan(0);
      // Evidence: what was expected and what came back, and the exchange where there was one.
      expect(failing.some((k) => k.expected !== undefined || k.actual !== undefined)).toBe(true);
      if (!id.startsWith('webhook.')) expect(failing.some((k) => k.exchange !== undefined)).toBe(true);
    }
  });

  it('a 420 with the documented headers is waited out: the run passes and the rate limit is judged PASS', async () => {
    const { report, sim } = await certify({
      callFault: { op: 'quote', fault: { kind: 'rate-limited', retryAfter: '0' } },
    });
    expect(verdicts(report, 'FAIL')).toEqual([]);
    expect(report.requirements.find((r) => r.id === 'http.rate-limit')?.verdict).toBe('PASS');
    expect(sim.calls('quote').filter((c) => c.status === 420)).toHaveLength(1);
  });

  it('final-status faults are not observable while the sandbox keeps swaps open: final checks SKIP', async () => {
    for (const fault of FINAL_STATUS_FAULTS) {
      const { report } = await certify({
        sim: { progression: { advanceOn: 'manual' } },
        swapFaults: [fault],
        webhook: false,
      });
      expect(verdicts(report, 'FAIL')).toEqual([]);
      const finals = report.requirements.filter((r) => r.id.startsWith('status.final'));
      expect(finals.map((r) => r.verdict)).toEqual(['SKIP', 'SKIP']);
      expect(finals[0]!.summary).toMatch(/no created swap reached a final status/);
    }
  });
});

function capture(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (l) => out.push(l), stderr: (l) => err.push(l) };
}

describe('swap-ledger partner certify (CLI, providers file)', () => {
  const SECRET = 'partner-sandbox-secret-7f3a';

  async function setup(simOptions: PartnerSimulatorOptions = {}) {
    const sim = await startPartnerSimulator({
      providerId: PROVIDER,
      requiredHeaders: { 'x-partner-key': SECRET },
      ...simOptions,
    });
    sims.push(sim);
    const dir = mkdtempSync(join(tmpdir(), 'certify-'));
    const file = join(dir, 'providers.yaml');
    writeFileSync(
      file,
      [
        'providers:',
        `  - id: ${PROVIDER}`,
        '    client:',
        `      baseUrl: ${sim.url}`,
        '      headers:',
        '        x-partner-key: ${CERTIFY_TEST_PARTNER_KEY}',
        '      pageLimit: 4',
        '    payloadKeys:',
        `      - keyId: sim-key`,
        `        curve: ${sim.publicKey.curve}`,
        `        publicKey: '${sim.publicKey.hex}'`,
        `        validFrom: '2000-01-01T00:00:00Z'`,
        '    currencies:',
        ...Object.entries(CURRENCIES).map(([p, q]) => `      ${p}: ${q}`),
      ].join('\n'),
    );
    process.env.CERTIFY_TEST_PARTNER_KEY = SECRET;
    return { sim, dir, file };
  }

  it('writes HTML, JSON and Markdown reports, exit 0, and never prints the partner credential', async () => {
    const { dir, file } = await setup();
    const io = capture();
    const reports = ['r.html', 'r.json', 'r.md'].map((n) => join(dir, n));
    const code = await main(
      [
        'partner',
        'certify',
        '--provider',
        PROVIDER,
        '--file',
        file,
        '--create-swaps',
        ...reports.flatMap((r) => ['--report', r]),
      ],
      io,
    );
    expect(io.err).toEqual([]);
    expect(code).toBe(0);
    const out = io.out.join('\n');
    expect(out).toMatch(/^PASS {2}swap\.signature/m);
    expect(out).toMatch(/simco: \d+ requirements, \d+ pass, 0 fail/);
    const [html, json, md] = reports.map((r) => readFileSync(r, 'utf8'));
    const parsed = JSON.parse(json!) as CertifyReport;
    expect(parsed.counts.FAIL).toBe(0);
    expect(parsed.requirements.find((r) => r.id === 'catalog.currencies.cursor')?.summary).toMatch(/limit=4/);
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script|src=|href=/i);
    expect(html).toContain('swap.signature');
    expect(md).toMatch(/^# Interface v2 certification: simco/);
    for (const text of [out, html!, json!, md!]) expect(text).not.toContain(SECRET);
  });

  it('exit 1 with the evidence of the failing requirement', async () => {
    const { sim, file } = await setup();
    sim.injectSwapFaults(['wrong-nonce'], { nextSwaps: 1 });
    const io = capture();
    expect(
      await main(['partner', 'certify', '--provider', PROVIDER, '--file', file, '--create-swaps'], io),
    ).toBe(1);
    const out = io.out.join('\n');
    expect(out).toMatch(/^FAIL {2}swap\.payload +fixed swap .*payload\.device_transaction_id_ng/m);
    expect(out).toMatch(/request: {2}POST \/swap\/fixed \{"quoteId"/);
    expect(out).toMatch(/response: HTTP 200 in \d+ ms/);
    expect(out).toMatch(/NOT CERTIFIED/);
  });

  it('usage mistakes exit 2', async () => {
    const { file } = await setup();
    for (const args of [
      ['partner', 'certify', '--file', file],
      ['partner', 'certify', '--provider', PROVIDER, '--file', file, '--report', 'out.pdf'],
      ['partner', 'certify', '--provider', PROVIDER, '--file', file, '--pair', 'btc-ltc'],
      ['partner', 'certify', '--provider', 'nobody', '--file', file],
    ]) {
      const io = capture();
      expect(await main(args, io)).toBe(2);
      expect(io.err.join('\n')).toMatch(/partner certify/);
    }
  });
});

describe('swap-ledger partner certify (CLI, registry in Postgres, webhook)', () => {
  const stack = testStack();
  const savedEnv = { ...process.env };
  afterEach(() => {
    process.env = { ...savedEnv };
  });

  it('reads the entry and its webhook key digests from Postgres and judges what the partner pushes', async () => {
    await migratePlatform(stack.databaseUrl);
    const pool = createPool(stack.databaseUrl, { max: 2 });
    const id = uniqueName('certify');
    const port = await freePort();
    const key = generateApiKey();
    const sim = await startPartnerSimulator({
      providerId: id,
      progression: { advanceOn: 'poll' },
      webhook: { url: `http://127.0.0.1:${port}`, apiKey: key.key },
    });
    sims.push(sim);
    try {
      const defs = parseProvidersFile(
        [
          'providers:',
          `  - id: ${id}`,
          `    client: { baseUrl: "${sim.url}" }`,
          `    webhookKeys: [{ keyId: k1, sha256: "${key.sha256}" }]`,
          `    payloadKeys: [{ keyId: s1, curve: ${sim.publicKey.curve}, publicKey: "${sim.publicKey.hex}", validFrom: "2000-01-01T00:00:00Z" }]`,
          `    currencies: { ${Object.entries(CURRENCIES)
            .map(([p, q]) => `${p}: ${q}`)
            .join(', ')} }`,
        ].join('\n'),
      );
      await loadProviders(pool, defs);
    } finally {
      await pool.end();
    }
    process.env.DATABASE_URL = stack.databaseUrl;
    const dir = mkdtempSync(join(tmpdir(), 'certify-'));
    const json = join(dir, 'report.json');
    const io = capture();
    const code = await main(
      [
        'partner',
        'certify',
        '--provider',
        id,
        '--create-swaps',
        '--page-limit',
        '5',
        '--webhook',
        `127.0.0.1:${port}`,
        '--webhook-wait',
        '5',
        '--report',
        json,
      ],
      io,
    );
    expect(io.err).toEqual([]);
    expect(io.out.join('\n')).toContain(`webhook listener at http://127.0.0.1:${port}`);
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as CertifyReport;
    const verdict = (rid: string) => report.requirements.find((r) => r.id === rid)?.verdict;
    expect(
      ['webhook.received', 'webhook.key', 'webhook.provider-id', 'webhook.amount', 'webhook.status'].map(
        verdict,
      ),
    ).toEqual(['PASS', 'PASS', 'PASS', 'PASS', 'PASS']);
    expect(JSON.stringify(report)).not.toContain(key.key);
    expect(sim.webhookDeliveries().map((d) => d.status)).toEqual([200, 200, 200]);
  });

  it('an unknown provider in the registry is a usage error (exit 2)', async () => {
    await migratePlatform(stack.databaseUrl);
    process.env.DATABASE_URL = stack.databaseUrl;
    const io = capture();
    expect(await main(['partner', 'certify', '--provider', uniqueName('nobody')], io)).toBe(2);
    expect(io.err.join('\n')).toMatch(/no provider .* in the registry/);
  });
});
