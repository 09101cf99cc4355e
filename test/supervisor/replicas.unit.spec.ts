import { describe, expect, it } from 'vitest';
import { replicaInstances, replicaPorts } from '../../src/supervisor/replicas.ts';

const workers = [
  { name: 'projector', args: ['projector', 'run'], port: 9400, url: 'http://127.0.0.1:9400' },
  { name: 'reconciler', args: ['reconciler', 'run'], port: 9401, url: 'http://127.0.0.1:9401' },
  // The gateway (9403) is not started: the poller keeps its place in the numbering.
  { name: 'webhook', args: ['webhook', 'serve'], port: 9402, url: 'http://127.0.0.1:9402' },
  { name: 'poller', args: ['poller', 'run'], port: 9404, url: 'http://127.0.0.1:9404' },
];

describe('up --replicas', () => {
  it('one instance: names and ports as ever', async () => {
    const one = await replicaInstances(workers, 1, { port: 9400, host: '127.0.0.1' });
    expect(one.map((w) => [w.name, w.port, w.replica])).toEqual([
      ['projector', 9400, 0],
      ['reconciler', 9401, 0],
      ['webhook', 9402, 0],
      ['poller', 9404, 0],
    ]);
  });

  it('N instances: numbered names, METRICS_PORT + i*N + r, none shared', async () => {
    const three = await replicaInstances(workers, 3, { port: 9400, host: '127.0.0.1' });
    expect(three.map((w) => `${w.name}@${w.port}`)).toEqual([
      'projector-1@9400',
      'projector-2@9401',
      'projector-3@9402',
      'reconciler-1@9403',
      'reconciler-2@9404',
      'reconciler-3@9405',
      'webhook-1@9406',
      'webhook-2@9407',
      'webhook-3@9408',
      'poller-1@9412',
      'poller-2@9413',
      'poller-3@9414',
    ]);
    expect(three[4]!.url).toBe('http://127.0.0.1:9404');
    expect(three[4]!.args).toEqual(['reconciler', 'run']);
  });

  it('without METRICS_PORT: free ports, all distinct', async () => {
    const free = workers.map((w, i) => ({ ...w, port: 40_000 + i, url: `http://127.0.0.1:${40_000 + i}` }));
    const two = await replicaInstances(free, 2, { port: 0, host: '127.0.0.1' });
    expect(two).toHaveLength(8);
    expect(new Set(two.map((w) => w.port)).size).toBe(8);
    expect(two[0]!.port).toBe(40_000);
  });

  it('webhook and gateway ports: consecutive when configured, free when not; past 65535 refused', async () => {
    expect(await replicaPorts(8080, true, 3, 'WEBHOOK_PORT')).toEqual([8080, 8081, 8082]);
    const free = await replicaPorts(45_000, false, 3, 'WEBHOOK_PORT');
    expect(free[0]).toBe(45_000);
    expect(new Set(free).size).toBe(3);
    await expect(replicaPorts(65_535, true, 2, 'GATEWAY_PORT')).rejects.toThrow(
      /GATEWAY_PORT 65535 \+ 1 is past 65535/,
    );
  });
});
