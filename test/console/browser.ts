/**
 * Debian's Chromium driven by playwright-core: never a downloaded browser. .ci/run installs the
 * package when it is missing; a machine without it fails the browser tests (CI allows no skip).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env['RACK_WEBHOOKS_CHROMIUM'] ?? '/usr/bin/chromium';

export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile, removed on close. */
export async function launchBrowser(options: { colorScheme?: 'light' | 'dark' } = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set RACK_WEBHOOKS_CHROMIUM)`);
  const profile = mkdtempSync(join(tmpdir(), 'rack-webhooks-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', ...CHROMIUM_FLAGS],
    viewport: { width: 1280, height: 800 },
    colorScheme: options.colorScheme ?? 'light',
    timeout: 30_000,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
