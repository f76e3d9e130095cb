// examples/express.mjs, fastify.mjs, node-http.mjs and hono.mjs, run as a user would run them.
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../kit/time.js';
import { fixture, newKey, post, runToExit, signature, startExample, stopAllExamples, type Running } from './helpers.js';

afterEach(stopAllExamples);

const FIRED = fixture('app.budget.auto-shutdown.fired');
const FAILED = fixture('app.budget.auto-shutdown.failed');
const CAP = fixture('app.budget.cap');
const NOOP = fixture('app.budget.auto-shutdown.noop');

const FIRED_LINE =
  'auto-shutdown fired: app=billing-api rack=example-rack tick=tick-2026-04-27T10:30:00Z-9fe533fc297241caa6ca5760dc9b9836 (spend $103.90 of $100 cap)';
const FAILED_LINE =
  'auto-shutdown FAILED, services still running: app=data-pipeline rack=example-rack tick=tick-2026-04-22T02:00:00Z-1c5abd65dab342e2a27f50d3ab325e4d (spend $263.15 of $250 cap)';
const CAP_LINE = 'budget cap reached: app=billing-api rack=example-rack';

const count = (text: string, line: string) => text.split('\n').filter((one) => one === line).length;

/** Output of a running example must never hold the key, a signature or a body. */
function expectNoLeaks(running: Running, key: string, secretsLike: string[]) {
  const output = running.stdout() + running.stderr();
  expect(output).not.toContain(key);
  for (const text of secretsLike) expect(output).not.toContain(text);
  expect(output).not.toContain('"spend_usd"'); // no body, whole or in part
}

describe.each(['express.mjs', 'fastify.mjs', 'node-http.mjs', 'hono.mjs'])('examples/%s', (file) => {
  it('prints exactly one "listening on" line, on 127.0.0.1 and the port the OS chose', async () => {
    const running = await startExample(file, { RACK_WEBHOOK_SECRETS: newKey() });
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/webhooks$/);
    expect(
      running
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('listening on')),
    ).toEqual([`listening on ${running.url}`]);
  });

  it('verifies, deduplicates and handles deliveries, logging one summary line each and no secret or body', async () => {
    const key = newKey();
    const running = await startExample(file, { RACK_WEBHOOK_SECRETS: key });
    const fired = signature(FIRED.body, key);

    expect(await post(running.url, FIRED.body, fired)).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(await post(running.url, FIRED.body, fired)).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    // Same signature, one field changed: the body is not the one the rack signed.
    const forged = FIRED.body.replace('"billing-api"', '"payments-api"');
    expect(forged).not.toBe(FIRED.body);
    expect(await post(running.url, forged, fired)).toMatchObject({ status: 401, json: { error: 'signature_mismatch' } });
    expect(await post(running.url, FIRED.body, undefined)).toMatchObject({ status: 401, json: { error: 'missing_header' } });
    expect(await post(running.url, FIRED.body, signature(FIRED.body, newKey()))).toMatchObject({
      status: 401,
      json: { error: 'signature_mismatch' },
    });
    const failedSignature = signature(FAILED.body, key);
    expect(await post(running.url, FAILED.body, failedSignature)).toMatchObject({ status: 200, json: { status: 'processed' } });
    const capSignature = signature(CAP.body, key);
    expect(await post(running.url, CAP.body, capSignature)).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(await post(running.url, NOOP.body, signature(NOOP.body, key))).toMatchObject({ status: 200, json: { status: 'ignored' } });

    await waitFor(
      () => running.stdout().includes(CAP_LINE),
      10_000,
      () => `no summary line for app:budget:cap in:\n${running.stdout()}`,
    );
    const stdout = running.stdout();
    expect(count(stdout, FIRED_LINE)).toBe(1); // the duplicate and the forgery ran no handler
    expect(count(stdout, FAILED_LINE)).toBe(1);
    expect(count(stdout, CAP_LINE)).toBe(1);
    expect(stdout).not.toContain('checkout-web'); // the routine :noop is ignored
    expect(stdout.trim().split('\n')).toHaveLength(4); // listening + three summaries, nothing else
    expectNoLeaks(running, key, [fired.split('v1=')[1]!, failedSignature.split('v1=')[1]!, FIRED.body, forged]);
  });

  it('refuses a delivery signed ten minutes ago (timestamp_too_old)', async () => {
    const key = newKey();
    const running = await startExample(file, { RACK_WEBHOOK_SECRETS: key });
    const stale = signature(FIRED.body, key, Math.floor(Date.now() / 1000) - 600);
    expect(await post(running.url, FIRED.body, stale)).toMatchObject({ status: 401, json: { error: 'timestamp_too_old' } });
    expect(running.stdout()).not.toContain('auto-shutdown fired');
  });

  it('accepts the rack\'s "new,old" form during a key rotation', async () => {
    const [newer, older] = [newKey(), newKey()];
    const running = await startExample(file, { RACK_WEBHOOK_SECRETS: `${newer},${older}` });
    expect(await post(running.url, CAP.body, signature(CAP.body, older))).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(await post(running.url, FAILED.body, signature(FAILED.body, newer))).toMatchObject({
      status: 200,
      json: { status: 'processed' },
    });
  });

  it('shuts down cleanly on SIGTERM (exit code 0)', async () => {
    const running = await startExample(file, { RACK_WEBHOOK_SECRETS: newKey() });
    // An open keep-alive connection must not hold the shutdown up.
    await post(running.url, '{}', undefined);
    expect(await running.stop()).toEqual({ code: 0, signal: null });
  });

  it('exits 1 with a one-line message when RACK_WEBHOOK_SECRETS is missing', async () => {
    const result = await runToExit([`examples/${file}`], { PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^RACK_WEBHOOK_SECRETS is not set/);
  });
});

