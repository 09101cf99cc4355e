import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

const valid = {
  DATABASE_URL: 'postgres://u:secret@db:5432/swap_ledger',
  KAFKA_BROKERS: 'k1:9092, k2:9092',
  SCHEMA_REGISTRY_URL: 'http://registry:8081/apis/ccompat/v7/',
};

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('parses values and fills defaults', () => {
    const c = loadConfig(valid);
    expect(c.KAFKA_BROKERS).toEqual(['k1:9092', 'k2:9092']);
    expect(c.SCHEMA_REGISTRY_URL).toBe('http://registry:8081/apis/ccompat/v7');
    expect(c.TOPIC_PARTITIONS).toBe(12);
    expect(c.EVENTS_TOPIC).toBe('swap-events');
    expect(c.PROJECTION_SCHEMA).toBe('swap_ledger');
  });

  it('lists every missing and invalid key at once', () => {
    const problems = problemsOf({ KAFKA_BROKERS: 'nohost', TOPIC_PARTITIONS: '0', LOG_LEVEL: 'loud' });
    expect(problems).toHaveLength(5);
    expect(problems.join('\n')).toMatch(/DATABASE_URL: missing/);
    expect(problems.join('\n')).toMatch(/SCHEMA_REGISTRY_URL: missing/);
    expect(problems.join('\n')).toMatch(/KAFKA_BROKERS: "nohost" is not host:port/);
    expect(problems.join('\n')).toMatch(/TOPIC_PARTITIONS: must be between 1 and 1000/);
    expect(problems.join('\n')).toMatch(/LOG_LEVEL: must be one of/);
  });

  it("reads the console's worker health endpoints, and refuses a list that is not name=url", () => {
    expect(loadConfig(valid).CONSOLE_WORKER_HEALTH).toEqual([]);
    expect(
      loadConfig({
        ...valid,
        CONSOLE_WORKER_HEALTH: 'projector=http://127.0.0.1:9101,poller=http://127.0.0.1:9105',
      }).CONSOLE_WORKER_HEALTH,
    ).toEqual([
      { name: 'projector', url: 'http://127.0.0.1:9101' },
      { name: 'poller', url: 'http://127.0.0.1:9105' },
    ]);
    expect(problemsOf({ ...valid, CONSOLE_WORKER_HEALTH: 'http://127.0.0.1:9101' })).toEqual([
      expect.stringMatching(/^CONSOLE_WORKER_HEALTH: "http:\/\/127\.0\.0\.1:9101" is not name=http/),
    ]);
  });

  it("reads the platform's referral address per currency, and refuses what is not CURRENCY=address", () => {
    expect(loadConfig(valid).REFERRAL_ADDRESSES).toEqual({});
    expect(
      loadConfig({
        ...valid,
        REFERRAL_ADDRESSES: 'ETH=0xAbC, BTC=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      }).REFERRAL_ADDRESSES,
    ).toEqual({ ETH: '0xAbC', BTC: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' });
    expect(problemsOf({ ...valid, REFERRAL_ADDRESSES: 'ETH' })).toEqual([
      expect.stringMatching(/^REFERRAL_ADDRESSES: "ETH" is not CURRENCY=address/),
    ]);
    expect(problemsOf({ ...valid, REFERRAL_ADDRESSES: 'ETH=0x1,ETH=0x2' })).toEqual([
      expect.stringMatching(/ETH is given twice/),
    ]);
  });

  it('never echoes a secret value in an error', () => {
    const problems = problemsOf({ ...valid, DATABASE_URL: 'mysql://u:hunter2@db/x' });
    expect(problems).toEqual([expect.stringMatching(/^DATABASE_URL: must use postgres: or postgresql:$/)]);
    expect(problems.join()).not.toContain('hunter2');
  });

  it('requires only the keys a command needs', () => {
    const c = loadConfig({ DATABASE_URL: valid.DATABASE_URL }, ['DATABASE_URL']);
    expect(c.DATABASE_URL).toBe(valid.DATABASE_URL);
    expect(c.KAFKA_BROKERS).toBeUndefined();
  });

  it('reads a YAML file named by SWAP_LEDGER_CONFIG; the environment wins; unknown keys are refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    const file = join(dir, 'swap-ledger.yaml');
    writeFileSync(file, 'KAFKA_BROKERS: [a:1, b:2]\nTOPIC_PARTITIONS: 24\nEVENTS_TOPIC: from-file\n');
    const c = loadConfig({
      ...valid,
      KAFKA_BROKERS: undefined,
      EVENTS_TOPIC: 'from-env',
      SWAP_LEDGER_CONFIG: file,
    });
    expect(c.KAFKA_BROKERS).toEqual(['a:1', 'b:2']);
    expect(c.TOPIC_PARTITIONS).toBe(24);
    expect(c.EVENTS_TOPIC).toBe('from-env');

    writeFileSync(file, 'KAFKA_BROKER: a:1\n');
    expect(problemsOf({ ...valid, SWAP_LEDGER_CONFIG: file })).toEqual([
      expect.stringMatching(/KAFKA_BROKER: unknown key/),
    ]);
  });

  it('reports an unreadable config file', () => {
    expect(problemsOf({ ...valid, SWAP_LEDGER_CONFIG: '/nonexistent/x.yaml' })[0]).toMatch(/cannot read/);
  });
});

describe('reconciler policy keys: passed through, parsed by the reconciler', () => {
  it('every RECONCILE_* key reaches the reconciler as text; configuration itself knows no rule', async () => {
    const { policyFromConfig } = await import('../../src/reconciler/run.ts');
    const c = loadConfig({
      ...valid,
      RECONCILE_FEE_FAVOUR_TOLERANCE_RELATIVE: '0.5',
      RECONCILE_SUM_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: ' 0.01 ',
      RECONCILE_FEE_DISFAVOUR_TOLERANCE_RELATIVE: '',
    });
    expect(c.RECONCILE).toEqual({
      RECONCILE_FEE_FAVOUR_TOLERANCE_RELATIVE: '0.5',
      RECONCILE_SUM_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: '0.01',
    });
    expect(policyFromConfig(c).fees.sum.disfavour.absolute.toFixed()).toBe('0.01');
    // RECONCILER_* keys are the worker's own settings, not policy.
    expect(loadConfig({ ...valid, RECONCILER_JUDGE_THREADS: '1' }).RECONCILE).toEqual({});
  });

  it("the reconciler's parser refuses what is not decimal text, a typo and the old symmetric keys, naming the new ones", async () => {
    const { policyFromConfig } = await import('../../src/reconciler/run.ts');
    const refused = (env: Record<string, string>) => {
      try {
        policyFromConfig(loadConfig({ ...valid, ...env }));
        return [];
      } catch (e) {
        return (e as { problems: string[] }).problems;
      }
    };
    expect(refused({ RECONCILE_FEE_FAVOUR_TOLERANCE_RELATIVE: '1e-3' })).toEqual([
      'RECONCILE_FEE_FAVOUR_TOLERANCE_RELATIVE: "1e-3" is not plain decimal text',
    ]);
    expect(refused({ RECONCILE_FEE_FAVOR_TOLERANCE_RELATIVE: '0.1' })).toEqual([
      'RECONCILE_FEE_FAVOR_TOLERANCE_RELATIVE: unknown reconciliation key',
    ]);
    const problems = refused({
      RECONCILE_FEE_TOLERANCE_RELATIVE: '0.5',
      RECONCILE_PROVIDER_FEE_TOLERANCE_ABSOLUTE: '0.001',
    });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /^RECONCILE_FEE_TOLERANCE_RELATIVE: a symmetric fee tolerance is no longer accepted/,
    );
    expect(problems[0]).toContain(
      'RECONCILE_FEE_FAVOUR_TOLERANCE_RELATIVE and/or RECONCILE_FEE_DISFAVOUR_TOLERANCE_RELATIVE',
    );
    expect(problems[1]).toContain('RECONCILE_PROVIDER_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE');
    // Blank means not set, as for every key.
    expect(refused({ RECONCILE_FEE_TOLERANCE_RELATIVE: '' })).toEqual([]);
  });

  it('a config file passes them through too, and other unknown keys are still refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    const file = join(dir, 'swap-ledger.yaml');
    writeFileSync(file, 'RECONCILE_QUOTE_FLOAT_BAND: 0.05\nRECONCILE_TYPO: 1\nNOT_A_KEY: 1\n');
    expect(problemsOf({ ...valid, SWAP_LEDGER_CONFIG: file })).toEqual([`NOT_A_KEY: unknown key in ${file}`]);
    writeFileSync(file, 'RECONCILE_QUOTE_FLOAT_BAND: 0.05\n');
    expect(loadConfig({ ...valid, SWAP_LEDGER_CONFIG: file }).RECONCILE).toEqual({
      RECONCILE_QUOTE_FLOAT_BAND: '0.05',
    });
  });
});
