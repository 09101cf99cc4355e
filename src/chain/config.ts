import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { ChainFamily } from '../events/types.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';

/**
 * The chain sources file (YAML, path in CHAIN_SOURCES_FILE): where the chain watcher looks up the
 * transactions partners report, by platform currency id. Checked whole at start, every problem listed at
 * once. A source's URL is given by reference (the name of an environment variable): a node's or explorer's
 * URL often carries an API key, so the file never holds it and no message ever echoes it.
 *
 *   sources:
 *     ethereum: { family: evm, urlEnv: ETH_RPC_URL, ratePerSecond: 10, timeoutMs: 5000 }
 *     bitcoin:  { family: utxo, urlEnv: BTC_ESPLORA_URL, network: bitcoin }
 *   currencies:
 *     ETH:  { source: ethereum, confirmations: 12, asset: native, decimals: 18, deadlineMinutes: 120 }
 *     USDT: { source: ethereum, confirmations: 12, asset: { contract: "0xdAC1…", decimals: 6 } }
 *     BTC:  { source: bitcoin, confirmations: 2, asset: native, decimals: 8, deadlineMinutes: 1440 }
 *
 * A currency with no entry has no chain source: its chain checks stay UNVERIFIABLE with that reason.
 */

export type UtxoNetwork = 'bitcoin' | 'testnet' | 'regtest' | 'litecoin';
export const UTXO_NETWORKS: readonly UtxoNetwork[] = ['bitcoin', 'testnet', 'regtest', 'litecoin'];

export interface ChainSourceDefinition {
  /** The source's name in the file (also the chain's name in the events: ethereum, bitcoin…). */
  readonly name: string;
  readonly family: ChainFamily;
  /** The environment variable that holds the URL (a JSON-RPC endpoint, or an Esplora API base). */
  readonly urlEnv: string;
  /** UTXO chains: how output scripts read as addresses. */
  readonly network: UtxoNetwork | null;
  /** Requests a second to this source, at most (the watcher waits its turn rather than be refused). */
  readonly ratePerSecond: number;
  /** One request's deadline: a slower answer counts as a failure and is tried again later. */
  readonly timeoutMs: number;
  /** One answer's size, at most: a longer body is a failure (never read whole). */
  readonly maxResponseBytes: number;
  /** EVM: the chain id the node must serve (checked at start; a transaction of another is refused). */
  readonly chainId: number | null;
}

export interface ChainCurrencyDefinition {
  /** The platform currency id. */
  readonly currency: string;
  readonly source: ChainSourceDefinition;
  /** The depth at which a transaction counts as confirmed. */
  readonly confirmations: number;
  /** 'native', or the ERC-20 contract (lower case). */
  readonly asset: string;
  readonly decimals: number;
  /** How long after the swap ended the watcher waits for the transaction (and its depth) before saying it is late. */
  readonly deadlineMinutes: number;
  /**
   * The final bound: how long the watcher still looks at a transaction after it appended it past its deadline
   * (unconfirmed, or refused by its source), in case it is mined or the source mends; then never again.
   */
  readonly lookAfterDeadlineMinutes: number;
  /** The currency's transfers carry an extra id (memo, destination tag) the watcher cannot read. */
  readonly memo: boolean;
}

export interface ChainSources {
  readonly sources: ReadonlyMap<string, ChainSourceDefinition>;
  /** By platform currency id. */
  readonly currencies: ReadonlyMap<string, ChainCurrencyDefinition>;
}

export const NO_CHAIN_SOURCES: ChainSources = { sources: new Map(), currencies: new Map() };
export const DEFAULT_DEADLINE_MINUTES = 24 * 60;
export const DEFAULT_RATE_PER_SECOND = 5;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_LOOK_AFTER_DEADLINE_MINUTES = 24 * 60;
/** A raw transaction of the largest standard size, as hex, or a receipt with many logs, fits well. */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

