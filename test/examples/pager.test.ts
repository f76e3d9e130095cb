// examples/oncall-pager.mjs: pages only the on-call actions, and a failed page can be retried.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fixture, newKey, post, runToExit, signature, startExample, startRecorder, stopAllExamples, type Recorder } from './helpers.js';

let pager: Recorder;
beforeAll(async () => {
  pager = await startRecorder();
});
afterEach(async () => {
  await stopAllExamples();
  pager.requests.length = 0;
  pager.failNext(200, 0);
});
afterAll(() => pager.close());

const FIRED = fixture('app.budget.auto-shutdown.fired');
const FAILED = fixture('app.budget.auto-shutdown.failed');
const CAP = fixture('app.budget.cap');

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

  it('answers 200 and pages nothing for other actions, routine ones and unknown ones', async () => {
    const key = newKey();
    const running = await startExample('oncall-pager.mjs', { RACK_WEBHOOK_SECRETS: key, PAGER_URL: pager.url });
    for (const name of ['app.budget.set', 'app.budget.threshold', 'app.budget.auto-shutdown.armed', 'app.budget.auto-shutdown.flap-suppressed', 'build.create']) {
      const { body } = fixture(name);
      expect(await post(running.url, body, signature(body, key))).toMatchObject({ status: 200, json: { status: 'processed' } });
    }
    for (const name of ['app.budget.auto-shutdown.noop', 'app.budget.auto-shutdown.simulated']) {
      const { body } = fixture(name);
      expect(await post(running.url, body, signature(body, key))).toMatchObject({ status: 200, json: { status: 'ignored' } });
    }
    const unknown = JSON.stringify({ action: 'app:budget:something-new', status: 'success', timestamp: '2026-05-01T00:00:00Z', data: { app: 'x', rack: 'example-rack' } });
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
    expect(await post(running.url, FIRED.body, signature(FIRED.body, key))).toMatchObject({ status: 500, json: { error: 'handler_failed' } });
  });

  it('exits 1 with a one-line message without RACK_WEBHOOK_SECRETS or PAGER_URL', async () => {
    const noSecret = await runToExit(['examples/oncall-pager.mjs'], { PORT: '0', PAGER_URL: pager.url });
    expect(noSecret.code).toBe(1);
    expect(noSecret.stderr.trim().split('\n')).toHaveLength(1);
    expect(noSecret.stderr).toMatch(/^RACK_WEBHOOK_SECRETS is not set/);
    const noUrl = await runToExit(['examples/oncall-pager.mjs'], { PORT: '0', RACK_WEBHOOK_SECRETS: newKey() });
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr.trim().split('\n')).toHaveLength(1);
    expect(noUrl.stderr).toMatch(/^PAGER_URL is not set/);
  });
});
