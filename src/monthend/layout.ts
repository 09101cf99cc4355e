// Over 400 lines on purpose: a statement's layout (the declared columns, separators and date formats) and
// the reading of each line under it are one contract; every refusal names its line and field from here.
import { isDecimalText } from '../money/decimal.ts';
import { isInternalStatus, type InternalStatus } from '../swap/status.ts';
import { partnerTextProblem } from '../swap/text.ts';

/**
 * A partner's monthly statement: its layout (the documented default, or a provider's `statementLayout` in
 * the providers file) and the reading of its CSV lines. Everything is mapped explicitly, never guessed: a
 * column is found by its header name, a decimal separator and a date format are declared, a currency code and
 * a status word must be in a mapping. Pure: text in, lines or errors naming the line and the field out.
 */

/** The fields a statement line may carry; swapId and status are required, the others compared when present. */
export const STATEMENT_FIELDS = [
  'swapId',
  'status',
  'finishedAt',
  'currencyFrom',
  'amountFrom',
  'currencyTo',
  'amountTo',
  'providerFee',
  'referralFee',
  'payoutNetworkFee',
] as const;
export type StatementField = (typeof STATEMENT_FIELDS)[number];
const REQUIRED: readonly StatementField[] = ['swapId', 'status'];
const AMOUNTS = ['amountFrom', 'amountTo', 'providerFee', 'referralFee', 'payoutNetworkFee'] as const;

/** The date formats a layout may declare: `iso` (ISO-8601 with Z or an offset) or a pattern, read as UTC. */
export const DATE_FORMATS = [
  'iso',
  'YYYY-MM-DD HH:mm:ss',
  'YYYY-MM-DD',
  'DD.MM.YYYY HH:mm:ss',
  'DD.MM.YYYY',
  'DD/MM/YYYY',
  'MM/DD/YYYY',
] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];

export interface StatementLayout {
  /** Field separator: ',' (default), ';' or a tab. */
  readonly delimiter: ',' | ';' | '\t';
  /** '.' (default) or ','; the other one in an amount is an error, never read as a group separator. */
  readonly decimalSeparator: '.' | ',';
  readonly dateFormat: DateFormat;
  /** Our field -> the header of the partner's column. */
  readonly columns: Readonly<Record<StatementField, string | undefined>>;
  /** The statement's status words -> internal statuses (besides the provider's status mapping). */
  readonly statuses: Readonly<Record<string, InternalStatus>>;
  /** The statement's currency codes -> platform currency ids (besides the provider's currencies). */
  readonly currencies: Readonly<Record<string, string>>;
}

/** The documented default layout (README "Month end"): comma-separated, '.' decimals, ISO dates. */
export const DEFAULT_STATEMENT_LAYOUT: StatementLayout = Object.freeze({
  delimiter: ',',
  decimalSeparator: '.',
  dateFormat: 'iso',
  columns: Object.freeze({
    swapId: 'swap_id',
    status: 'status',
    finishedAt: 'finished_at',
    currencyFrom: 'currency_from',
    amountFrom: 'amount_from',
    currencyTo: 'currency_to',
    amountTo: 'amount_to',
    providerFee: 'provider_fee',
    referralFee: 'referral_fee',
    payoutNetworkFee: 'payout_network_fee',
  }),
  statuses: Object.freeze({}),
  currencies: Object.freeze({}),
});

