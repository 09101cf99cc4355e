// Over 400 lines on purpose: `configSpec` is the one table of every setting, its parser, default and
// documentation (the README's table and `--help` read it), so it stays whole.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import cron from 'node-cron';
import { parseWorkerEndpoints, type WorkerEndpoint } from '../observability/worker-health.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';

/**
 * One typed configuration for every process. Values come from the environment, then from an optional
 * YAML/JSON file named by SWAP_LEDGER_CONFIG (same key names); the environment wins. Validation reports
 * every missing or invalid key at once, so an operator fixes a deployment in one pass.
 */

type Parser<T> = (raw: string) => T;

interface KeySpec<T> {
  readonly parse: Parser<T>;
  readonly default?: T;
  readonly doc: string;
  /** Never echoed in errors or logs. */
  readonly secret?: boolean;
}

const str: Parser<string> = (raw) => {
  if (raw.trim() === '') throw new Error('must not be empty');
  return raw.trim();
};

const int =
  (min: number, max: number): Parser<number> =>
  (raw) => {
    if (!/^-?\d+$/.test(raw.trim())) throw new Error('must be a whole number');
    const n = Number.parseInt(raw, 10);
    if (n < min || n > max) throw new Error(`must be between ${min} and ${max}`);
    return n;
  };

const url =
  (...protocols: string[]): Parser<string> =>
  (raw) => {
    let u: URL;
    try {
      u = new URL(raw.trim());
    } catch {
      throw new Error('must be a URL');
    }
    if (!protocols.includes(u.protocol)) throw new Error(`must use ${protocols.join(' or ')}`);
    return raw.trim().replace(/\/+$/, '');
  };

const hostPorts: Parser<string[]> = (raw) => {
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0) throw new Error('must list at least one host:port');
  for (const hp of list) if (!/^[^\s:]+:\d{1,5}$/.test(hp)) throw new Error(`"${hp}" is not host:port`);
  return list;
};

const oneOf =
  <T extends string>(...values: T[]): Parser<T> =>
  (raw) => {
    if (!(values as string[]).includes(raw.trim())) throw new Error(`must be one of ${values.join(', ')}`);
    return raw.trim() as T;
  };

const topicName: Parser<string> = (raw) => {
  if (!/^[a-zA-Z0-9._-]{1,200}$/.test(raw.trim())) throw new Error('must be a valid Kafka topic name');
  return raw.trim();
};

/**
 * The reconciler's policy keys (fee tolerances, quote bands) are its own: every RECONCILE_* key is passed
 * through as text in `RECONCILE`, and the reconciler's policy parser (src/reconciler/policy.ts) refuses an
 * unknown, retired or out-of-range one when it starts. Configuration knows no reconciliation rule.
 */
export const PASSED_THROUGH_PREFIX = 'RECONCILE_';

/** GATEWAY_API_KEY_DIGESTS: SHA-256 digests (64 hex digits) of the wallet backend's keys, never a key in clear. */
const sha256List: Parser<string[]> = (raw) => {
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const d of list) {
    // Never echo the value: a key pasted here by mistake must not reach a log.
    if (d.startsWith('slk_')) throw new Error('holds an API key in clear; list SHA-256 digests only');
    if (!/^[0-9a-fA-F]{64}$/.test(d)) throw new Error('each entry must be a SHA-256 digest (64 hex digits)');
  }
  return list.map((d) => d.toLowerCase());
};

/** A switch: true/false (or 1/0, yes/no). */
const flag: Parser<boolean> = (raw) => {
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no', ''].includes(v)) return false;
  throw new Error('must be true or false');
};

/** A comma list of provider ids (empty: none listed). */
const providerIds: Parser<string[]> = (raw) => {
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const id of list)
    if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(id)) throw new Error(`"${id}" is not a provider id`);
  return list;
};

/** `CURRENCY=address,…`: the platform's own address per platform currency (empty: none). */
const addressesByCurrency: Parser<Readonly<Record<string, string>>> = (raw) => {
  const out: Record<string, string> = {};
  for (const part of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z0-9._-]{1,40})=([\x21-\x7e]{1,200})$/.exec(part);
    if (!m) throw new Error(`"${part.slice(0, 60)}" is not CURRENCY=address`);
    if (m[1]! in out) throw new Error(`${m[1]} is given twice`);
    out[m[1]!] = m[2]!;
  }
  return Object.freeze(out);
};

