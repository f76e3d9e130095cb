// examples/oncall-pager.mjs: pages when an app's auto-shutdown phase becomes shut down or shutdown
// failed (transitions of the rack state, not raw events) and on cap crossings; a failed page can be retried.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../kit/time.js';
import {
  fixture,
  expectNeedsSecretsAndUrl,
  newKey,
  post,
  signature,
  startExample,
  recorderForFile,
  startRecorder,
  withFreshInboxTable,
  type Recorder,
} from './helpers.js';

let pager: Recorder;
recorderForFile((recorder) => (pager = recorder));

const FIRED = fixture('app.budget.auto-shutdown.fired');
const FAILED = fixture('app.budget.auto-shutdown.failed');
const CAP = fixture('app.budget.cap');
const ARMED = fixture('app.budget.auto-shutdown.armed');
const RESTORED = fixture('app.budget.auto-shutdown.restored');
const DISMISSED = fixture('app.budget.auto-shutdown.dismissed');

/** A signature timestamp 10 s before now: a copy re-signed by a proxy or a manual re-send. */
const earlier = () => Math.floor(Date.now() / 1000) - 10;

/** The same event with other data, e.g. another tick (data keys left undefined are dropped). */
function variant(event: typeof FIRED.event, changes: { timestamp?: string; data: Record<string, string | undefined> }): string {
  return JSON.stringify({ ...event, timestamp: changes.timestamp ?? event.timestamp, data: { ...event.data, ...changes.data } });
}

const pages = () =>
  pager.requests.map((request) => [(request.body as { action: string }).action, (request.body as { dedup_key: string }).dedup_key]);