export class ChainSourcesFileError extends InputRefusedError {
  constructor(readonly problems: string[]) {
    super(`invalid chain sources file:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ChainSourcesFileError';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const CURRENCY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const CONTRACT = /^0x[0-9a-fA-F]{40}$/;

function intIn(v: unknown, min: number, max: number): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : undefined;
}

function unknownKeys(raw: Record<string, unknown>, allowed: string[], where: string, problems: string[]) {
  for (const k of Object.keys(raw)) if (!allowed.includes(k)) problems.push(`${where}.${k}: unknown key`);
}

function parseSource(name: string, raw: unknown, problems: string[]): ChainSourceDefinition | undefined {
  const where = `sources.${name}`;
  if (!NAME.test(name)) problems.push(`${where}: a name is lower-case letters, digits, '.', '_' or '-'`);
  if (!isObject(raw)) {
    problems.push(`${where}: must be a mapping`);
    return undefined;
  }
  const before = problems.length;
  unknownKeys(
    raw,
    ['family', 'urlEnv', 'network', 'ratePerSecond', 'timeoutMs', 'maxResponseBytes', 'chainId'],
    where,
    problems,
  );
  const family = raw.family === 'evm' || raw.family === 'utxo' ? raw.family : undefined;
  if (!family) problems.push(`${where}.family: must be evm or utxo`);
  const urlEnv = typeof raw.urlEnv === 'string' && ENV_NAME.test(raw.urlEnv) ? raw.urlEnv : undefined;
  if (!urlEnv)
    problems.push(`${where}.urlEnv: must name the environment variable that holds the URL (never the URL)`);
  let network: UtxoNetwork | null = null;
  if (family === 'utxo') {
    const n = raw.network ?? 'bitcoin';
    if (UTXO_NETWORKS.includes(n as UtxoNetwork)) network = n as UtxoNetwork;
    else problems.push(`${where}.network: must be one of ${UTXO_NETWORKS.join(', ')}`);
  } else if (raw.network !== undefined) problems.push(`${where}.network: only for utxo sources`);
  const ratePerSecond =
    raw.ratePerSecond === undefined ? DEFAULT_RATE_PER_SECOND : intIn(raw.ratePerSecond, 1, 10_000);
  if (ratePerSecond === undefined) problems.push(`${where}.ratePerSecond: an integer from 1 to 10000`);
  const timeoutMs = raw.timeoutMs === undefined ? DEFAULT_TIMEOUT_MS : intIn(raw.timeoutMs, 100, 120_000);
  if (timeoutMs === undefined) problems.push(`${where}.timeoutMs: an integer from 100 to 120000`);
  const maxResponseBytes =
    raw.maxResponseBytes === undefined
      ? DEFAULT_MAX_RESPONSE_BYTES
      : intIn(raw.maxResponseBytes, 1024, 256 * 1024 * 1024);
  if (maxResponseBytes === undefined)
    problems.push(`${where}.maxResponseBytes: an integer from 1024 to 268435456`);
  let chainId: number | null = null;
  if (raw.chainId !== undefined) {
    if (family !== 'evm') problems.push(`${where}.chainId: only for evm sources`);
    else {
      chainId = intIn(raw.chainId, 1, Number.MAX_SAFE_INTEGER) ?? null;
      if (chainId === null) problems.push(`${where}.chainId: a positive integer (1: Ethereum mainnet)`);
    }
  }
  if (problems.length > before || !family || !urlEnv || !ratePerSecond || !timeoutMs || !maxResponseBytes)
    return undefined;
  return { name, family, urlEnv, network, ratePerSecond, timeoutMs, maxResponseBytes, chainId };
}

function parseCurrency(
  currency: string,
  raw: unknown,
  sources: Map<string, ChainSourceDefinition>,
  problems: string[],
): ChainCurrencyDefinition | undefined {
  const where = `currencies.${currency}`;
  if (!CURRENCY.test(currency))
    problems.push(`${where}: a platform currency id (payloadCurrencyFrom/To: BTC, ETH, USDT, ETH_ARBITRUM…)`);
  if (!isObject(raw)) {
    problems.push(`${where}: must be a mapping`);
    return undefined;
  }
  const before = problems.length;
  unknownKeys(
    raw,
    ['source', 'confirmations', 'asset', 'decimals', 'deadlineMinutes', 'lookAfterDeadlineMinutes', 'memo'],
    where,
    problems,
  );
  const source = typeof raw.source === 'string' ? sources.get(raw.source) : undefined;
  if (!source) problems.push(`${where}.source: must name an entry of sources`);
  const confirmations = intIn(raw.confirmations, 1, 10_000);
  if (confirmations === undefined) problems.push(`${where}.confirmations: an integer from 1 to 10000`);
  let asset: string | undefined;
  let decimals: number | undefined;
  if (raw.asset === undefined || raw.asset === 'native') {
    asset = 'native';
    decimals = intIn(raw.decimals, 0, 36);
    if (decimals === undefined) problems.push(`${where}.decimals: an integer from 0 to 36`);
  } else if (isObject(raw.asset)) {
    unknownKeys(raw.asset, ['contract', 'decimals'], `${where}.asset`, problems);
    const c = raw.asset.contract;
    if (typeof c === 'string' && CONTRACT.test(c)) asset = c.toLowerCase();
    else problems.push(`${where}.asset.contract: a 0x-prefixed 20-byte contract address`);
    decimals = intIn(raw.asset.decimals, 0, 36);
    if (decimals === undefined) problems.push(`${where}.asset.decimals: an integer from 0 to 36`);
    if (raw.decimals !== undefined) problems.push(`${where}.decimals: a token's decimals go in asset`);
    if (source && source.family !== 'evm') problems.push(`${where}.asset: tokens only on evm sources`);
  } else problems.push(`${where}.asset: native, or { contract, decimals }`);
  const deadlineMinutes =
    raw.deadlineMinutes === undefined ? DEFAULT_DEADLINE_MINUTES : intIn(raw.deadlineMinutes, 1, 525_600);
  if (deadlineMinutes === undefined)
    problems.push(`${where}.deadlineMinutes: an integer from 1 to 525600 (a year)`);
  const lookAfterDeadlineMinutes =
    raw.lookAfterDeadlineMinutes === undefined
      ? DEFAULT_LOOK_AFTER_DEADLINE_MINUTES
      : intIn(raw.lookAfterDeadlineMinutes, 0, 525_600);
  if (lookAfterDeadlineMinutes === undefined)
    problems.push(`${where}.lookAfterDeadlineMinutes: an integer from 0 to 525600 (a year)`);
  const memo = raw.memo === undefined ? false : raw.memo;
  if (typeof memo !== 'boolean') problems.push(`${where}.memo: true or false`);
  if (
    problems.length > before ||
    !source ||
    confirmations === undefined ||
    asset === undefined ||
    decimals === undefined ||
    deadlineMinutes === undefined ||
    lookAfterDeadlineMinutes === undefined
  )
    return undefined;
  return {
    currency,
    source,
    confirmations,
    asset,
    decimals,
    deadlineMinutes,
    lookAfterDeadlineMinutes,
    memo: memo === true,
  };
}

/** Parses the file's document; throws ChainSourcesFileError listing every problem. */
export function parseChainSources(doc: unknown): ChainSources {
  const problems: string[] = [];
  if (doc === null || doc === undefined) return NO_CHAIN_SOURCES;
  if (!isObject(doc))
    throw new ChainSourcesFileError(['the file must be a mapping with sources and currencies']);
  unknownKeys(doc, ['sources', 'currencies'], '(file)', problems);
  const sources = new Map<string, ChainSourceDefinition>();
  if (doc.sources !== undefined && !isObject(doc.sources)) problems.push('sources: must be a mapping');
  else
    for (const [name, raw] of Object.entries(doc.sources ?? {})) {
      const s = parseSource(name, raw, problems);
      if (s) sources.set(name, s);
    }
  const currencies = new Map<string, ChainCurrencyDefinition>();
  if (doc.currencies !== undefined && !isObject(doc.currencies))
    problems.push('currencies: must be a mapping');
  else
    for (const [id, raw] of Object.entries(doc.currencies ?? {})) {
      const c = parseCurrency(id, raw, sources, problems);
      if (c) currencies.set(id, c);
    }
  if (problems.length > 0) throw new ChainSourcesFileError(problems);
  return { sources, currencies };
}

/** Reads CHAIN_SOURCES_FILE ('' : no file, no sources: every chain check is UNVERIFIABLE). */
export function loadChainSources(path: string): ChainSources {
  if (path === '') return NO_CHAIN_SOURCES;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ChainSourcesFileError([`cannot read ${path}: ${(e as Error).message}`]);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new ChainSourcesFileError([`not YAML: ${(e as Error).message.split('\n')[0]}`]);
  }
  return parseChainSources(doc);
}

/** A source's URL from this process's environment; throws naming the variable only, never a value. */
export function sourceUrl(source: ChainSourceDefinition, env: NodeJS.ProcessEnv = process.env): string {
  const v = env[source.urlEnv];
  if (v === undefined || v.trim() === '')
    throw new ChainSourcesFileError([`sources.${source.name}: ${source.urlEnv} is not set`]);
  let url: URL;
  try {
    url = new URL(v.trim());
  } catch {
    throw new ChainSourcesFileError([`sources.${source.name}: ${source.urlEnv} is not a URL`]);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ChainSourcesFileError([`sources.${source.name}: ${source.urlEnv} must be http(s)`]);
  return v.trim().replace(/\/+$/, '');
}

/** How the source is named in events and logs: its kind and its variable, never its URL. */
export const sourceLabel = (s: ChainSourceDefinition) =>
  `${s.family === 'evm' ? 'evm-rpc' : 'esplora'} ${s.name} (${s.urlEnv})`;
