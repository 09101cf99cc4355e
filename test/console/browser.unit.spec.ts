import { describe, expect, it } from 'vitest';
import { launchChromium } from './browser.ts';

describe('the browser tests without Chromium', () => {
  it('fail at once, naming the Debian package to install', async () => {
    await expect(launchChromium('/tmp/unused-profile', '/nonexistent/chromium')).rejects.toThrow(
      /no Chromium at \/nonexistent\/chromium: install the Debian package "chromium" \(apt-get install -y chromium\)/,
    );
  });
});