describe('examples/oncall-pager.mjs', () => {
  it('pages fired, failed and cap once each, with the fields the pager needs', async () => {
    const key = newKey();
    const running = await startExample('oncall-pager.mjs', { RACK_WEBHOOK_SECRETS: key, PAGER_URL: pager.url });

    const fired = signature(FIRED.body, key);
    expect(await post(running.url, FIRED.body, fired)).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(pager.requests).toHaveLength(1); // the page is sent before the rack gets its answer
    expect(await post(running.url, FAILED.body, signature(FAILED.body, key))).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(await post(running.url, CAP.body, signature(CAP.body, key))).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(await post(running.url, FIRED.body, fired)).toMatchObject({ status: 200, json: { status: 'duplicate' } });

    expect(pager.requests.map((request) => [request.method, request.headers['content-type']])).toEqual([
      ['POST', 'application/json'],
      ['POST', 'application/json'],
      ['POST', 'application/json'],
    ]);
    expect(pager.requests.map((request) => request.body)).toEqual([
      {
        summary: '[example-rack] billing-api: budget auto-shutdown FIRED, services scaled to zero (spend $103.90 of $100 cap)',
        severity: 'critical',
        source: 'example-rack',
        dedup_key: FIRED.event.data['tick_id'],
        action: 'app:budget:auto-shutdown:fired',
        app: 'billing-api',
        timestamp: FIRED.event.timestamp,
      },
      {
        summary: '[example-rack] data-pipeline: budget auto-shutdown FAILED, services are still running (spend $263.15 of $250 cap)',
        severity: 'critical',
        source: 'example-rack',
        dedup_key: FAILED.event.data['tick_id'],
        action: 'app:budget:auto-shutdown:failed',
        app: 'data-pipeline',
        timestamp: FAILED.event.timestamp,
      },
      {
        summary: '[example-rack] billing-api: monthly budget cap reached',
        severity: 'critical',
        source: 'example-rack',
        dedup_key: `app:budget:cap:example-rack:billing-api:${CAP.event.timestamp}`, // cap carries no tick_id
        action: 'app:budget:cap',
        app: 'billing-api',
        timestamp: CAP.event.timestamp,
      },
    ]);
    expect(running.stdout() + running.stderr()).not.toContain(key);
  });

  it('pages the transition into shut down once, whatever the order and however often the events arrive', async () => {
    const key = newKey();
    const running = await startExample('oncall-pager.mjs', { RACK_WEBHOOK_SECRETS: key, PAGER_URL: pager.url });
    const tickA = FIRED.event.data['tick_id']!;
    const send = (body: string, t?: number) => post(running.url, body, signature(body, key, t));

    expect(await send(FIRED.body)).toMatchObject({ status: 200, json: { status: 'processed' } });
    // Re-signed with a new t: the receiver's body key catches it before the state.
    expect(await send(FIRED.body, earlier())).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    // Its :armed, late (it sorts before :fired): the state re-folds, the phase stays shut down.
    expect(await send(ARMED.body)).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(await send(RESTORED.body)).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(await send(DISMISSED.body)).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(pages()).toEqual([['app:budget:auto-shutdown:fired', tickA]]);

    // A later countdown of the same app shuts it down again, its :fired arriving before its :armed: one more page.
    const tickB = 'tick-2026-04-29T09:00:00Z-0123456789abcdef0123456789abcdef';
    expect(await send(variant(FIRED.event, { timestamp: '2026-04-29T10:00:00.5Z', data: { tick_id: tickB } }))).toMatchObject({
      status: 200,
      json: { status: 'processed' },
    });
    expect(await send(variant(ARMED.event, { timestamp: '2026-04-29T09:00:00.5Z', data: { tick_id: tickB } }))).toMatchObject({
      status: 200,
      json: { status: 'processed' },
    });
    expect(pages()).toEqual([
      ['app:budget:auto-shutdown:fired', tickA],
      ['app:budget:auto-shutdown:fired', tickB],
    ]);
    expect(running.stdout().match(/^paged: /gm)).toHaveLength(2);
  });

  it('does not page a :fired that arrives after its :restored: the app is back, its phase is restored', async () => {
    const key = newKey();
    const running = await startExample('oncall-pager.mjs', { RACK_WEBHOOK_SECRETS: key, PAGER_URL: pager.url });
    for (const { body } of [ARMED, RESTORED, FIRED]) {
      expect(await post(running.url, body, signature(body, key))).toMatchObject({ status: 200, json: { status: 'processed' } });
    }
    expect(pager.requests).toHaveLength(0);
  });

  it("pages :failed once, and a copy the receiver's dedup misses pages nothing (the state applies an event once)", async () => {
    const key = newKey();
    const running = await startExample('oncall-pager.mjs', { RACK_WEBHOOK_SECRETS: key, PAGER_URL: pager.url });
    const send = (body: string, t?: number) => post(running.url, body, signature(body, key, t));

    expect(await send(FAILED.body)).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(await send(FAILED.body, earlier())).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    expect(pages()).toEqual([['app:budget:auto-shutdown:failed', FAILED.event.data['tick_id']]]);

    // The dedup keys are sha256(body) and, with a tick_id, what the event says apart from time:
    // every copy of an event with a tick_id is a duplicate before the state sees it. An event
    // without a tick_id, re-serialised, passes both keys; only the state's idempotence stops a
    // second page. Its exact bytes again, with a new t, are a dedup duplicate.
    const event = JSON.parse(variant(FIRED.event, { data: { app: 'search-api', tick_id: undefined } })) as typeof FIRED.event;
    const compact = JSON.stringify(event);
    const pretty = JSON.stringify(event, null, 2);
    expect(await send(compact)).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(await send(pretty, earlier())).toMatchObject({ status: 200, json: { status: 'processed' } }); // not a dedup duplicate
    expect(await send(compact, earlier() - 1)).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    expect(pages()).toEqual([
      ['app:budget:auto-shutdown:failed', FAILED.event.data['tick_id']],
      ['app:budget:auto-shutdown:fired', `app:budget:auto-shutdown:fired:example-rack:search-api:${FIRED.event.timestamp}`],
    ]);
  });

  it('answers 200 and pages nothing for other actions, routine ones and unknown ones', async () => {
    const key = newKey();
    const running = await startExample('oncall-pager.mjs', { RACK_WEBHOOK_SECRETS: key, PAGER_URL: pager.url });
    for (const name of [
      'app.budget.set',
      'app.budget.threshold',
      'app.budget.auto-shutdown.armed',
      'app.budget.auto-shutdown.flap-suppressed',
      'build.create',
    ]) {
      const { body } = fixture(name);
      expect(await post(running.url, body, signature(body, key))).toMatchObject({ status: 200, json: { status: 'processed' } });
    }
    for (const name of ['app.budget.auto-shutdown.noop', 'app.budget.auto-shutdown.simulated']) {
      const { body } = fixture(name);
      expect(await post(running.url, body, signature(body, key))).toMatchObject({ status: 200, json: { status: 'ignored' } });
    }
    const unknown = JSON.stringify({
      action: 'app:budget:something-new',
      status: 'success',
      timestamp: '2026-05-01T00:00:00Z',
      data: { app: 'x', rack: 'example-rack' },
    });
    expect(await post(running.url, unknown, signature(unknown, key))).toMatchObject({ status: 200, json: { status: 'ignored' } });
    expect(pager.requests).toHaveLength(0);
  });

  it('answers 500 when the pager refuses, releases the claims, and pages on a retry of the same delivery', async () => {
    const key = newKey();
    const running = await startExample('oncall-pager.mjs', { RACK_WEBHOOK_SECRETS: key, PAGER_URL: pager.url });
    const sig = signature(FAILED.body, key);

    pager.failNext(500);
    expect(await post(running.url, FAILED.body, sig)).toMatchObject({ status: 500, json: { error: 'handler_failed' } });
    expect(pager.requests).toHaveLength(1);
    expect(running.stderr()).toContain('the pager answered HTTP 500');

    // The same bytes and header again: the failed attempt released its dedup keys.
    expect(await post(running.url, FAILED.body, sig)).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(pager.requests).toHaveLength(2);
    expect(pager.requests[1]!.body).toMatchObject({ action: 'app:budget:auto-shutdown:failed', dedup_key: FAILED.event.data['tick_id'] });
    // Now that it was paged, a third copy is a duplicate.
    expect(await post(running.url, FAILED.body, sig)).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    expect(pager.requests).toHaveLength(2);
  });

  it('answers 500 when the pager is unreachable', async () => {
    const key = newKey();
    const down = await startRecorder();
    const url = down.url;
    await down.close(); // nothing listens there any more
    const running = await startExample('oncall-pager.mjs', { RACK_WEBHOOK_SECRETS: key, PAGER_URL: url });
    expect(await post(running.url, FIRED.body, signature(FIRED.body, key))).toMatchObject({
      status: 500,
      json: { error: 'handler_failed' },
    });
  });

  it('exits 1 with a one-line message without RACK_WEBHOOK_SECRETS or PAGER_URL', async () => {
    await expectNeedsSecretsAndUrl('oncall-pager.mjs', 'PAGER_URL', pager.url);
  });

  it('with DATABASE_URL: stores deliveries, pages from the worker, and pages the inbox alerts (a wrongly rotated key)', async () => {
    await withFreshInboxTable(async (database) => {
      const key = newKey();
      const running = await startExample('oncall-pager.mjs', {
        RACK_WEBHOOK_SECRETS: key,
        PAGER_URL: pager.url,
        DATABASE_URL: database.url,
        INBOX_TABLE: database.table,
        ALERT_INTERVAL_MS: '200',
      });
      expect(await post(running.url, FIRED.body, signature(FIRED.body, key))).toMatchObject({ status: 200, json: { status: 'accepted' } });
      await waitFor(
        () => pages().length === 1,
        20_000,
        () => `pages: ${JSON.stringify(pager.requests)}`,
      );
      expect(pages()).toEqual([['app:budget:auto-shutdown:fired', FIRED.event.data['tick_id']]]);

      const wrongKey = newKey();
      for (let i = 0; i < 11; i++) {
        const body = JSON.stringify({ ...CAP.event, timestamp: new Date(Date.now() + i).toISOString() });
        expect((await post(running.url, body, signature(body, wrongKey))).status).toBe(401);
      }
      const alerts = () =>
        pager.requests.map((request) => request.body as Record<string, unknown>).filter((body) => body['rule'] !== undefined);
      await waitFor(
        () => alerts().length === 1,
        30_000,
        () => `requests: ${JSON.stringify(pager.requests)}`,
      );
      expect(alerts()[0]).toMatchObject({
        severity: 'critical',
        source: database.table,
        event_action: 'trigger',
        rule: 'refusals',
        dedup_key: expect.stringMatching(new RegExp(`^rack-webhooks:${database.table.replace('.', '\\.')}:\\d+$`)),
        fields: { code: 'signature_mismatch', count: 11, threshold: 10 },
      });
      expect(alerts()[0]!['summary']).toMatch(/^\[rack-webhooks\] 11 deliveries refused with signature_mismatch in the last 5 min/);
      expect(await running.stop()).toEqual({ code: 0, signal: null });
    });
  }, 90_000);
});