const LAYOUT_KEYS = new Set([
  'delimiter',
  'decimalSeparator',
  'dateFormat',
  'columns',
  'statuses',
  'currencies',
]);
const DELIMITERS: Record<string, StatementLayout['delimiter']> = {
  ',': ',',
  ';': ';',
  '\t': '\t',
  tab: '\t',
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A provider's `statementLayout` section (providers file): every problem pushed, naming where. Columns not
 * named keep the default header; `columns: { referralFee: null }` says the partner has no such column.
 */
export function parseStatementLayout(
  raw: unknown,
  where: string,
  problems: string[],
): StatementLayout | undefined {
  if (raw === undefined || raw === null) return undefined;
  const at = `${where}.statementLayout`;
  if (!isObject(raw)) {
    problems.push(`${at}: must be a mapping`);
    return undefined;
  }
  const before = problems.length;
  for (const k of Object.keys(raw)) if (!LAYOUT_KEYS.has(k)) problems.push(`${at}.${k}: unknown key`);
  let delimiter = DEFAULT_STATEMENT_LAYOUT.delimiter;
  if (raw.delimiter !== undefined) {
    const d = typeof raw.delimiter === 'string' ? DELIMITERS[raw.delimiter] : undefined;
    if (d) delimiter = d;
    else problems.push(`${at}.delimiter: must be ",", ";" or "tab"`);
  }
  let decimalSeparator = DEFAULT_STATEMENT_LAYOUT.decimalSeparator;
  if (raw.decimalSeparator !== undefined) {
    if (raw.decimalSeparator === '.' || raw.decimalSeparator === ',') decimalSeparator = raw.decimalSeparator;
    else problems.push(`${at}.decimalSeparator: must be "." or ","`);
  }
  if (decimalSeparator === delimiter)
    problems.push(`${at}: the decimal separator and the delimiter must differ`);
  let dateFormat = DEFAULT_STATEMENT_LAYOUT.dateFormat;
  if (raw.dateFormat !== undefined) {
    if ((DATE_FORMATS as readonly unknown[]).includes(raw.dateFormat))
      dateFormat = raw.dateFormat as DateFormat;
    else problems.push(`${at}.dateFormat: must be one of ${DATE_FORMATS.map((f) => `"${f}"`).join(', ')}`);
  }
  const columns: Record<StatementField, string | undefined> = { ...DEFAULT_STATEMENT_LAYOUT.columns };
  if (raw.columns !== undefined) {
    if (!isObject(raw.columns)) problems.push(`${at}.columns: must be a mapping of field -> column header`);
    else
      for (const [field, header] of Object.entries(raw.columns)) {
        if (!(STATEMENT_FIELDS as readonly string[]).includes(field))
          problems.push(`${at}.columns.${field}: unknown field (${STATEMENT_FIELDS.join(', ')})`);
        else if (header === null && !REQUIRED.includes(field as StatementField))
          columns[field as StatementField] = undefined;
        else if (typeof header === 'string' && header.trim() !== '' && !partnerTextProblem(header, 200))
          columns[field as StatementField] = header.trim();
        else
          problems.push(
            `${at}.columns.${field}: must be a column header${REQUIRED.includes(field as StatementField) ? '' : ' or null'}`,
          );
      }
  }
  const statuses: Record<string, InternalStatus> = {};
  if (raw.statuses !== undefined) {
    if (!isObject(raw.statuses))
      problems.push(`${at}.statuses: must be a mapping of word -> internal status`);
    else
      for (const [word, status] of Object.entries(raw.statuses)) {
        if (typeof status === 'string' && isInternalStatus(status)) statuses[word] = status;
        else problems.push(`${at}.statuses.${word}: must be an internal status`);
      }
  }
  const currencies: Record<string, string> = {};
  if (raw.currencies !== undefined) {
    if (!isObject(raw.currencies))
      problems.push(`${at}.currencies: must be a mapping of code -> platform currency id`);
    else
      for (const [code, id] of Object.entries(raw.currencies)) {
        if (typeof id === 'string' && id.trim() !== '') currencies[code] = id;
        else problems.push(`${at}.currencies.${code}: must be a platform currency id`);
      }
  }
  if (problems.length > before) return undefined;
  return Object.freeze({ delimiter, decimalSeparator, dateFormat, columns, statuses, currencies });
}

/** One line of a statement as read: amounts as plain decimal text, the date as ISO-8601 UTC, null when empty. */
export interface StatementLine {
  /** 1-based line number in the file (the header is line 1). */
  lineNo: number;
  swapId: string;
  /** The word as written, and the internal status it maps to. */
  statusWord: string;
  status: InternalStatus;
  finishedAt: string | null;
  currencyFrom: string | null;
  amountFrom: string | null;
  currencyTo: string | null;
  amountTo: string | null;
  providerFee: string | null;
  referralFee: string | null;
  payoutNetworkFee: string | null;
}

/** A refused statement: every problem, each naming its line and field. Nothing of the file is stored. */
export class StatementFileError extends Error {
  override name = 'StatementFileError';
  constructor(readonly problems: string[]) {
    super(`statement refused:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** What the reading needs besides the layout: the provider's own mappings (providers file). */
export interface StatementMappings {
  /** The provider's status word -> internal status (its statusMap), tried after the layout's statuses. */
  mapStatus?: (word: string) => InternalStatus | undefined;
  /** The provider's currencies (partner id -> platform id), tried after the layout's. */
  currencies?: Readonly<Record<string, string>>;
}

/** Most lines a statement may carry: it is appended as one event, which a Kafka message must hold. */
export const MAX_STATEMENT_LINES = 5000;
/** Most problems listed before the reading stops. */
const MAX_PROBLEMS = 50;

/** RFC 4180 records: quoted fields may hold the delimiter, quotes (doubled) and line breaks. */
export function csvRecords(text: string, delimiter: string): { lineNo: number; cells: string[] }[] {
  const records: { lineNo: number; cells: string[] }[] = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte-order mark is not part of the first header
  const endRecord = () => {
    cells.push(cell);
    if (!(cells.length === 1 && cells[0] === '')) records.push({ lineNo: start, cells });
    cells = [];
    cell = '';
  };
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === '\n') line++;
        cell += c;
      }
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === delimiter) {
      cells.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') continue;
    else if (c === '\n' || c === '\r') {
      endRecord();
      line++;
      start = line;
    } else cell += c;
  }
  if (quoted) throw new StatementFileError([`line ${start}: a quoted field is not closed`]);
  if (cell !== '' || cells.length > 0) endRecord();
  return records;
}

/** An amount as written, in plain decimal text per the layout's separator; a string saying why not. */
export function readAmount(text: string, layout: StatementLayout): string | { problem: string } {
  const other = layout.decimalSeparator === '.' ? ',' : '.';
  if (text.includes(other))
    return {
      problem: `"${text.slice(0, 40)}" holds "${other}": the layout's decimal separator is "${layout.decimalSeparator}" and no group separator is read`,
    };
  const plain = layout.decimalSeparator === ',' ? text.replace(',', '.') : text;
  if (!isDecimalText(plain) || plain.startsWith('-'))
    return {
      problem: `"${text.slice(0, 40)}" is not a non-negative decimal amount (at most 40 integer and 36 fraction digits, no exponent)`,
    };
  return plain;
}

const PATTERNS: Record<Exclude<DateFormat, 'iso'>, RegExp> = {
  'YYYY-MM-DD HH:mm:ss': /^(?<Y>\d{4})-(?<M>\d{2})-(?<D>\d{2}) (?<h>\d{2}):(?<m>\d{2}):(?<s>\d{2})$/,
  'YYYY-MM-DD': /^(?<Y>\d{4})-(?<M>\d{2})-(?<D>\d{2})$/,
  'DD.MM.YYYY HH:mm:ss': /^(?<D>\d{2})\.(?<M>\d{2})\.(?<Y>\d{4}) (?<h>\d{2}):(?<m>\d{2}):(?<s>\d{2})$/,
  'DD.MM.YYYY': /^(?<D>\d{2})\.(?<M>\d{2})\.(?<Y>\d{4})$/,
  'DD/MM/YYYY': /^(?<D>\d{2})\/(?<M>\d{2})\/(?<Y>\d{4})$/,
  'MM/DD/YYYY': /^(?<M>\d{2})\/(?<D>\d{2})\/(?<Y>\d{4})$/,
};
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** A date as written, per the layout's format (patterns are UTC), as ISO-8601 UTC; a problem otherwise. */
export function readDate(text: string, format: DateFormat): string | { problem: string } {
  const bad = { problem: `"${text.slice(0, 40)}" is not a date of the layout's format ${format}` };
  if (format === 'iso') {
    if (!ISO.test(text)) return bad;
    const [Y, M, D] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
    const day = new Date(Date.UTC(Y, M - 1, D));
    // Date parses 2026-02-31 as March 3rd: a day that does not exist is refused, not moved.
    if (day.getUTCMonth() !== M - 1 || day.getUTCDate() !== D) return bad;
    const d = new Date(text);
    return Number.isNaN(d.getTime()) ? bad : d.toISOString();
  }
  const g = PATTERNS[format].exec(text)?.groups;
  if (!g) return bad;
  const [Y, M, D, h, m, s] = [g.Y, g.M, g.D, g.h ?? '0', g.m ?? '0', g.s ?? '0'].map(Number) as number[];
  const d = new Date(Date.UTC(Y!, M! - 1, D!, h!, m!, s!));
  // Date.UTC rolls 31.02 over into March: a date that does not exist is refused, not moved.
  if (
    d.getUTCFullYear() !== Y ||
    d.getUTCMonth() !== M! - 1 ||
    d.getUTCDate() !== D ||
    h! > 23 ||
    m! > 59 ||
    s! > 59
  )
    return bad;
  return d.toISOString();
}

/**
 * Reads a statement's text by its layout. Every problem is collected (up to a bound), each as
 * `line N, <field> (column "<header>"): why`; any problem refuses the whole file.
 */
export function readStatement(
  text: string,
  layout: StatementLayout,
  mappings: StatementMappings = {},
): StatementLine[] {
  const problems: string[] = [];
  if (text.includes('\u0000'))
    throw new StatementFileError(['the file holds a NUL character: not a text CSV']);
  const records = csvRecords(text, layout.delimiter);
  if (records.length === 0) throw new StatementFileError(['the file is empty: a header line is expected']);
  const header = records[0]!.cells.map((h) => h.trim());
  const index = {} as Record<StatementField, number | undefined>;
  for (const field of STATEMENT_FIELDS) {
    const name = layout.columns[field];
    if (name === undefined) continue;
    const at = header.indexOf(name);
    if (at >= 0) index[field] = at;
    else if (REQUIRED.includes(field))
      problems.push(`line 1: no column "${name}" for ${field} in the header`);
  }
  if (problems.length > 0) throw new StatementFileError(problems);
  if (records.length - 1 > MAX_STATEMENT_LINES)
    throw new StatementFileError([
      `${records.length - 1} lines: at most ${MAX_STATEMENT_LINES} lines a statement (split the month's file by currency)`,
    ]);
  const currencyIds = new Set([
    ...Object.values(layout.currencies),
    ...Object.values(mappings.currencies ?? {}),
  ]);
  const mapCurrency = (code: string): string | undefined =>
    layout.currencies[code] ?? mappings.currencies?.[code] ?? (currencyIds.has(code) ? code : undefined);
  const lines: StatementLine[] = [];
  const seen = new Map<string, number>();
  for (const { lineNo, cells } of records.slice(1)) {
    if (problems.length >= MAX_PROBLEMS) {
      problems.push(`… reading stopped after ${MAX_PROBLEMS} problems`);
      break;
    }
    if (cells.length !== header.length) {
      problems.push(`line ${lineNo}: ${cells.length} fields, the header has ${header.length}`);
      continue;
    }
    const before = problems.length;
    const cell = (field: StatementField): string | null => {
      const at = index[field];
      if (at === undefined) return null;
      const v = cells[at]!.trim();
      return v === '' ? null : v;
    };
    const where = (field: StatementField) => `line ${lineNo}, ${field} (column "${layout.columns[field]}")`;
    for (const field of STATEMENT_FIELDS) {
      const v = cell(field);
      const problem = v === null ? undefined : partnerTextProblem(v, 200);
      if (problem) problems.push(`${where(field)}: ${problem}`);
    }
    if (problems.length > before) continue;
    const swapId = cell('swapId');
    if (swapId === null) problems.push(`${where('swapId')}: empty`);
    else if (seen.has(swapId))
      problems.push(`${where('swapId')}: ${swapId} is also on line ${seen.get(swapId)}`);
    else seen.set(swapId, lineNo);
    const statusWord = cell('status');
    const status =
      statusWord === null
        ? undefined
        : (layout.statuses[statusWord] ??
          mappings.mapStatus?.(statusWord) ??
          (isInternalStatus(statusWord) ? statusWord : undefined));
    if (statusWord === null) problems.push(`${where('status')}: empty`);
    else if (status === undefined)
      problems.push(
        `${where('status')}: "${statusWord.slice(0, 40)}" is in neither the layout's statuses nor the provider's status mapping`,
      );
    const amounts = {} as Record<(typeof AMOUNTS)[number], string | null>;
    for (const field of AMOUNTS) {
      const v = cell(field);
      const read = v === null ? null : readAmount(v, layout);
      if (read !== null && typeof read !== 'string') problems.push(`${where(field)}: ${read.problem}`);
      amounts[field] = typeof read === 'string' ? read : null;
    }
    const currencies = {} as Record<'currencyFrom' | 'currencyTo', string | null>;
    for (const field of ['currencyFrom', 'currencyTo'] as const) {
      const v = cell(field);
      const id = v === null ? null : mapCurrency(v);
      if (id === undefined)
        problems.push(
          `${where(field)}: "${v!.slice(0, 40)}" is in neither the layout's currencies nor the provider's`,
        );
      currencies[field] = id ?? null;
    }
    const dateText = cell('finishedAt');
    const date = dateText === null ? null : readDate(dateText, layout.dateFormat);
    if (date !== null && typeof date !== 'string') problems.push(`${where('finishedAt')}: ${date.problem}`);
    if (problems.length > before) continue;
    lines.push({
      lineNo,
      swapId: swapId!,
      statusWord: statusWord!,
      status: status!,
      finishedAt: date as string | null,
      currencyFrom: currencies.currencyFrom,
      amountFrom: amounts.amountFrom,
      currencyTo: currencies.currencyTo,
      amountTo: amounts.amountTo,
      providerFee: amounts.providerFee,
      referralFee: amounts.referralFee,
      payoutNetworkFee: amounts.payoutNetworkFee,
    });
  }
  if (problems.length > 0) throw new StatementFileError(problems);
  if (lines.length === 0) throw new StatementFileError(['the statement has a header and no line']);
  return lines;
}