/** A node-cron expression (5 fields, or 6 with seconds); `off` where the key allows turning it off. */
const cronSchedule =
  (allowOff: boolean): Parser<string> =>
  (raw) => {
    const v = raw.trim();
    if (allowOff && v === 'off') return v;
    if (!cron.validate(v)) throw new Error(`must be a cron expression${allowOff ? ' or off' : ''}`);
    return v;
  };

export const configSpec = {
  DATABASE_URL: { parse: url('postgres:', 'postgresql:'), doc: 'Postgres connection string', secret: true },
  KAFKA_BROKERS: { parse: hostPorts, doc: 'Kafka bootstrap servers, comma separated host:port' },
  SCHEMA_REGISTRY_URL: { parse: url('http:', 'https:'), doc: 'Confluent-compatible schema registry URL' },
  PROJECTOR_STALL_SECONDS: {
    parse: int(1, 86_400),
    default: 120,
    doc: 'A projector partition with a backlog and no commit for this long is stalled: /readyz answers 503',
  },
  PROJECTION_SCHEMA: {
    parse: (raw: string) => {
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw.trim())) throw new Error('must be a lower-case SQL identifier');
      return raw.trim();
    },
    default: 'swap_ledger',
    doc: 'Postgres schema of the live projected state',
  },
  REPLAY_WORKERS: {
    parse: int(1, 64),
    default: 2,
    doc: 'Worker threads a `replay` folds the partitions in (one event loop each, two partitions at once)',
  },
  REPLAY_HEAP_MB: {
    parse: int(128, 65_536),
    default: 320,
    doc: "Heap budget (MiB) of a `replay` rebuild, so its memory does not grow with the log's length",
  },
  KAFKA_CLIENT_ID: { parse: str, default: 'swap-ledger', doc: 'Kafka client id prefix' },
  EVENTS_TOPIC: { parse: topicName, default: 'swap-events', doc: 'Topic of the swap event log' },
  DLQ_TOPIC: { parse: topicName, default: 'swap-events-dlq', doc: 'Dead-letter topic' },
  TOPIC_PARTITIONS: { parse: int(1, 1000), default: 12, doc: 'Partitions of the events topic on creation' },
  TOPIC_REPLICATION_FACTOR: {
    parse: int(0, 16),
    default: 0,
    doc: 'Replicas of each partition of the topics on creation, and the least a writer starts on (0: 3 on three brokers or more, else 1)',
  },
  TOPIC_MIN_INSYNC_REPLICAS: {
    parse: int(0, 16),
    default: 0,
    doc: 'min.insync.replicas of the topics on creation, and the least a writer starts on (0: 2 with three replicas, else 1)',
  },
  KAFKA_SEND_TIMEOUT_MS: {
    parse: int(100, 120_000),
    default: 5000,
    doc: 'Deadline of every Kafka send a caller waits on',
  },
  LOG_LEVEL: {
    parse: oneOf('trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'),
    default: 'info',
    doc: 'pino log level',
  },
  PROVIDERS_FILE: {
    parse: str,
    // Empty: no file; the provider registry is then what Postgres already holds.
    default: '',
    doc: 'YAML provider registry file, checked and loaded into Postgres by `provider load` and at webhook start',
  },
  PROVIDER_REFRESH_MS: {
    parse: int(100, 3_600_000),
    default: 5000,
    doc: 'How often a running process re-reads the provider registry from Postgres (keys, mappings, limits)',
  },
  CHAIN_SOURCES_FILE: {
    parse: str,
    // Empty: no chain source; the chain checks stay UNVERIFIABLE "no chain source for <currency>".
    default: '',
    doc: 'YAML chain sources file (config/chains.example.yaml): by platform currency, a chain source (URL by the name of its variable), depth, asset and deadline',
  },
  REFERRAL_ADDRESSES: {
    parse: addressesByCurrency,
    default: Object.freeze({}) as Readonly<Record<string, string>>,
    doc: "The platform's referral address per platform currency (CURRENCY=address, comma separated): where a partner pays an invoice that `invoice settle --tx` verifies on the chain",
  },
  CHAIN_WATCH_INTERVAL_MS: {
    parse: int(100, 3_600_000),
    default: 5000,
    doc: 'How often the chain watcher looks for reported transactions due a look (each is looked at again with backoff)',
  },
  METRICS_HOST: {
    parse: str,
    default: '127.0.0.1',
    doc: "Address of each worker's metrics and health listener (/metrics, /healthz, /readyz); loopback by default",
  },
  METRICS_PORT: {
    parse: int(0, 65_535),
    default: 0,
    doc: "Port of each worker's metrics and health listener (0: any free port, logged at start); give each process on a host its own",
  },
  WEBHOOK_HOST: {
    parse: str,
    default: '127.0.0.1',
    doc: 'Address the status webhook server listens on (loopback unless a proxy needs otherwise)',
  },
  WEBHOOK_PORT: {
    parse: int(0, 65_535),
    default: 8088,
    doc: 'Port of the status webhook server (0: any free port)',
  },
  WEBHOOK_BODY_LIMIT_BYTES: {
    parse: int(256, 1_048_576),
    default: 16_384,
    doc: 'Largest webhook request body accepted; larger bodies get 413 and are not read',
  },
  WEBHOOK_AUTH_FAILURE_BURST: {
    parse: int(1, 1_000_000),
    default: 20,
    doc: 'Authentication failures (401) the webhook takes from one source address at once; past them and WEBHOOK_AUTH_FAILURE_PER_MINUTE it answers 429 with Retry-After (an authenticated call is never throttled by this)',
  },
  WEBHOOK_AUTH_FAILURE_PER_MINUTE: {
    parse: int(1, 6_000_000),
    default: 60,
    doc: 'Authentication failures a minute one source address regains, up to WEBHOOK_AUTH_FAILURE_BURST',
  },
  WEBHOOK_REFUSAL_LOG_LINES: {
    parse: int(0, 1_000_000),
    default: 10,
    doc: 'Log lines of unauthenticated webhook refusals per source address a minute; the rest are counted and summed up in one line a minute',
  },
  HTTP_REQUEST_TIMEOUT_MS: {
    parse: int(1000, 300_000),
    default: 10_000,
    doc: 'Deadline of a request on every HTTP listener (webhook, gateway, console, metrics): headers and body not all received this long after the first byte get 408 and the connection is closed (at most 1 s late)',
  },
  RECONCILER_INTERVAL_MS: {
    parse: int(100, 3_600_000),
    default: 1000,
    doc: 'How often the reconciler takes swaps from the reconciliation queue',
  },
  RECONCILER_JUDGE_THREADS: {
    parse: int(0, 64),
    default: 2,
    doc: "Threads that judge and encode verdicts beside the reconciler's event loop (0: judged on it, one core at most); judging is most of a swap's CPU",
  },
  RECONCILER_SWEEP_CRON: {
    parse: cronSchedule(false),
    default: '*/5 * * * *',
    doc: 'node-cron schedule of the sweep for final swaps the queue missed',
  },
  GATEWAY_HOST: {
    parse: str,
    default: '127.0.0.1',
    doc: 'Address the gateway API (wallet backend) listens on',
  },
  GATEWAY_PORT: { parse: int(0, 65_535), default: 8089, doc: 'Port of the gateway API (0: any free port)' },
  GATEWAY_API_KEY_DIGESTS: {
    parse: sha256List,
    default: [] as string[],
    doc: 'SHA-256 digests (hex, comma separated) of the wallet backend API keys; gateway serve refuses to start without one',
    secret: true,
  },
  GATEWAY_QUOTE_MIN_VALIDITY_MS: {
    parse: int(0, 3_600_000),
    default: 2000,
    doc: 'A fixed quote that expires sooner than this is refused for a swap (the partner call takes time)',
  },
  GATEWAY_IDEMPOTENCY_LEASE_MS: {
    parse: int(1000, 86_400_000),
    default: 120_000,
    doc: 'An Idempotency-Key in progress longer than this has an unknown outcome: answered with the recorded outcome or 409 "outcome unknown" (swap-ledger requests stuck / resolve)',
  },
  GATEWAY_RECORD_RETRY_MS: {
    parse: int(0, 600_000),
    default: 20_000,
    doc: 'How long the gateway retries recording a swap the partner created (created_swaps and its SwapCreated outbox row) while Postgres fails, before it appends the SwapCreated straight to Kafka',
  },
  OUTBOX_RELAY_INTERVAL_MS: {
    parse: int(100, 3_600_000),
    default: 1000,
    doc: 'How often the gateway relays outbox events to Kafka',
  },
  OUTBOX_RELAY_BATCH: {
    parse: int(1, 10_000),
    default: 500,
    doc: 'Most outbox events published in one relay transaction',
  },
  POLL_CRON: {
    parse: cronSchedule(false),
    default: '*/5 * * * * *',
    doc: 'node-cron schedule of poller ticks; each tick polls the swaps whose provider poll interval elapsed',
  },
  POLL_PROVIDERS: {
    parse: providerIds,
    default: [] as string[],
    doc: 'Providers this poller polls and syncs (comma separated ids); empty: every enabled provider',
  },
  POLL_CONCURRENCY: {
    parse: int(1, 256),
    default: 4,
    doc: 'GET /status calls in flight at once, per provider',
  },
  POLL_RATE_PER_SECOND: {
    parse: int(1, 10_000),
    default: 10,
    doc: 'GET /status calls per second, per provider (token bucket refill)',
  },
  POLL_RATE_BURST: {
    parse: int(1, 10_000),
    default: 20,
    doc: 'Token bucket size of the poller, per provider',
  },
  POLL_BACKOFF_BASE_MS: {
    parse: int(1, 3_600_000),
    default: 5000,
    doc: 'First wait before a swap whose poll failed (error, 404, unmappable status) is polled again; doubles per failure',
  },
  POLL_BACKOFF_MAX_MS: {
    parse: int(1, 86_400_000),
    default: 300_000,
    doc: 'Cap of the per-swap poll backoff',
  },
  POLL_CONFIRM_WINDOW_HOURS: {
    parse: int(1, 8760),
    default: 72,
    doc: 'Swaps that became final by webhook within this window start being confirmed by GET /status (how far back a poller looks for swaps it never confirmed)',
  },
  POLL_CONFIRM_DEADLINE_HOURS: {
    parse: int(1, 8760),
    default: 48,
    doc: 'A swap made final by webhook is confirmed by GET /status (backoff 1 min doubling to 1 h) until the partner reports every figure, at most this long after it became final; then its missing figures are "never reported"',
  },
  POLL_CLOSED_GRACE_HOURS: {
    parse: int(0, 87_600),
    default: 168,
    doc: 'A closed swap (EXPIRED: reopenable) stays in the slow polling set this long after it closed, so a late deposit the partner processes is seen',
  },
  RECONCILER_CONFIRM_WAIT_MS: {
    parse: int(0, 86_400_000),
    default: 120_000,
    doc: 'A swap made final by webhook waits at most this long for its confirming poll before the reconciler judges it anyway',
  },
  CASE_NOTIFY_URL: {
    parse: url('http:', 'https:'),
    // Empty: no notifications. A chat webhook's URL carries its secret: never shown.
    default: '',
    doc: 'An HTTP endpoint (a chat webhook) POSTed a JSON message when a case opens, reopens or ages past CASE_NOTIFY_AGE_HOURS, at least once, from the reconciler (README "Cases")',
    secret: true,
  },
  CASE_NOTIFY_AGE_HOURS: {
    parse: int(1, 8_760),
    default: 168,
    doc: 'A case unresolved this long is notified once more (the alert SwapLedgerCaseOpenTooLong uses 7 days too)',
  },
  CASE_NOTIFY_INTERVAL_MS: {
    parse: int(1_000, 3_600_000),
    default: 15_000,
    doc: 'Between two rounds of the case notifier (write what cases owe, post what is due)',
  },
  CATALOG_SYNC_CRON: {
    parse: cronSchedule(true),
    default: '*/15 * * * *',
    doc: 'node-cron schedule of the catalog sync inside `poller run` (off: only `catalog sync` runs it)',
  },
  CONSOLE_HOST: {
    parse: str,
    default: '127.0.0.1',
    doc: 'Address the ops/finance console listens on (loopback: it shows swaps and books)',
  },
  CONSOLE_PORT: { parse: int(0, 65_535), default: 8090, doc: 'Port of the console (0: any free port)' },
  CONSOLE_KEY_DIGESTS: {
    parse: sha256List,
    default: [] as string[],
    doc: 'SHA-256 digests (hex, comma separated) of the console viewer login keys (read only)',
    secret: true,
  },
  CONSOLE_OPERATOR_KEY_DIGESTS: {
    parse: sha256List,
    default: [] as string[],
    doc: 'SHA-256 digests of the console operator keys (act on cases); `up` makes one when no console key is set',
    secret: true,
  },
  CONSOLE_APPROVER_KEY_DIGESTS: {
    parse: sha256List,
    default: [] as string[],
    doc: "SHA-256 digests of the console approver keys (act on cases and approve another's write-off)",
    secret: true,
  },
  CONSOLE_TRUST_PROXY: {
    parse: flag,
    default: false,
    doc: "Trust a proxy's X-Forwarded-Proto: https there marks the session cookie Secure",
  },
  CONSOLE_WORKER_HEALTH: {
    parse: parseWorkerEndpoints,
    default: [] as WorkerEndpoint[],
    doc: "Workers whose health the console's operations page shows, as name=http://host:port of each metrics listener (comma separated); `up` sets it",
  },
} satisfies Record<string, KeySpec<unknown>>;

