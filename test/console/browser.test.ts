/**
 * The console end to end, as on-call uses it: the printed URL opened in a real Chromium, the
 * rack emulator's deliveries appearing without a reload, filters, one delivery, a dead one retried
 * and turning done, a replay, an app's timeline, and "retry all dead". Takes the screenshots the
 * docs/console.md shows: into .tmp/screenshots, or docs/console-*.png with RACK_WEBHOOKS_SCREENSHOTS=docs.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRackEmulator } from '../../src/testing/emulator.js';
import { createTestEvent } from '../../src/testing/test-event.js';
import { POSTGRES_URL } from '../inbox/databases.js';
import { launchBrowser, type Browser } from './browser.js';
import { eventually, openConsoleFixture, ROOT, type ConsoleFixture } from './console-fixture.js';
import { killConsoles, startConsoleProcess, type ConsoleProcess } from './console-process.js';
import { FAILING_ACTION, scenario } from './scenario.js';

// docs/console-*.png only when asked (RACK_WEBHOOKS_SCREENSHOTS=docs): a test run must not rewrite tracked files.
const SCREENSHOTS = process.env['RACK_WEBHOOKS_SCREENSHOTS'] === 'docs' ? join(ROOT, 'docs') : join(ROOT, '.tmp', 'screenshots');

let fixture: ConsoleFixture;
let consoleProcess: ConsoleProcess;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
const foreignRequests: string[] = [];
/** Requests to the console itself: proof that the checks below had a page to watch. */
const consoleRequests: string[] = [];

async function dispatchScenario(): Promise<void> {
  const rack = createRackEmulator({ webhooks: { console: fixture.receiverUrl }, signingKeys: fixture.key, log: () => {} });
  for (const { name, event } of scenario()) {
    const [result] = await rack.dispatch(event);
    expect(result?.status, name).toBe(200);
  }
}

const rows = () => page.getByTestId('delivery-row');

