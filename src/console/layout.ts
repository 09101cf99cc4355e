import type { ConsoleSession } from './auth.ts';
import { html, type Html } from './html.ts';

const NAV = [
  ['/swaps', 'Swaps'],
  ['/reconciliation', 'Reconciliation'],
  ['/cases', 'Cases'],
  ['/books', 'Books'],
  ['/close', 'Close'],
  ['/operations', 'Operations'],
] as const;

/**
 * The page shell. `controls` (search forms) stay put; `live` is the part the page script refreshes
 * every few seconds from the same URL (header `x-console-fragment`), so forms are never reset.
 */
export function page(options: {
  title: string;
  path: string;
  controls?: Html;
  live: Html;
  session: ConsoleSession;
}): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${options.title} · swap-ledger console</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/assets/console.css" />
        <script src="/assets/console.js" defer></script>
      </head>
      <body>
        <header>
          <a class="brand" href="/swaps">swap-ledger</a>
          <nav>
            ${NAV.map(([href, label]) => html`<a href="${href}" ${options.path.startsWith(href) ? html` class="active"` : ''}>${label}</a>`)}
          </nav>
          <span class="live-state" id="live-state" title="refreshed every 3 s">live</span>
          <span class="who" id="who">${options.session.operator}</span>
          <form method="post" action="/logout">
            ${csrfField(options.session)}<button type="submit">Log out</button>
          </form>
        </header>
        <h1>${options.title}</h1>
        ${options.controls ?? ''}
        <main id="live" data-refresh-ms="3000">${options.live}</main>
      </body>
    </html>`;
}

/** The hidden field every POST form carries (checked by the server's preHandler). */
export function csrfField(session: ConsoleSession): Html {
  return html`<input type="hidden" name="_csrf" value="${session.csrf}" />`;
}
