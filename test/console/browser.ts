import { existsSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's package; CI installs it (.ci/run). CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A real headless Chromium with a fresh profile; fails naming the package when none is installed. */
export async function launchChromium(
  profileDir: string,
  executablePath = CHROMIUM_PATH,
): Promise<BrowserContext> {
  if (!existsSync(executablePath))
    throw new Error(
      `no Chromium at ${executablePath}: install the Debian package "chromium" (apt-get install -y chromium), or set CHROMIUM_PATH`,
    );
  // A persistent context is how Playwright takes --user-data-dir (a fresh folder per run).
  return chromium.launchPersistentContext(profileDir, {
    executablePath,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
