// examples/chat-notifier.mjs: one readable line per non-routine event, nothing for routine ones.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../kit/time.js';
import {
  fixture,
  fixtureNames,
  expectNeedsSecretsAndUrl,
  newKey,
  post,
  signature,
  startExample,
  recorderForFile,
  withFreshInboxTable,
  type Recorder,
} from './helpers.js';

let chat: Recorder;
recorderForFile((recorder) => (chat = recorder));

const ROUTINE = ['app.budget.auto-shutdown.noop', 'app.budget.auto-shutdown.simulated'];

describe('examples/chat-notifier.mjs', () => {
  it('posts exactly one line for every non-routine event of the catalog', async () => {
    const key = newKey();
    const running = await startExample('chat-notifier.mjs', { RACK_WEBHOOK_SECRETS: key, CHAT_WEBHOOK_URL: chat.url });
    const names = fixtureNames().filter((name) => !ROUTINE.includes(name));
    expect(names).toHaveLength(34);
    for (const [index, name] of names.entries()) {
      const { event, body } = fixture(name);
      expect(await post(running.url, body, signature(body, key)), name).toMatchObject({ status: 200, json: { status: 'processed' } });
      expect(chat.requests, name).toHaveLength(index + 1);
      const posted = chat.requests[index]!.body as { text: string };
      expect(Object.keys(posted), name).toEqual(['text']);
      expect(posted.text, name).not.toContain('\n');
      expect(posted.text.startsWith(`[example-rack] ${event.data['app'] ?? event.data['name']}: `), `${name}: ${posted.text}`).toBe(true);
      expect(posted.text, name).not.toContain('undefined');
    }
    expect(running.stdout() + running.stderr()).not.toContain(key);
  });

  it('formats the important actions by hand and the rest from the catalog', async () => {
    const key = newKey();
    const running = await startExample('chat-notifier.mjs', { RACK_WEBHOOK_SECRETS: key, CHAT_WEBHOOK_URL: chat.url });
    const names = [
      'app.budget.auto-shutdown.fired',
      'app.budget.auto-shutdown.failed',
      'app.budget.cap',
      'app.budget.auto-shutdown.cancelled',
      'app.promote.errored',
      'app.create',
      'release.autoscale-disabled',
    ];
    for (const name of names) {
      const { body } = fixture(name);
      expect(await post(running.url, body, signature(body, key))).toMatchObject({ status: 200, json: { status: 'processed' } });
    }
    expect(chat.requests.map((request) => (request.body as { text: string }).text)).toEqual([
      '[example-rack] billing-api: auto-shutdown FIRED (tick tick-2026-04-27T10:30:00Z-9fe533fc297241caa6ca5760dc9b9836)',
      '[example-rack] data-pipeline: auto-shutdown FAILED, services still running (tick tick-2026-04-22T02:00:00Z-1c5abd65dab342e2a27f50d3ab325e4d)',
      '[example-rack] billing-api: monthly budget cap reached',
      '[example-rack] checkout-web: auto-shutdown cancelled: reset-during-armed by ops@example.com (tick tick-2026-04-21T08:15:00Z-e579d7d8bc64481c8e24f6ac533f7ee7)',
      '[example-rack] checkout-web: release RPZXCVBNMAS rollout FAILED: deployment "web" exceeded its progress deadline',
      '[example-rack] billing-api: app:create by ops@example.com: An app was created.',
      '[example-rack] billing-api: release:autoscale-disabled: A service requests autoscale but the rack does not have autoscaler_enable set.',
    ]);
  });

  it('posts nothing for :noop and :simulated, a duplicate or a forgery', async () => {
    const key = newKey();
    const running = await startExample('chat-notifier.mjs', { RACK_WEBHOOK_SECRETS: key, CHAT_WEBHOOK_URL: chat.url });
    for (const name of ROUTINE) {
      const { body } = fixture(name);
      expect(await post(running.url, body, signature(body, key))).toMatchObject({ status: 200, json: { status: 'ignored' } });
    }
    expect(chat.requests).toHaveLength(0);
    const { body } = fixture('app.budget.threshold');
    const sig = signature(body, key);
    expect(await post(running.url, body, sig)).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(await post(running.url, body, sig)).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    expect(await post(running.url, body.replace('billing-api', 'payments-api'), sig)).toMatchObject({
      status: 401,
      json: { error: 'signature_mismatch' },
    });
    expect(chat.requests).toHaveLength(1);
  });

  it('answers 500 when the chat service refuses, and posts on a retry', async () => {
    const key = newKey();
    const running = await startExample('chat-notifier.mjs', { RACK_WEBHOOK_SECRETS: key, CHAT_WEBHOOK_URL: chat.url });
    const { body } = fixture('app.budget.auto-shutdown.fired');
    const sig = signature(body, key);
    chat.failNext(503);
    expect(await post(running.url, body, sig)).toMatchObject({ status: 500, json: { error: 'handler_failed' } });
    expect(await post(running.url, body, sig)).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(chat.requests).toHaveLength(2);
  });

  it('exits 1 with a one-line message without RACK_WEBHOOK_SECRETS or CHAT_WEBHOOK_URL', async () => {
    await expectNeedsSecretsAndUrl('chat-notifier.mjs', 'CHAT_WEBHOOK_URL', chat.url);
  });

  it('with DATABASE_URL: posts the inbox alerts as lines (a rack that stopped signing)', async () => {
    await withFreshInboxTable(async (database) => {
      const running = await startExample('chat-notifier.mjs', {
        RACK_WEBHOOK_SECRETS: newKey(),
        CHAT_WEBHOOK_URL: chat.url,
        DATABASE_URL: database.url,
        INBOX_TABLE: database.table,
        ALERT_INTERVAL_MS: '200',
      });
      const body = fixture('app.budget.cap').body;
      for (let i = 0; i < 11; i++) expect((await post(running.url, body, undefined)).status).toBe(401);
      const lines = () => chat.requests.map((request) => (request.body as { text: string }).text);
      await waitFor(
        () => lines().length === 1,
        30_000,
        () => `lines: ${JSON.stringify(lines())}`,
      );
      expect(lines()[0]).toMatch(
        /^\[rack-webhooks\] CRITICAL: 11 deliveries refused with missing_header in the last 5 min \(bound 10\) on \S+: requests arrive unsigned/,
      );
      expect(await running.stop()).toEqual({ code: 0, signal: null });
    });
  }, 90_000);
});
