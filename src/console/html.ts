/** HTML built from templates: every interpolated value is escaped unless it is already Html. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** A figure: a table puts it in a right-aligned cell. */
export class NumericHtml extends Html {}

export const raw = (text: string): Html => new Html(text);

/** A link to a swap's page: `/swaps/<provider>/<swapId>`. */
export function swapHref(providerId: string, swapId: string): string {
  return `/swaps/${encodeURIComponent(providerId)}/${encodeURIComponent(swapId)}`;
}

export function swapLink(providerId: string, swapId: string): Html {
  return html`<a href="${swapHref(providerId, swapId)}">${providerId}/${swapId}</a>`;
}

/** A status, verdict or journal outcome as a coloured badge (the class is the value, lower-cased). */
export function badge(value: string | null | undefined): Html {
  if (!value) return html`<span class="muted">—</span>`;
  return html`<span class="badge b-${value.toLowerCase().replace(/[^a-z_]/g, '')}">${value}</span>`;
}

/** A timestamp as stored (UTC text), shortened to the second. */
export function time(value: string | null | undefined): Html {
  if (!value) return html`<span class="muted">—</span>`;
  return html`<time datetime="${value}">${value.replace('T', ' ').slice(0, 19)}</time>`;
}

export function table(head: readonly string[], rows: readonly (readonly unknown[])[], empty = 'none'): Html {
  if (rows.length === 0) return html`<p class="muted empty">${empty}</p>`;
  return html`<table>
    <thead>
      <tr>
        ${head.map((h) => html`<th>${h}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (r) =>
          html`<tr>
            ${r.map((c) => (c instanceof NumericHtml ? html`<td class="num">${c}</td>` : html`<td>${c}</td>`))}
          </tr>`,
      )}
    </tbody>
  </table>`;
}
