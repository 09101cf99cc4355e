import { readFileSync } from 'node:fs';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { listenerTimeouts } from '../observability/http-timeouts.ts';
import type { Logger } from '../observability/log.ts';
import {
  ConsoleAuth,
  SESSION_COOKIE,
  clearedCookie,
  cookieValue,
  csrfMatches,
  sessionCookie,
  type ConsoleKeys,
  type ConsoleSession,
} from './auth.ts';
import type { ConsoleDb } from './db.ts';
import { escapeHtml, html, type Html } from './html.ts';
import { page } from './layout.ts';
import { booksControls, booksLive, parseInstant } from './pages/books.ts';
import { operationsLive } from './pages/operations.ts';
import { mismatchesCsv, openMismatches, reconciliationLive } from './pages/reconciliation.ts';
import { closeIndexLive, closeLive } from './pages/close.ts';
import { swapLive } from './pages/swap.ts';
import { cleanFilters, swapsControls, swapsLive } from './pages/swaps.ts';
import type { WorkerHealthBoard } from './workers.ts';
import { CASE_ACTIONS, type CaseAction } from '../cases/machine.ts';
import { checkCaseAction, listCases, loadCase } from '../ops/cases.ts';
import { caseActedEvent } from '../ops/operator-events.ts';
import { buildEvidencePack, EvidenceError } from '../ops/evidence.ts';
import { canonicalJson } from '../cases/evidence.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';
import {
  caseHref,
  caseLive,
  casesControls,
  casesLive,
  cleanCaseFilters,
  mayTake,
  type AppendCaseEvent,
} from './pages/cases.ts';

const ASSETS: Record<string, { file: URL; type: string }> = {
  'console.css': { file: new URL('./assets/console.css', import.meta.url), type: 'text/css; charset=utf-8' },
  'console.js': {
    file: new URL('./assets/console.js', import.meta.url),
    type: 'text/javascript; charset=utf-8',
  },
};

