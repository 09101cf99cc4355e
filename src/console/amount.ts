import { currencyDecimals } from '../money/currencies.ts';
import { Decimal, isDecimalText } from '../money/decimal.ts';
import { escapeHtml, html, NumericHtml, type Html } from './html.ts';

/**
 * The one way the console writes an amount: from the exact text Postgres or an event gives, never a JS
 * number, at the currency's precision (its decimals in src/money/currencies.json: "-2" BTC is
 * "-2.00000000"). An amount with more places than its currency has is shown whole, not rounded: the
 * extra digits are a fault someone must see. Unknown currency (or none, as a check's figures): the exact
 * figure as stored, trailing zeros dropped. Null or empty: "—". Text that is not a decimal: as is.
 */
export function formatAmount(value: string | null | undefined, currency?: string | null): string {
  if (value === null || value === undefined || value === '') return '—';
  if (!isDecimalText(value)) return value;
  const d = new Decimal(value);
  const decimals = currency ? currencyDecimals(currency) : undefined;
  // toFixed never writes an exponent, so huge and tiny figures keep every digit; -0 is written 0.
  if (decimals === undefined) return d.isZero() ? '0' : d.toFixed();
  return d.toFixed(Math.max(decimals, d.decimalPlaces()));
}

/** An amount for a table cell or a line of text: right-aligned in a table (see table in html.ts). */
export function amount(
  value: string | null | undefined,
  currency?: string | null,
  data: Readonly<Record<string, string>> = {},
): NumericHtml {
  // Built as text: a formatter of html templates would put a space before the attributes.
  const attrs = Object.entries(data)
    .map(([k, v]) => ` data-${k.replace(/[^a-z-]/g, '')}="${escapeHtml(v)}"`)
    .join('');
  return new NumericHtml(`<span class="num"${attrs}>${escapeHtml(formatAmount(value, currency))}</span>`);
}

/** A check's or a statement's figure, whose currency the row does not name: a decimal as stored, else text. */
export function figure(value: string | null | undefined): Html {
  if (value === null || value === undefined || value === '') return html`—`;
  return isDecimalText(value) ? amount(value) : html`${value}`;
}