type Spec = typeof configSpec;
export type Config = { [K in keyof Spec]: ReturnType<Spec[K]['parse']> } & {
  /** Every RECONCILE_* key set (environment over file), as text: the reconciler's policy parses it. */
  readonly RECONCILE: Readonly<Record<string, string>>;
};
export type ConfigKey = keyof Spec;

export class ConfigError extends InputRefusedError {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function readFile(path: string): Record<string, string> {
  const text = readFileSync(path, 'utf8');
  // yaml (72 modules) loads only when a configuration file is given: loadConfig stays synchronous.
  const { parse: parseYaml } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  const doc: unknown = parseYaml(text);
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigError([`${path}: must be a mapping`]);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(doc)) {
    out[k] = Array.isArray(v) ? v.join(',') : String(v);
  }
  return out;
}

/** Loads and validates; only the keys named in `required` must be present (others keep their defaults). */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  required: readonly ConfigKey[] = Object.keys(configSpec) as ConfigKey[],
): Config {
  const problems: string[] = [];
  let fileValues: Record<string, string> = {};
  const file = env.SWAP_LEDGER_CONFIG;
  if (file) {
    try {
      fileValues = readFile(file);
    } catch (e) {
      if (e instanceof ConfigError) throw e;
      problems.push(`SWAP_LEDGER_CONFIG: cannot read ${file}: ${(e as Error).message}`);
    }
    for (const k of Object.keys(fileValues)) {
      if (!(k in configSpec) && !k.startsWith(PASSED_THROUGH_PREFIX))
        problems.push(`${k}: unknown key in ${file}`);
    }
  }
  const passed: Record<string, string> = {};
  for (const [k, v] of [...Object.entries(fileValues), ...Object.entries(env)])
    if (k.startsWith(PASSED_THROUGH_PREFIX) && v !== undefined && v.trim() !== '') passed[k] = v.trim();
  const out: Record<string, unknown> = { RECONCILE: Object.freeze(passed) };
  for (const [key, spec] of Object.entries(configSpec) as [ConfigKey, KeySpec<unknown>][]) {
    const raw = env[key] ?? fileValues[key];
    if (raw === undefined || raw === '') {
      if (spec.default !== undefined) out[key] = spec.default;
      else if (required.includes(key)) problems.push(`${key}: missing (${spec.doc})`);
      continue;
    }
    try {
      out[key] = spec.parse(raw);
    } catch (e) {
      const shown = spec.secret ? '' : ` (got "${raw}")`;
      problems.push(`${key}: ${(e as Error).message}${shown}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as Config;
}