/** Provider and swap ids in a path: printable, bounded; checked by the route's schema before any query. */
const PATH_ID = { type: 'string', pattern: '^[\\x21-\\x7e]{1,200}$' } as const;
const SWAP_PATH = {
  schema: {
    params: {
      type: 'object',
      required: ['provider', 'swapId'],
      properties: { provider: PATH_ID, swapId: PATH_ID, action: { type: 'string' } },
    },
  },
  config: { pathRule: 'provider and swap id must be 1-200 printable characters' },
} as const;
const CLOSE_PATH = {
  schema: {
    params: {
      type: 'object',
      required: ['provider', 'period'],
      properties: { provider: PATH_ID, period: { type: 'string', pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$' } },
    },
  },
  config: { pathRule: 'the path is /close/<provider>/<YYYY-MM>: a printable provider id and a month' },
} as const;

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  // No page passes its URL (a swap id, a filter) on to another site.
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

function loginPage(failed: boolean): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>Log in · swap-ledger console</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/assets/console.css" />
      </head>
      <body>
        <form class="login" method="post" action="/login">
          <h1>swap-ledger console</h1>
          <p class="muted">Swaps, reconciliation, books, operations and cases.</p>
          ${failed ? html`<p class="error" id="login-error">That key is not valid.</p>` : ''}
          <label
            >Login key<input type="password" name="key" autocomplete="current-password" autofocus
          /></label>
          <button class="primary" type="submit">Log in</button>
          <p class="muted">"swap-ledger up" prints a login key when it starts.</p>
        </form>
      </body>
    </html>`;
}

export interface ConsoleServerOptions {
  readonly db: ConsoleDb;
  /** Login key digests per role. */
  readonly keys: ConsoleKeys;
  /** CONSOLE_TRUST_PROXY: a proxy's X-Forwarded-Proto says whether the browser reached us over TLS. */
  readonly trustProxy?: boolean;
  readonly logger: Logger;
  /** Appends an operator's case action (the appender); without it the console only reads cases. */
  readonly appendCaseEvent?: AppendCaseEvent;
  /** The workers whose /readyz the operations page shows. */
  readonly workers?: WorkerHealthBoard;
  /** HTTP_REQUEST_TIMEOUT_MS (default: src/observability/http-timeouts.ts). */
  readonly requestTimeoutMs?: number;
}

export async function buildConsoleServer(options: ConsoleServerOptions): Promise<FastifyInstance> {
  const { db } = options;
  const auth = new ConsoleAuth(options.keys);
  // A Map: `/assets/__proto__` and its kin are names like any other, not the prototype of an object.
  const assets = new Map(
    Object.entries(ASSETS).map(([name, a]) => [name, { body: readFileSync(a.file), type: a.type }]),
  );
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 4096,
    // A login form sent slowly or never finished gets 408, not a connection held open.
    ...listenerTimeouts(options.requestTimeoutMs),
    // Swap ids up to PATH_ID's bound reach the route's schema, which answers 400 beyond it.
    routerOptions: { maxParamLength: 256 },
    trustProxy: options.trustProxy ?? false,
  });
  // Secure whenever the browser reached the console over TLS (its own, or a trusted proxy's).
  const secure = (request: FastifyRequest) => request.protocol === 'https';
  const sessionOf = (request: FastifyRequest): ConsoleSession | undefined =>
    auth.session(cookieValue(request.headers.cookie, SESSION_COOKIE));
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  app.addHook('onRequest', async (request, reply) => {
    reply.headers(SECURITY_HEADERS);
    const path = request.url.split('?')[0]!;
    if (path === '/login' || path === '/healthz' || path.startsWith('/assets/')) return;
    if (sessionOf(request)) return;
    if (request.headers['x-console-fragment'] || request.method !== 'GET')
      return reply.code(401).type('text/plain').send('log in first');
    return reply.redirect('/login', 303);
  });
  // Every POST but the login carries the session's CSRF token in a hidden field.
  app.addHook('preHandler', async (request, reply) => {
    if (request.method !== 'POST' || request.url.split('?')[0] === '/login') return;
    const session = sessionOf(request);
    const token = (request.body as Record<string, unknown> | undefined)?._csrf;
    if (!session || !csrfMatches(session, token))
      return reply
        .code(403)
        .type('text/plain')
        .send('this form is not from your session (CSRF token missing or wrong)');
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A path id its route's schema refused: the route's own rule, before any query.
    const pathRule = (request.routeOptions.config as { pathRule?: string }).pathRule;
    if (error.validationContext === 'params' && pathRule)
      return void reply.code(400).type('text/plain').send(pathRule);
    options.logger.error({ err: error, url: request.url.split('?')[0] }, 'console page failed');
    void reply
      .code(error.statusCode && error.statusCode < 500 ? error.statusCode : 500)
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><p>The console could not build this page (${escapeHtml(error.statusCode && error.statusCode < 500 ? error.message : 'server error')}).</p>`,
      );
  });

  // A key in a URL lands in histories, logs and Referer headers: only the form's POST body may carry it.
  app.get<{ Querystring: { key?: string } }>('/login', async (request, reply) =>
    request.query.key !== undefined
      ? reply.code(400).type('text/plain').send('the login key is never taken from a URL: paste it on /login')
      : reply.type('text/html; charset=utf-8').send(loginPage(false).text),
  );
  app.post<{ Body: { key?: string } }>('/login', async (request, reply) => {
    const token = auth.login(request.body?.key);
    if (!token) return reply.code(401).type('text/html; charset=utf-8').send(loginPage(true).text);
    return reply.header('set-cookie', sessionCookie(token, secure(request))).redirect('/swaps', 303);
  });
  app.post('/logout', async (request, reply) => {
    auth.logout(cookieValue(request.headers.cookie, SESSION_COOKIE));
    return reply.header('set-cookie', clearedCookie(secure(request))).redirect('/login', 303);
  });
  app.get('/healthz', async () => 'ok');
  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    const asset = assets.get(request.params.name);
    if (!asset) return reply.code(404).send('not found');
    return reply.type(asset.type).header('cache-control', 'max-age=300').send(asset.body);
  });
  app.get('/', async (_request, reply) => reply.redirect('/swaps', 303));

  /** The whole page, or only its live part when the page script asks for it. */
  const send = (request: FastifyRequest, reply: FastifyReply, title: string, live: Html, controls?: Html) => {
    reply.type('text/html; charset=utf-8');
    if (request.headers['x-console-fragment']) return reply.send(live.text);
    const session = sessionOf(request)!;
    return reply.send(
      page({ title, path: request.url, live, session, ...(controls ? { controls } : {}) }).text,
    );
  };

  app.get<{ Querystring: Record<string, string> }>('/swaps', async (request, reply) => {
    const filters = cleanFilters(request.query);
    const live = await swapsLive(db, filters);
    return send(
      request,
      reply,
      'Swaps',
      live,
      request.headers['x-console-fragment'] ? undefined : await swapsControls(db, filters),
    );
  });
  app.get<{ Params: { provider: string; swapId: string } }>(
    '/swaps/:provider/:swapId',
    SWAP_PATH,
    async (request, reply) => {
      const { provider, swapId } = request.params;
      const live = await swapLive(db, provider, swapId);
      if (!live) {
        reply.code(404);
        return send(
          request,
          reply,
          `Swap ${provider}/${swapId}`,
          html`<p class="error">No swap ${provider}/${swapId} in the projection.</p>`,
        );
      }
      return send(request, reply, `Swap ${provider}/${swapId}`, live);
    },
  );
  app.get('/reconciliation', async (request, reply) =>
    send(request, reply, 'Reconciliation', await reconciliationLive(db)),
  );
  app.get('/reconciliation/mismatches.csv', async (_request, reply) =>
    reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="mismatches.csv"')
      .send(mismatchesCsv(await openMismatches(db))),
  );
  app.get<{ Querystring: { as_of?: string; known_at?: string } }>('/books', async (request, reply) => {
    const asOf = parseInstant(request.query.as_of);
    const knownAt = parseInstant(request.query.known_at);
    const bad = (request.query.as_of && !asOf) || (request.query.known_at && !knownAt);
    const q = { ...(asOf ? { asOf } : {}), ...(knownAt ? { knownAt } : {}) };
    const live = bad
      ? html`<p class="error">Times must look like 2026-11-01T12:00 (UTC) or carry a zone.</p>`
      : await booksLive(db, q);
    if (bad) reply.code(400);
    return send(request, reply, 'Books', live, booksControls(q));
  });
  app.get('/operations', async (request, reply) =>
    send(request, reply, 'Operations', await operationsLive(db, options.workers)),
  );
  app.get('/close', async (request, reply) => send(request, reply, 'Close', await closeIndexLive(db)));
  app.get<{ Params: { provider: string; period: string } }>(
    '/close/:provider/:period',
    CLOSE_PATH,
    async (request, reply) => {
      const { provider, period } = request.params;
      return send(request, reply, `Close ${provider} ${period}`, await closeLive(db, provider, period));
    },
  );
  app.get<{ Querystring: Record<string, string> }>('/cases', async (request, reply) => {
    const filters = cleanCaseFilters(request.query);
    const cases = await listCases(db.reader, {
      ...(filters.state ? { states: [filters.state] } : {}),
      ...(filters.partner ? { providerId: filters.partner } : {}),
      ...(filters.age ? { age: filters.age } : {}),
      ...(filters.check ? { check: filters.check } : {}),
    });
    return send(request, reply, 'Cases', casesLive(cases), casesControls(filters));
  });
  app.get<{ Params: { provider: string; swapId: string } }>(
    '/cases/:provider/:swapId',
    SWAP_PATH,
    async (request, reply) => {
      const { provider, swapId } = request.params;
      const c = await loadCase(db.reader, { providerId: provider, swapId });
      if (!c) {
        reply.code(404);
        return send(
          request,
          reply,
          `Case ${provider}/${swapId}`,
          html`<p class="error">No case for ${provider}/${swapId}.</p>`,
        );
      }
      return send(request, reply, `Case ${provider}/${swapId}`, caseLive(c, sessionOf(request)!));
    },
  );
  app.get<{ Params: { provider: string; swapId: string } }>(
    '/cases/:provider/:swapId/evidence.json',
    SWAP_PATH,
    async (request, reply) => {
      const { provider, swapId } = request.params;
      try {
        const pack = await buildEvidencePack(db.reader, { providerId: provider, swapId });
        return reply
          .type('application/json; charset=utf-8')
          .header('content-disposition', 'attachment; filename="evidence.json"')
          .send(canonicalJson(pack));
      } catch (e) {
        if (e instanceof EvidenceError) return reply.code(404).type('text/plain').send(e.message);
        throw e;
      }
    },
  );
  // The CSRF token was checked by the preHandler; here the role, then the state machine, then the append.
  app.post<{ Params: { provider: string; swapId: string; action: string }; Body: Record<string, string> }>(
    '/cases/:provider/:swapId/:action',
    SWAP_PATH,
    async (request, reply) => {
      const { provider, swapId, action } = request.params;
      const session = sessionOf(request)!;
      if (!(CASE_ACTIONS as readonly string[]).includes(action))
        return reply
          .code(404)
          .type('text/plain')
          .send(`no case action "${action.slice(0, 40)}"`);
      if (!mayTake(session.role, action as CaseAction))
        return reply
          .code(403)
          .type('text/plain')
          .send(`a ${session.role} may not ${action.replaceAll('_', ' ')}`);
      if (!options.appendCaseEvent)
        return reply.code(503).type('text/plain').send('this console was started without an event appender');
      const body = request.body ?? {};
      const ref = { providerId: provider, swapId };
      try {
        const event = caseActedEvent({
          ...ref,
          action,
          by: session.operator,
          reason: body.reason,
          outcome: body.outcome,
          sent: body.sent,
          reference: body.reference,
          setting: body.setting,
          amount: body.amount,
          currency: body.currency,
        });
        await checkCaseAction(db.reader, ref, event);
        await options.appendCaseEvent(event);
      } catch (e) {
        if (!(e instanceof InputRefusedError)) throw e;
        reply.code(422);
        return send(
          request,
          reply,
          `Case ${provider}/${swapId}`,
          html`<p class="error" id="action-refused">${e.message}</p>`,
        );
      }
      // The projection shows the action once the projector folds it; the case page refreshes itself.
      return reply.redirect(caseHref(provider, swapId), 303);
    },
  );
  return app;
}
