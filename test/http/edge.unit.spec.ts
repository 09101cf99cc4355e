import type { FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildEdgeServer, OPS_PATHS } from '../../src/http/edge.ts';
import { createLogger } from '../../src/observability/log.ts';

// The kit answers in the edge's own words and keeps the edge's reason: one edge built on it, with words of its own.
const reasons: string[] = [];
function edge() {
  const app = buildEdgeServer({
    logger: createLogger({ level: 'silent' }),
    bodyLimitBytes: 64,
    noteReason: (_request: FastifyRequest, reason: string) => reasons.push(reason),
    refusals: {
      invalid: (detail) => ({ error: `bad: ${detail}`, reason: 'r-invalid' }),
      tooLarge: { error: 'too big', reason: 'r-large' },
      client: (error) => ({ error: `client ${error.statusCode}`, reason: 'r-client' }),
      internal: { error: 'oops', reason: 'r-internal', log: 'edge failed' },
      notFound: { error: 'nothing here', reason: 'r-none' },
    },
  });
  app.post(
    '/thing',
    {
      schema: { body: { type: 'object', required: ['amount'], properties: { amount: { type: 'string' } } } },
    },
    async (request) => request.body,
  );
  app.get('/boom', async () => {
    throw new Error('kaput');
  });
  return app;
}

describe('the edge kit', () => {
  afterEach(() => {
    reasons.length = 0;
  });

  it("answers the operator's paths 404 before any route or hook of the edge", async () => {
    const app = edge();
    app.addHook('onRequest', async (_request, reply) => reply.code(401).send({ error: 'unauthorized' }));
    for (const path of [...OPS_PATHS, '/metrics?x=1']) {
      const res = await app.inject({ method: 'GET', url: path });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'nothing here' });
    }
    expect(reasons).toEqual(['r-none', 'r-none', 'r-none', 'r-none']);
  });

  it('refuses a JSON body that repeats a key, at any depth, with 400 naming it (issue 41 point 11)', async () => {
    const app = edge();
    const call = (payload: string) =>
      app.inject({ method: 'POST', url: '/thing', headers: { 'content-type': 'application/json' }, payload });
    const top = await call('{"amount":"1","amount":"2"}');
    expect([top.statusCode, top.json()]).toEqual([400, { error: 'client 400' }]);
    const deep = await call('{"amount":"1","x":[{"k":1,"k":2}]}');
    expect(deep.statusCode).toBe(400);
    expect(reasons).toEqual(['r-client', 'r-client']);
    const fine = await call('{"amount":"1","x":[{"k":1},{"k":2}]}');
    expect([fine.statusCode, fine.json()]).toEqual([200, { amount: '1', x: [{ k: 1 }, { k: 2 }] }]);
  });

  it('never coerces: a number where a string belongs is a 400 in the edge words', async () => {
    const res = await edge().inject({ method: 'POST', url: '/thing', payload: { amount: 1.5 } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/^bad: body\/amount must be string/);
    expect(reasons).toEqual(['r-invalid']);
  });

  it('maps a body over the limit, bad JSON, an unknown route and a failure to the edge words', async () => {
    const app = edge();
    const large = await app.inject({ method: 'POST', url: '/thing', payload: { amount: 'x'.repeat(100) } });
    expect([large.statusCode, large.json()]).toEqual([413, { error: 'too big' }]);
    const json = await app.inject({
      method: 'POST',
      url: '/thing',
      headers: { 'content-type': 'application/json' },
      payload: '{',
    });
    expect([json.statusCode, json.json()]).toEqual([400, { error: 'client 400' }]);
    const none = await app.inject({ method: 'GET', url: '/nope' });
    expect([none.statusCode, none.json()]).toEqual([404, { error: 'nothing here' }]);
    const boom = await app.inject({ method: 'GET', url: '/boom' });
    expect([boom.statusCode, boom.json()]).toEqual([500, { error: 'oops' }]);
    expect(reasons).toEqual(['r-large', 'r-client', 'r-none', 'r-internal']);
  });
});