describe('per-framework details', () => {
  it.each(['express.mjs', 'fastify.mjs', 'hono.mjs'])("%s: the app's other JSON routes keep working (GET /healthz)", async (file) => {
    const running = await startExample(file, { RACK_WEBHOOK_SECRETS: newKey() });
    const response = await fetch(`${running.origin}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it.each(['express.mjs', 'fastify.mjs', 'hono.mjs'])('%s: 405 with Allow: POST for GET on /webhooks', async (file) => {
    const running = await startExample(file, { RACK_WEBHOOK_SECRETS: newKey() });
    const get = await fetch(running.url);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(await get.json()).toEqual({ error: 'method_not_allowed' });
  });

  it('node-http.mjs: 404 for other paths, 405 for GET on /webhooks, 415 for a non-JSON body', async () => {
    const key = newKey();
    const running = await startExample('node-http.mjs', { RACK_WEBHOOK_SECRETS: key });
    const other = await fetch(`${running.origin}/other`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: FIRED.body,
    });
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ error: 'not_found' });
    const get = await fetch(running.url);
    expect(get.status).toBe(405);
    expect(await get.json()).toEqual({ error: 'method_not_allowed' });
    const text = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'service-signature': signature(FIRED.body, key) },
      body: FIRED.body,
    });
    expect(text.status).toBe(415);
    expect(await text.json()).toEqual({ error: 'unsupported_media_type' });
  });

  it('node-http.mjs: the webhook path still matches with a query string', async () => {
    const key = newKey();
    const running = await startExample('node-http.mjs', { RACK_WEBHOOK_SECRETS: key });
    expect(await post(`${running.url}?source=rack`, CAP.body, signature(CAP.body, key))).toMatchObject({
      status: 200,
      json: { status: 'processed' },
    });
  });

  it('an invalid PORT exits 1 with a one-line message', async () => {
    const result = await runToExit(['examples/express.mjs'], { RACK_WEBHOOK_SECRETS: newKey(), PORT: 'eighty' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('PORT must be a whole number from 0 to 65535, got "eighty".');
  });
});
