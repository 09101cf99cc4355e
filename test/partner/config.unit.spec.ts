import { describe, expect, it } from 'vitest';
import { PartnerClient, PartnerConfigError, parsePartnerClientConfig } from '../../src/partner/index.ts';

describe('parsePartnerClientConfig', () => {
  it('reads a provider section into client options', () => {
    const cfg = parsePartnerClientConfig({
      provider: 'changelly',
      baseUrl: 'https://partner.example/api/',
      headers: { 'X-Api-Key': 'secret', 'X-Api-Signature': 'sig' },
      timeouts: { readMs: 5000, swapMs: 20000 },
      retry: { maxAttempts: 3, baseDelayMs: 100 },
      pageLimit: 200,
    });
    expect(cfg).toEqual({
      provider: 'changelly',
      baseUrl: 'https://partner.example/api',
      headers: { 'x-api-key': 'secret', 'x-api-signature': 'sig' },
      timeouts: { readMs: 5000, swapMs: 20000 },
      retry: { maxAttempts: 3, baseDelayMs: 100 },
      pageLimit: 200,
    });
    expect(new PartnerClient({ ...cfg, payloadKeys: [] }).provider).toBe('changelly');
  });

  it('reports every problem at once and never echoes header values', () => {
    let error: PartnerConfigError | undefined;
    try {
      parsePartnerClientConfig(
        {
          baseUrl: 'ftp://x',
          headers: { 'bad name': 'v', 'Content-Type': 'x', 'X-Key': 'top-secret\r\nInjected: 1' },
          timeouts: { readMs: 0 },
          retry: { maxAttempts: 0 },
          pageLimit: 1.5,
          extra: true,
        },
        'providers.p1',
      );
    } catch (e) {
      error = e as PartnerConfigError;
    }
    expect(error).toBeInstanceOf(PartnerConfigError);
    expect(error!.problems).toEqual([
      'providers.p1.provider: must be a non-empty string',
      'providers.p1.baseUrl: must use http or https',
      'providers.p1.headers: "bad name" is not a header name',
      'providers.p1.headers: Content-Type is set by the client',
      'providers.p1.headers.X-Key: must be a one-line string',
      'providers.p1.timeouts.readMs: must be a whole number >= 1',
      'providers.p1.retry.maxAttempts: must be a whole number >= 1',
      'providers.p1.pageLimit: must be a whole number >= 1',
      'providers.p1.extra: unknown key',
    ]);
    expect(error!.message).not.toContain('top-secret');
  });
});
