import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FINAL_STATUSES,
  INTERNAL_STATUSES,
  StatusMappingError,
  buildStatusMapping,
  mapStatus,
  statusClassOf,
  statusMappingFromEntries,
} from '../../src/swap/status.ts';

describe('status mapping', () => {
  it('maps the six internal statuses to themselves by default; FINISHED, REFUNDED final, EXPIRED closed', () => {
    const m = buildStatusMapping();
    const classes = Object.fromEntries(INTERNAL_STATUSES.map((s) => [s, mapStatus(m, s)?.statusClass]));
    expect(classes).toEqual({
      FINISHED: 'final',
      REFUNDED: 'final',
      EXPIRED: 'closed',
      ON_HOLD: 'open',
      PENDING: 'open',
      UNKNOWN: 'open',
    });
    for (const s of INTERNAL_STATUSES)
      expect(mapStatus(m, s)).toEqual({
        providerStatus: s,
        status: s,
        statusClass: classes[s],
        final: DEFAULT_FINAL_STATUSES.includes(s),
      });
    expect(mapStatus(m, 'EXPIRED')?.final).toBe(false);
  });

  it('classes: final when the provider says so (EXPIRED included), else EXPIRED is closed, else open', () => {
    expect(statusClassOf('EXPIRED', new Set(['FINISHED']))).toBe('closed');
    expect(statusClassOf('EXPIRED', new Set(['FINISHED', 'EXPIRED']))).toBe('final');
    expect(statusClassOf('REFUNDED', new Set(['FINISHED']))).toBe('open');
    expect(statusClassOf('PENDING', new Set(['PENDING']))).toBe('final');
    expect(mapStatus(buildStatusMapping({}, ['FINISHED', 'EXPIRED']), 'EXPIRED')).toMatchObject({
      statusClass: 'final',
      final: true,
    });
  });

  it('matches exactly: case and spaces count, unknown strings are unmappable', () => {
    const m = buildStatusMapping();
    expect(mapStatus(m, 'finished')).toBeUndefined();
    expect(mapStatus(m, 'FINISHED ')).toBeUndefined();
    expect(mapStatus(m, 'exchanging')).toBeUndefined();
    expect(mapStatus(m, '__proto__')).toBeUndefined();
  });

  it('extends and overrides the defaults per provider, and a null entry removes a default', () => {
    const m = buildStatusMapping({
      finished: 'FINISHED',
      exchanging: 'PENDING',
      UNKNOWN: 'PENDING',
      ON_HOLD: null,
    });
    expect(mapStatus(m, 'finished')).toEqual({
      providerStatus: 'finished',
      status: 'FINISHED',
      statusClass: 'final',
      final: true,
    });
    expect(mapStatus(m, 'exchanging')).toEqual({
      providerStatus: 'exchanging',
      status: 'PENDING',
      statusClass: 'open',
      final: false,
    });
    expect(mapStatus(m, 'UNKNOWN')?.status).toBe('PENDING');
    expect(mapStatus(m, 'ON_HOLD')).toBeUndefined();
  });

  it('decides final from the provider final statuses', () => {
    const m = buildStatusMapping({ failed: 'REFUNDED' }, ['FINISHED']);
    expect(mapStatus(m, 'REFUNDED')).toEqual({
      providerStatus: 'REFUNDED',
      status: 'REFUNDED',
      statusClass: 'open',
      final: false,
    });
    expect(mapStatus(m, 'failed')?.final).toBe(false);
    expect(mapStatus(m, 'FINISHED')?.final).toBe(true);
  });

  it('refuses a mapping to something that is not an internal status, and unknown final statuses', () => {
    expect(() => buildStatusMapping({ done: 'COMPLETED' })).toThrow(StatusMappingError);
    expect(() => buildStatusMapping({ '': 'PENDING' })).toThrow(/empty/);
    expect(() => buildStatusMapping({}, ['DONE'])).toThrow(/final status "DONE"/);
    expect(() => statusMappingFromEntries([['x', 'NOPE']], [])).toThrow(StatusMappingError);
  });

  it('rebuilds the same mapping from stored rows', () => {
    const built = buildStatusMapping({ finished: 'FINISHED', ON_HOLD: null }, ['FINISHED', 'EXPIRED']);
    const stored = statusMappingFromEntries([...built.statuses], [...built.finals]);
    expect([...stored.statuses].sort()).toEqual([...built.statuses].sort());
    expect([...stored.finals].sort()).toEqual(['EXPIRED', 'FINISHED']);
  });
});
