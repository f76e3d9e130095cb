/**
 * The console's gaps view in Chromium: the scheduled reconcile's gaps with their proof (route,
 * field, value), when sent and first seen, and a recorded one's link to its delivery, whose page
 * shows its handler runs; the log gaps with the deliveries that imply them. Takes
 * console-gaps.png (see browser.test.ts for where screenshots go).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUp } from '../kit/setup.js';
import { launchBrowser, type Browser } from './browser.js';
import { ROOT } from './console-fixture.js';
import { openGapsFixture, type GapsFixture } from './gaps-fixture.js';

setUp({ testTimeoutMs: 60_000, hookTimeoutMs: 120_000, pglite: false });

const SCREENSHOTS = process.env['RACK_WEBHOOKS_SCREENSHOTS'] === 'docs' ? join(ROOT, 'docs') : join(ROOT, '.tmp', 'screenshots');

let gaps: GapsFixture;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  gaps = await openGapsFixture({ assetsDirectory: join(ROOT, 'dist', 'console') });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  await page.goto(gaps.fixture.console.url);
  mkdirSync(SCREENSHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await gaps?.close();
});

describe('the gaps view in Chromium', () => {
  it('lists the reconcile gaps with their proof and the log gaps with their deliveries', async () => {
    await page.getByRole('link', { name: 'Gaps', exact: true }).click();
    expect(page.url()).toMatch(/#\/gaps$/);
    const reconcileRows = page.getByTestId('reconcile-gap-row');
    await expect.poll(() => reconcileRows.count()).toBe(2);
    const release = page.locator(`[data-testid="reconcile-gap-row"][data-key="reconcile_gap:web:release:create:${gaps.releaseId}"]`);
    expect(await release.getByTestId('gap-proof').textContent()).toBe(`GET /apps/web/releases?limit=50 id=${gaps.releaseId}`);
    expect(await release.textContent()).toContain('not recorded');
    expect(await release.locator('time').count()).toBe(2); // sent, first seen
    const armed = page.locator(
      `[data-testid="reconcile-gap-row"][data-key="reconcile_gap:web:app:budget:auto-shutdown:armed:${gaps.tick}"]`,
    );
    expect(await armed.getByTestId('gap-proof').textContent()).toMatch(
      /^GET \/apps\/web\/budget\/shutdown-state armedNotificationFiredAt=\d{4}-/,
    );
    expect(await armed.getByTestId('gap-recorded').getAttribute('href')).toBe(`#/deliveries/${gaps.recordedId}`);
    expect(await page.getByTestId('reconcile-summary').textContent()).toBe(
      "2 events the rack's API proves it sent, found by the scheduled reconcile.",
    );
    expect(await page.getByTestId('reconcile-problem').count()).toBe(0);

    const logRows = page.getByTestId('log-gap-row');
    expect(await logRows.count()).toBe(1);
    expect(await logRows.first().getAttribute('data-key')).toBe(`log_gap:web:release:create:${gaps.releaseId}`);
    expect(await logRows.first().getByTestId('gap-evidence').getAttribute('href')).toBe(`#/deliveries/${gaps.buildDeliveryId}`);
    expect(await page.getByRole('link', { name: 'Gaps', exact: true }).getAttribute('aria-current')).toBe('page');
    await page.screenshot({ path: join(SCREENSHOTS, 'console-gaps.png'), fullPage: true });
  });

  it("opens a recorded gap's delivery, where its handler runs show", async () => {
    await page.getByTestId('gap-recorded').click();
    expect(page.url()).toMatch(new RegExp(`#/deliveries/${gaps.recordedId}$`));
    await expect.poll(() => page.getByTestId('event-json').isVisible()).toBe(true);
    expect(JSON.parse((await page.getByTestId('event-json').textContent())!)).toMatchObject({ action: 'app:create' });
    expect(pageErrors).toEqual([]);
  });
});
