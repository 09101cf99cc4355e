/**
 * The one CSV writer of the finance exports (the console's /reconciliation/mismatches.csv and
 * `swap-ledger report --format csv`): RFC 4180 fields, and every cell neutralised against formula injection
 * by the OWASP rule, because partners choose swap ids, hashes and details that land in these cells.
 *
 * The rule, applied to every cell with no exemption (a cell that looks like a number included: `-1+1+cmd|' /C
 * calc'!A0` starts like one): a cell whose first character is `=`, `+`, `-`, `@`, a tab (0x09) or a carriage
 * return (0x0D) is prefixed with a single quote `'`, which spreadsheets read as "text". Our own figures are
 * plain decimals, so only a negative one (a delta) gains the quote: `'-0.0005`, to be read as text.
 * A spreadsheet in a `;`-separator locale splits an unquoted `x;=1+1` into `x` and a formula, so a cell with a
 * separator followed by a formula character (`;=`, `,=`, `; +`…) gains the quote too, and any cell holding
 * `;` is quoted (OWASP: quote the field, prefix the quote, double the inner quotes).
 * Then a cell holding `"`, `,`, `;`, CR or LF is quoted, its quotes doubled (RFC 4180). Null is the empty cell.
 */

export type CsvCell = string | number | bigint | boolean | null | undefined;

/** Characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A formula that starts after a `;` or `,` separator inside the cell. */
const FORMULA_AFTER_SEPARATOR = /[;,][ \t\r\n]*[=+\-@]/;

/** One cell, neutralised and quoted as needed. */
export function csvCell(value: CsvCell): string {
  if (value === null || value === undefined) return '';
  let s = String(value);
  if (FORMULA_START.test(s) || FORMULA_AFTER_SEPARATOR.test(s)) s = `'${s}`;
  return /[",;\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** One record: its cells, comma-separated, with no line ending. */
export function csvRow(cells: readonly CsvCell[]): string {
  return cells.map(csvCell).join(',');
}

/** A whole document: one record a line, each ended by CRLF (RFC 4180). */
export function csvDocument(rows: readonly (readonly CsvCell[])[]): string {
  return rows.map((r) => csvRow(r) + '\r\n').join('');
}
