import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FINAL_STATUSES,
  INTERNAL_STATUSES,
  StatusMappingError,
  buildStatusMapping,
  mapStatus,
  statusMappingFromEntries,
} from '../../src/swap/status.ts';

describe('status mapping', () => {
  it('maps the six internal statuses to themselves by default; FINISHED, REFUNDED, EXPIRED are final', () => {
    const m = buildStatusMapping();
    for (const s of INTERNAL_STATUSES)
      expect(mapStatus(m, s)).toEqual({
        providerStatus: s,
        status: s,
        final: DEFAULT_FINAL_STATUSES.includes(s),
      });
    expect(mapStatus(m, 'FINISHED')?.final).toBe(true);
    expect(mapStatus(m, 'ON_HOLD')?.final).toBe(false);
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
    expect(mapStatus(m, 'finished')).toEqual({ providerStatus: 'finished', status: 'FINISHED', final: true });
    expect(mapStatus(m, 'exchanging')).toEqual({
      providerStatus: 'exchanging',
      status: 'PENDING',
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