beforeAll(async () => {
  fixture = await openConsoleFixture();
  fixture.failing.add(FAILING_ACTION);
  consoleProcess = await startConsoleProcess(['--database', POSTGRES_URL, '--table', fixture.db.table]);
  browser = await launchBrowser();
  page = await browser.context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  page.on('request', (request) => {
    if (request.url().startsWith(consoleProcess.origin)) consoleRequests.push(request.url());
    else if (!request.url().startsWith('data:')) foreignRequests.push(request.url());
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await consoleProcess?.stop();
  killConsoles();
  await fixture?.close();
});

describe('the console in Chromium', () => {
  it('answers 401 without the token', async () => {
    const response = await page.goto(`${consoleProcess.origin}/`);
    expect(response?.status()).toBe(401);
    expect(await page.textContent('body')).toContain('Open the URL the console printed');
    pageErrors.length = 0; // the browser logs the 401 itself
  });

  it('opens the printed URL, drops the token from the address bar, and shows deliveries as they arrive', async () => {
    await page.goto(consoleProcess.url);
    expect(page.url()).toBe(`${consoleProcess.origin}/rack-webhooks-console/`);
    await expect.poll(() => page.getByText(/live/i).first().isVisible()).toBe(true);
    expect(await rows().count()).toBe(0);
    // No worker yet: the header says so plainly.
    await expect.poll(() => page.getByTestId('header-workers').textContent()).toBe('no worker');
    await dispatchScenario();
    fixture.startWorker();
    // The header looks at the heartbeats every 5 s.
    await expect.poll(() => page.getByTestId('header-workers').textContent(), { timeout: 15_000 }).toBe('1 worker');
    // No reload: the stream tells the page, which fetches the rows.
    await expect.poll(() => rows().count(), { timeout: 15_000 }).toBe(10);
    await eventually(async () => (await fixture.inbox.stats()).dead === 1, 'the failing delivery to be dead');
    await expect.poll(() => page.locator('[data-testid="delivery-row"][data-state="dead"]').count(), { timeout: 15_000 }).toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'console-deliveries.png') });
  }, 60_000);

  it('filters by app, state and action pattern', async () => {
    await page.locator('#filter-app').fill('orders-api');
    await page.locator('#filter-app').press('Enter');
    await expect.poll(() => rows().count()).toBe(2);
    await page.locator('#filter-app').fill('');
    await page.locator('#filter-state').selectOption('dead');
    await page
      .locator('#filter-state')
      .press('Enter')
      .catch(() => {});
    await page.locator('#filter-action').fill('app:budget:auto-shutdown:*');
    await page.locator('#filter-action').press('Enter');
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().first().getAttribute('data-state')).toBe('dead');
    expect(page.url()).toContain('state=dead');
  });

  it('opens a dead delivery: the event, the verification facts and the failed attempt', async () => {
    await rows().first().getByRole('link').first().click();
    await expect.poll(() => page.getByTestId('event-json').isVisible()).toBe(true);
    const json = await page.getByTestId('event-json').textContent();
    expect(JSON.parse(json!)).toMatchObject({ action: FAILING_ACTION, data: { app: 'billing-api' } });
    const verification = await page.getByTestId('verification').textContent();
    expect(verification).toMatch(/secret/i);
    expect(verification).toMatch(/[+-]\d+\.\d{3} s/);
    expect(await page.getByTestId('attempt-row').count()).toBe(1);
    expect(await page.getByTestId('attempt-row').first().textContent()).toContain(`pager unreachable for ${FAILING_ACTION}`);
    expect(await page.getByTestId('delivery-state').textContent()).toMatch(/dead/);
    expect(await page.getByRole('button', { name: 'Replay' }).isDisabled()).toBe(true);
    // A worker is attached: no warning next to the buttons.
    expect(await page.getByTestId('no-worker').isHidden()).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'console-delivery.png'), fullPage: true });
  });

  it('retries the dead delivery and shows it turn done', async () => {
    fixture.failing.delete(FAILING_ACTION);
    await clickWithConfirm(page, 'Retry');
    await expect.poll(() => page.getByTestId('delivery-state').textContent(), { timeout: 15_000 }).toMatch(/done/);
    await expect.poll(() => page.getByTestId('attempt-row').count()).toBe(2);
  });

  it('replays it: it runs once more and is done again', async () => {
    await clickWithConfirm(page, 'Replay');
    await expect.poll(() => page.getByTestId('attempt-row').count(), { timeout: 15_000 }).toBe(3);
    await expect.poll(() => page.getByTestId('delivery-state').textContent(), { timeout: 15_000 }).toMatch(/done/);
    const id = page.url().split('/').pop()!;
    expect((await fixture.inbox.get(id))?.replayedAt).not.toBeNull();
  });

  it("draws an app's timeline, with the anomaly marked", async () => {
    await page.goto(`${consoleProcess.origin}/rack-webhooks-console/#/apps`);
    await page.getByRole('link', { name: 'billing-api' }).first().click();
    await expect.poll(() => page.getByTestId('timeline').isVisible()).toBe(true);
    expect(await page.getByTestId('timeline-event').count()).toBe(7);
    expect(await page.textContent('body')).toContain('shutdown-failed');
    await page.screenshot({ path: join(SCREENSHOTS, 'console-app.png'), fullPage: true });
    await page.goto(`${consoleProcess.origin}/rack-webhooks-console/#/apps/orders-api`);
    await expect.poll(() => page.getByTestId('timeline-anomaly').count()).toBe(1);
    expect(await page.getByTestId('anomaly').first().textContent()).toContain('without :armed');
  });

  it('counts by state and retries every dead delivery from the stats view', async () => {
    fixture.failing.add('app:budget:reset');
    await fixture.send(createTestEvent('app:budget:reset', { data: { app: 'billing-api' } }));
    await eventually(async () => (await fixture.inbox.stats()).dead === 1, 'a dead delivery');
    fixture.failing.clear();
    await page.goto(`${consoleProcess.origin}/rack-webhooks-console/#/stats`);
    await expect.poll(() => page.getByTestId('worker').count()).toBe(1);
    expect(await page.getByTestId('worker').first().getAttribute('data-live')).toBe('true');
    // With no worker attached, the page says so next to the button, and after the move.
    await fixture.stopWorkers();
    await expect.poll(() => page.getByTestId('header-workers').textContent(), { timeout: 15_000 }).toBe('no worker');
    await expect.poll(() => page.getByTestId('no-worker').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.getByTestId('no-worker').textContent()).toBe(
      'No worker is running: a retried or replayed delivery waits until one starts.',
    );
    await clickWithConfirm(page, 'Retry all dead');
    await expect
      .poll(() => page.getByTestId('action-status').textContent())
      .toBe('moved 1 delivery; no worker is running, it will run when one starts');
    expect((await fixture.inbox.stats()).pending).toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'console-stats.png'), fullPage: true });
    fixture.startWorker();
    await eventually(
      async () => (await fixture.inbox.stats()).dead === 0 && (await fixture.inbox.stats()).pending === 0,
      'no dead delivery left',
    );
    await expect.poll(() => page.getByTestId('header-workers').textContent(), { timeout: 15_000 }).toBe('1 worker');
    await expect.poll(() => page.getByTestId('no-worker').isHidden()).toBe(true);
  }, 60_000);

  it('made no request to another host and logged no error', async () => {
    // Every view is opened here too, so that run alone (vitest -t) it still has requests to judge.
    const before = consoleRequests.length;
    await page.goto(consoleProcess.url);
    for (const view of ['#/deliveries', '#/apps', '#/gaps', '#/stats']) {
      await page.goto(`${consoleProcess.origin}/rack-webhooks-console/${view}`);
      await expect.poll(() => page.locator('main').isVisible()).toBe(true);
    }
    expect(consoleRequests.length).toBeGreaterThan(before);
    expect(consoleRequests.some((url) => url.includes('/api/'))).toBe(true);
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});

/** A button and, when the page asks, its confirmation. */
async function clickWithConfirm(target: Page, name: string): Promise<void> {
  await target.getByRole('button', { name, exact: true }).click();
  const confirm = target.getByRole('button', { name: /^Confirm/ });
  if (await confirm.isVisible().catch(() => false)) await confirm.click();
}
