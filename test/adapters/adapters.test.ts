// The shared adapter suite: every adapter, on a real server, driven by real signed requests.
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryDedupStore, createReceiver, signSync, type Receiver } from '../../src/index.js';
import { SECRET, T0, manualClock } from '../receiver/helpers.js';
import { fixtureFor } from '../events/fixtures.js';
import { send } from './client.js';
import { adapters, type Running } from './servers.js';

const running: Running[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

function signed(body: string, t = Math.floor(Date.now() / 1000)) {
  return { 'content-type': 'application/json', 'service-signature': signSync(body, { secrets: SECRET, timestamp: t }) };
}

const fired = fixtureFor('app:budget:auto-shutdown:fired').text;
const padTo = (size: number) => {
  const json = JSON.parse(fired);
  json.data.note = '';
  const base = Buffer.byteLength(JSON.stringify(json));
  json.data.note = 'x'.repeat(size - base);
  return JSON.stringify(json);
};

describe.each(Object.entries(adapters))('%s', (_name, start) => {
  async function serve(receiver: Receiver, options = {}) {
    const server = await start(receiver, options);
    running.push(server);
    return server.url;
  }
  const receiverWith = (handler: () => unknown = () => {}, extra = {}) =>
    createReceiver({ secrets: SECRET, ...extra }).on('app:budget:auto-shutdown:fired', handler);

  it('200 processed, 200 duplicate for the same delivery again, 200 ignored for an unknown action', async () => {
    const calls: string[] = [];
    const url = await serve(receiverWith(() => calls.push('fired')));
    const headers = signed(fired);
    expect(await send(url, { body: fired, headers })).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(await send(url, { body: fired, headers })).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    const future = '{"action":"app:budget:forecast","status":"success","timestamp":"2027-01-01T00:00:00Z","data":{"rack":"r"}}';
    expect(await send(url, { body: future, headers: signed(future) })).toMatchObject({ status: 200, json: { status: 'ignored' } });
    expect(calls).toEqual(['fired']);
  });

  it('405 with Allow: POST for other methods', async () => {
    const url = await serve(receiverWith());
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const reply = await send(url, { method, headers: signed(fired), ...(method === 'GET' ? {} : { body: fired }) });
      expect(reply.status, method).toBe(405);
      expect(reply.headers['allow']).toBe('POST');
      expect(reply.json).toEqual({ error: 'method_not_allowed' });
    }
  });

  it('415 for a non-JSON content type; charset parameters are fine', async () => {
    const url = await serve(receiverWith());
    const headers = signed(fired);
    expect(await send(url, { body: fired, headers: { ...headers, 'content-type': 'text/plain' } })).toMatchObject({ status: 415, json: { error: 'unsupported_media_type' } });
    expect(await send(url, { body: fired, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' } })).toMatchObject({ status: 415 });
    expect(await send(url, { body: fired, headers: { ...headers, 'content-type': 'Application/JSON; charset=UTF-8' } })).toMatchObject({ status: 200, json: { status: 'processed' } });
  });

  it('413 just over the limit (declared or streamed), 200 just under it', async () => {
    const url = await serve(receiverWith(() => {}, { dedup: false }), { maxBodyBytes: 4096 });
    const under = padTo(4096);
    const over = padTo(4097);
    expect(Buffer.byteLength(under)).toBe(4096);
    expect(await send(url, { body: under, headers: signed(under) })).toMatchObject({ status: 200 });
    expect(await send(url, { body: over, headers: signed(over) })).toMatchObject({ status: 413, json: { error: 'payload_too_large' } });
    expect(await send(url, { body: over, headers: signed(over), omitLength: true })).toMatchObject({ status: 413 });
    const huge = padTo(200_000);
    expect(await send(url, { body: huge, headers: signed(huge), pieces: 20, pauseMs: 1 })).toMatchObject({ status: 413 });
  });

  it('401 for every verification failure, with its code', async () => {
    const url = await serve(receiverWith());
    const forged = fired.replace('billing-api', 'payments-api');
    expect(await send(url, { body: forged, headers: signed(fired) })).toMatchObject({ status: 401, json: { error: 'signature_mismatch' } });
    expect(await send(url, { body: fired, headers: { 'content-type': 'application/json' } })).toMatchObject({ status: 401, json: { error: 'missing_header' } });
    expect(await send(url, { body: fired, headers: { ...signed(fired), 'service-signature': 't=1,v1=zz' } })).toMatchObject({ status: 401, json: { error: 'malformed_header' } });
    const stale = signed(fired, Math.floor(Date.now() / 1000) - 600);
    expect(await send(url, { body: fired, headers: stale })).toMatchObject({ status: 401, json: { error: 'timestamp_too_old' } });
  });

  it('a replay after the window is refused by the time check', async () => {
    const clock = manualClock();
    const receiver = createReceiver({ secrets: SECRET, now: clock.now, dedup: new MemoryDedupStore({ now: clock.now }) });
    const url = await serve(receiver);
    const headers = signed(fired, T0);
    expect((await send(url, { body: fired, headers })).json).toEqual({ status: 'processed' });
    clock.advance(120);
    expect((await send(url, { body: fired, headers })).json).toEqual({ status: 'duplicate' });
    clock.advance(200);
    expect(await send(url, { body: fired, headers })).toMatchObject({ status: 401, json: { error: 'timestamp_too_old' } });
  });

  it('400 for invalid JSON and for an invalid event', async () => {
    const url = await serve(receiverWith(() => {}, { validate: true }));
    const broken = '{"action":"app:budget:cap",';
    expect(await send(url, { body: broken, headers: signed(broken) })).toMatchObject({ status: 400, json: { error: 'invalid_json' } });
    const invalid = fired.replace('"actor": "system"', '"actor": "ops@example.com"').replace('"actor":"system"', '"actor":"ops@example.com"');
    expect(invalid).not.toBe(fired);
    expect(await send(url, { body: invalid, headers: signed(invalid) })).toMatchObject({ status: 400, json: { error: 'invalid_event' } });
  });

  it('500 when a handler threw, and a copy is then processed (claims released)', async () => {
    let calls = 0;
    const url = await serve(receiverWith(() => { calls++; if (calls === 1) throw new Error('pager down'); }));
    const headers = signed(fired);
    expect(await send(url, { body: fired, headers })).toMatchObject({ status: 500, json: { error: 'handler_failed' } });
    expect(await send(url, { body: fired, headers })).toMatchObject({ status: 200, json: { status: 'processed' } });
  });

  it('a slow client sending the body in pieces is verified over the whole body', async () => {
    const url = await serve(receiverWith());
    expect(await send(url, { body: fired, headers: signed(fired), pieces: 6, pauseMs: 40 })).toMatchObject({ status: 200, json: { status: 'processed' } });
  });

  it('acknowledges before the handlers run when asked to', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let finished = false;
    const url = await serve(receiverWith(async () => { await gate; finished = true; }), { acknowledge: 'before-handlers' });
    expect(await send(url, { body: fired, headers: signed(fired) })).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(finished).toBe(false);
    release();
    await new Promise((r) => setTimeout(r, 20));
    expect(finished).toBe(true);
  });
});

describe('a body parser mounted first', () => {
  for (const name of ['express 5', 'express 4'] as const) {
    it(`${name}: express.json() first fails at once with a 500 that says how to mount it`, async () => {
      const server = await adapters[name]!(createReceiver({ secrets: SECRET }), {}, 'json-parser-first');
      running.push(server);
      const started = performance.now();
      const reply = await send(server.url, { body: fired, headers: signed(fired) });
      expect(reply.status).toBe(500);
      expect(reply.json['error']).toBe('raw_body_unavailable');
      expect(String(reply.json['message'])).toMatch(/before express\.json\(\)/);
      expect(String(reply.json['message'])).toMatch(/express\.raw/);
      expect(performance.now() - started).toBeLessThan(1000);
    });
    it(`${name}: the raw bytes kept by express.json({ verify }) or express.raw() are used`, async () => {
      for (const mount of ['json-parser-keeping-raw', 'raw-parser'] as const) {
        const server = await adapters[name]!(createReceiver({ secrets: SECRET }), {}, mount);
        running.push(server);
        expect(await send(server.url, { body: fired, headers: signed(fired) }), mount).toMatchObject({ status: 200, json: { status: 'processed' } });
      }
    });
  }

  it('fastify: the app keeps its JSON parsing on other routes while the webhook route gets raw bytes', async () => {
    const server = await adapters['fastify']!(createReceiver({ secrets: SECRET }));
    running.push(server);
    const other = server.url.replace('/webhooks', '/other');
    expect(await send(other, { body: '{"a":1}', headers: { 'content-type': 'application/json' } })).toMatchObject({ status: 200, json: { echoed: { a: 1 } } });
    expect(await send(server.url, { body: fired, headers: signed(fired) })).toMatchObject({ status: 200, json: { status: 'processed' } });
  });

  it('fetch: a Request whose body was already read fails at once with a 500', async () => {
    const { createFetchHandler } = await import('../../src/adapters/web.js');
    const handler = createFetchHandler(createReceiver({ secrets: SECRET }));
    const request = new Request('http://x/webhooks', { method: 'POST', body: fired, headers: signed(fired) });
    await request.json();
    const response = await handler(request);
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: 'raw_body_unavailable' });
  });
});
