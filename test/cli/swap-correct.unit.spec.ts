import { describe, expect, it } from 'vitest';
import { correctionFlagsProblem } from '../../src/cli/commands/swap.ts';
import { main } from '../../src/cli/main.ts';
import { UsageError, type CliIo } from '../../src/cli/command.ts';
import { asUsage } from '../../src/cli/operator.ts';
import { correctionEvent, OperatorInputError } from '../../src/ops/operator-events.ts';

/** `swap correct` input bounds (issue 13 point 7): refused before any read or append. */
describe('swap correct flags', () => {
  it.each(['FINISHED', 'EXPIRED', 'ON_HOLD', 'PENDING', 'REFUNDED', 'UNKNOWN'])(
    'accepts the internal status %s',
    (status) => {
      expect(correctionFlagsProblem({ status, amount: '1.5' })).toBeUndefined();
    },
  );

  it.each(['DONE', 'FINISHED_', 'CREATED', 'finished', 'A_B'])('refuses the status %s', (status) => {
    expect(correctionFlagsProblem({ status })).toMatch(/is not an internal status \(FINISHED, EXPIRED/);
  });

  it.each([
    ['amount', '1'.repeat(41)],
    ['amount', `0.${'1'.repeat(37)}`],
    ['provider-fee', '-1'],
    ['referral-fee', '1e3'],
    ['payout-network-fee', '1'.repeat(81)],
  ])('refuses --%s %s', (name, value) => {
    expect(correctionFlagsProblem({ [name]: value })).toContain(`--${name} must be a non-negative decimal`);
  });

  it('refuses an unprintable reason or operator name', () => {
    expect(correctionFlagsProblem({ reason: 'typo\u0000' })).toMatch(/--reason contains the unprintable/);
    expect(correctionFlagsProblem({ by: '\u001b[2Jeve' })).toMatch(/--by contains the unprintable/);
  });

  it('a status that contradicts --final exits 2, before any configuration is read or anything appended', async () => {
    const err: string[] = [];
    const out: string[] = [];
    const saved = { ...process.env };
    delete process.env.DATABASE_URL;
    try {
      const code = await main(
        ['swap', 'correct', 'p/s1', '--status', 'PENDING', '--final', 'true', '--reason', 'r', '--by', 'eve'],
        { stdout: (l) => out.push(l), stderr: (l) => err.push(l) },
      );
      expect(code).toBe(2);
    } finally {
      process.env = saved;
    }
    expect(err.join('\n')).toContain(
      '--status PENDING --final true: PENDING is an open status and never final',
    );
    expect(out).toEqual([]);
  });

  it('the command exits 2 with the reason before it reads any configuration', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { stdout: (l) => out.push(l), stderr: (l) => err.push(l) };
    const saved = { ...process.env };
    delete process.env.DATABASE_URL;
    try {
      const code = await main(
        ['swap', 'correct', 's1', '--status', 'DONE', '--final', 'true', '--reason', 'r', '--by', 'eve'],
        io,
      );
      expect(code).toBe(2);
    } finally {
      process.env = saved;
    }
    expect(err.join('\n')).toContain('--status "DONE" is not an internal status');
    expect(err.join('\n')).not.toContain('DATABASE_URL');
    expect(out).toEqual([]);
  });
});

/** Issue 34 point 9: the event factory itself accepts only internal statuses, whoever calls it. */
describe('correctionEvent', () => {
  const base = { swapId: 's-1', providerId: 'p', by: 'ann', reason: 'statement 42', final: 'true' };

  it.each(['DONE', 'CREATED', 'PROCESSING', 'finished', 'ANY_WORD'])('refuses --status %s', (status) => {
    expect(() => correctionEvent({ ...base, status })).toThrow(OperatorInputError);
    expect(() => correctionEvent({ ...base, status })).toThrow(
      `--status "${status}" is not an internal status (FINISHED, EXPIRED, ON_HOLD, PENDING, REFUNDED, UNKNOWN)`,
    );
  });

  it.each([
    ['FINISHED', 'true'],
    ['REFUNDED', 'true'],
    ['EXPIRED', 'true'],
    ['EXPIRED', 'false'],
    ['ON_HOLD', 'false'],
    ['PENDING', 'false'],
    ['UNKNOWN', 'false'],
  ])('accepts %s with --final %s', (status, final) => {
    expect(correctionEvent({ ...base, status, final }).payload).toMatchObject({
      status,
      final: final === 'true',
    });
  });

  it.each([
    ['PENDING', 'true', 'PENDING is an open status and never final'],
    ['ON_HOLD', 'true', 'ON_HOLD is an open status and never final'],
    ['UNKNOWN', 'true', 'UNKNOWN is an open status and never final'],
    ['FINISHED', 'false', 'FINISHED is a final status and never open'],
    ['REFUNDED', 'false', 'REFUNDED is a final status and never open'],
  ])('refuses --status %s --final %s (issue 41 point 11)', (status, final, why) => {
    expect(() => correctionEvent({ ...base, status, final })).toThrow(
      `--status ${status} --final ${final}: ${why}`,
    );
    expect(correctionFlagsProblem({ status, final })).toBe(`--status ${status} --final ${final}: ${why}`);
  });

  it('an operator mistake in the factory is a usage error: exit 2', async () => {
    await expect(asUsage(() => correctionEvent({ ...base, status: 'DONE' }))).rejects.toBeInstanceOf(
      UsageError,
    );
  });
});
