import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/command.ts';
import { runSimulator, simulatorOptionsFromArgs } from '../../src/cli/commands/sim.ts';

describe('swap-ledger sim', () => {
  it('parses the options humans give it', () => {
    const o = simulatorOptionsFromArgs([
      '--port',
      '0',
      '--curve',
      'secp256r1',
      '--webhook-url',
      'http://127.0.0.1:8080',
      '--webhook-key',
      'k',
      '--progress',
      '2000',
      '--random',
      '--seed',
      '9',
      '--page-size',
      '5',
      '--header',
      'X-Partner-Key: abc',
    ]);
    expect(o).toMatchObject({
      host: '127.0.0.1',
      port: 0,
      curve: 'secp256r1',
      webhook: { url: 'http://127.0.0.1:8080', apiKey: 'k' },
      progression: { advanceOn: { everyMs: 2000 }, random: true, seed: 9 },
      defaultPageSize: 5,
      requiredHeaders: { 'x-partner-key': 'abc' },
    });
    expect(simulatorOptionsFromArgs([]).progression).toEqual({ advanceOn: 'manual' });
    expect(simulatorOptionsFromArgs(['--progress', 'poll']).progression).toEqual({ advanceOn: 'poll' });
  });

  it.each([
    [['--curve', 'ed25519']],
    [['--port', '70000']],
    [['--webhook-url', 'http://127.0.0.1:1']],
    [['--webhook-url', 'nope', '--webhook-key', 'k']],
    [['--progress', 'sometimes']],
    [['--signature-field', 'sig']],
    [['--header', 'no-colon']],
    [['--bogus']],
    [['extra']],
  ])('refuses %j', (args) => {
    expect(() => simulatorOptionsFromArgs(args)).toThrow(UsageError);
  });

  it('serves until told to stop and prints where', async () => {
    const out: string[] = [];
    let served = 0;
    const code = await runSimulator(
      ['--port', '0', '--quiet'],
      { stdout: (l) => out.push(l), stderr: () => {} },
      async (sim) => {
        const res = await fetch(`${sim.url}/currencies?limit=2`);
        served = res.status;
      },
    );
    expect(code).toBe(0);
    expect(served).toBe(200);
    expect(out[0]).toMatch(/^partner simulator listening on http:\/\/127\.0\.0\.1:\d+ /);
    expect(out[1]).toMatch(/secp256k1 \(ES256K\) public 04[0-9a-f]{128}$/);
  });
});
