import type { IncomingMessage, ServerResponse } from 'node:http';
import { isDecimalText, parseDecimal, type Decimal } from '../money/decimal.ts';
import type { PartnerOperation } from '../partner/types.ts';
import type { CallFault } from './faults.ts';
import type { PartnerSimulatorOptions, SimCall } from './types.ts';

/** The simulator's HTTP edge: routes, reading a request, answering, and the request-field readers. */

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Raw text instead of JSON. */
  raw?: { text: string; contentType: string };
}

/** Thrown by handlers to answer with an error. */
export class Answer extends Error {
  constructor(readonly reply: Reply) {
    super(`HTTP ${reply.status}`);
  }
}

export function apiError(
  status: number,
  messageKey: string,
  message: string,
  additionalFields?: Record<string, unknown>,
): Answer {
  return new Answer({
    status,
    body: { messageKey, message, ...(additionalFields ? { additionalFields } : {}) },
  });
}

const ROUTES: Readonly<Record<string, readonly [string, PartnerOperation]>> = {
  '/currencies': ['GET', 'currencies'],
  '/pairs': ['GET', 'pairs'],
  '/quote': ['POST', 'quote'],
  '/swap/fixed': ['POST', 'swap-fixed'],
  '/swap/float': ['POST', 'swap-float'],
  '/status': ['GET', 'status'],
};

/** What the HTTP edge needs from the simulator behind it. */
export interface CallHandler {
  readonly options: PartnerSimulatorOptions;
  takeFault(operation: PartnerOperation, swapId: string | undefined): CallFault | undefined;
  record(call: SimCall): void;
  answer(
    operation: PartnerOperation,
    query: Record<string, string>,
    body: unknown,
    fault: CallFault | undefined,
  ): Promise<Reply | 'dropped'>;
}

export async function handleCall(
  req: IncomingMessage,
  res: ServerResponse,
  handler: CallHandler,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://simulator');
  const route = ROUTES[url.pathname];
  if (!route) return send(res, { status: 404, body: { message: `no route ${url.pathname}` } });
  const [method, operation] = route;
  if (req.method !== method) return send(res, { status: 405, body: { code: 405, message: `use ${method}` } });
  let body: unknown;
  try {
    body = await readJson(req);
  } catch (e) {
    return send(res, {
      status: 400,
      body: { messageKey: 'INVALID_REQUEST_ERROR', message: (e as Error).message },
    });
  }
  const query = Object.fromEntries(url.searchParams);
  // Auth first, so a refused call does not use up an injected fault.
  const unauthorized = Object.entries(handler.options.requiredHeaders ?? {}).some(
    ([name, value]) => req.headers[name.toLowerCase()] !== value,
  );
  const fault = unauthorized ? undefined : handler.takeFault(operation, query.swapId);
  const call: SimCall = {
    operation,
    method,
    path: url.pathname,
    query,
    headers: { ...req.headers },
    body,
    ...(fault ? { fault } : {}),
  };
  handler.record(call);
  let reply: Reply | 'dropped';
  try {
    reply = unauthorized
      ? { status: 401, body: { code: 401, message: 'unauthorized' } }
      : await handler.answer(operation, query, body, fault);
  } catch (e) {
    // A misconfigured fault must answer, not crash the process that hosts the simulator.
    reply = { status: 500, body: { code: 500, message: `simulator: ${(e as Error).message}` } };
  }
  if (reply === 'dropped') {
    req.socket.destroy();
    handler.options.log?.(`${method} ${url.pathname} -> dropped`);
    return;
  }
  call.status = reply.status;
  handler.options.log?.(
    `${method} ${url.pathname}${url.search} -> ${reply.status}${fault ? ` (fault ${fault.kind})` : ''}`,
  );
  if (!res.destroyed) send(res, reply);
}

function send(res: ServerResponse, reply: Reply): void {
  const text = reply.raw ? reply.raw.text : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    'content-type': reply.raw ? reply.raw.contentType : 'application/json',
    'content-length': Buffer.byteLength(text),
    ...reply.headers,
  });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 1024 * 1024) throw new Error('body too large');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error('body is not JSON');
  }
}

export function requestObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw apiError(400, 'INVALID_REQUEST_ERROR', 'body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

export function text(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  if (typeof v !== 'string' || v.trim() === '')
    throw apiError(400, 'INVALID_REQUEST_ERROR', `${key} is required`);
  return v;
}

export function optionalText(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  return typeof v === 'string' ? v : '';
}

export function amountOf(body: Record<string, unknown>, key: string): Decimal {
  const v = body[key];
  if (!isDecimalText(v) || !parseDecimal(v).gt(0)) {
    throw apiError(400, 'INVALID_REQUEST_ERROR', `${key} must be a positive decimal string`);
  }
  return parseDecimal(v);
}
