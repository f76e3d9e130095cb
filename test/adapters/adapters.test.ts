// The shared adapter suite: every adapter, on a real server, driven by real signed requests.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryDedupStore, createReceiver, signSync, type Receiver, type ReceiverLogRecord } from '../../src/index.js';
import { WebhookMountError } from '../../src/adapters/express.js';
import { SECRET, T0, manualClock } from '../receiver/helpers.js';
import { fixtureFor } from '../events/fixtures.js';
import { connect } from 'node:net';
import { DISCARD_MAX_BYTES } from '../../src/adapters/node-body.js';
import '../../src/validate.js'; // `validate: true` needs the validators registered
import { deferred, within } from '../kit/time.js';
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

  it("accepts a deployed rack's delivery (Acme-Signature, hex-decoded key) with nothing configured but the key", async () => {
    const key = '8f3a1c9e5b7d2f4a6c8e0b1d3f5a7c9e2b4d6f8a0c1e3f5a7b9d1c3e5f7a9b2d';
    const calls: string[] = [];
    const url = await serve(createReceiver({ secrets: key }).on('app:budget:auto-shutdown:fired', () => void calls.push('fired')));
    const t = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'Acme-Signature': signSync(fired, { secrets: key, secretEncoding: 'hex', timestamp: t }),
    };
    expect(await send(url, { body: fired, headers })).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(calls).toEqual(['fired']);
    expect(await send(url, { body: fired, headers: { 'content-type': 'application/json' } })).toMatchObject({
      status: 401,
      json: { error: 'missing_header' },
    });
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
    expect(await send(url, { body: fired, headers: { ...headers, 'content-type': 'text/plain' } })).toMatchObject({
      status: 415,
      json: { error: 'unsupported_media_type' },
    });
    expect(await send(url, { body: fired, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' } })).toMatchObject({
      status: 415,
    });
    expect(await send(url, { body: fired, headers: { ...headers, 'content-type': 'Application/JSON; charset=UTF-8' } })).toMatchObject({
      status: 200,
      json: { status: 'processed' },
    });
  });

  it('413 just over the limit (declared or streamed), 200 just under it', async () => {
    const url = await serve(
      receiverWith(() => {}, { dedup: false }),
      { maxBodyBytes: 4096 },
    );
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
    expect(await send(url, { body: fired, headers: { 'content-type': 'application/json' } })).toMatchObject({
      status: 401,
      json: { error: 'missing_header' },
    });
    expect(await send(url, { body: fired, headers: { ...signed(fired), 'service-signature': 't=1,v1=zz' } })).toMatchObject({
      status: 401,
      json: { error: 'malformed_header' },
    });
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
    const invalid = fired
      .replace('"actor": "system"', '"actor": "ops@example.com"')
      .replace('"actor":"system"', '"actor":"ops@example.com"');
    expect(invalid).not.toBe(fired);
    expect(await send(url, { body: invalid, headers: signed(invalid) })).toMatchObject({ status: 400, json: { error: 'invalid_event' } });
  });

  it('500 when a handler threw, and a copy is then processed (claims released)', async () => {
    let calls = 0;
    const url = await serve(
      receiverWith(() => {
        calls++;
        if (calls === 1) throw new Error('pager down');
      }),
    );
    const headers = signed(fired);
    expect(await send(url, { body: fired, headers })).toMatchObject({ status: 500, json: { error: 'handler_failed' } });
    expect(await send(url, { body: fired, headers })).toMatchObject({ status: 200, json: { status: 'processed' } });
  });

  it('a slow client sending the body in pieces is verified over the whole body', async () => {
    const url = await serve(receiverWith());
    expect(await send(url, { body: fired, headers: signed(fired), pieces: 6, pauseMs: 40 })).toMatchObject({
      status: 200,
      json: { status: 'processed' },
    });
  });

  it('acknowledges before the handlers run when asked to', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let finished = false;
    const handled = deferred<void>();
    const url = await serve(
      receiverWith(async () => {
        await gate;
        finished = true;
        handled.resolve();
      }),
      { acknowledge: 'before-handlers' },
    );
    expect(await send(url, { body: fired, headers: signed(fired) })).toMatchObject({ status: 200, json: { status: 'processed' } });
    expect(finished).toBe(false);
    release();
    await within(handled.promise, 10_000, 'the handler after the acknowledgement');
    expect(finished).toBe(true);
  });
});

/**
 * A client on a bare socket (Node's own http client stops writing once it has a response), sending
 * `requests` one after another and collecting what comes back until `responses` have arrived or the
 * server closes the connection.
 */
function rawExchange(
  url: string,
  requests: Buffer[],
  responses: number,
): Promise<{ received: string; written: number; total: number; closedEarly: boolean }> {
  const { hostname, port } = new URL(url);
  const total = requests.reduce((sum, request) => sum + request.length, 0);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    let written = 0;
    let settled = false;
    const finish = (closedEarly: boolean) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ received, written, total, closedEarly });
    };
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const complete = received.split(/\r\n\r\n\{[^\r\n]*\}|\r\n0\r\n\r\n/).length - 1;
      if (complete >= responses) finish(false);
    });
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    const pieces = requests.flatMap((request) =>
      Array.from({ length: Math.ceil(request.length / 65_536) }, (_, i) => request.subarray(i * 65_536, (i + 1) * 65_536)),
    );
    const pump = () => {
      while (pieces.length > 0) {
        const piece = pieces.shift()!;
        written += piece.length;
        if (!socket.write(piece)) return void socket.once('drain', pump);
      }
    };
    socket.on('connect', pump);
  });
}

/** A POST with a chunked body of `size` bytes of JSON-ish filler. */
function chunkedPost(path: string, headers: Record<string, string>, size: number): Buffer {
  const head = `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  const chunks: Buffer[] = [Buffer.from(head)];
  for (let left = size; left > 0; left -= 65_536) {
    const length = Math.min(65_536, left);
    chunks.push(Buffer.from(`${length.toString(16)}\r\n`), Buffer.alloc(length, 0x20), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(chunks);
}

function plainPost(path: string, headers: Record<string, string>, body: string): Buffer {
  return Buffer.from(
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n${body}`,
  );
}

describe('after a 413 (node and express adapters)', () => {
  for (const name of ['node:http', 'express 5'] as const) {
    it(`${name}: the rest of the body is read and dropped, so the 413 arrives and the connection serves the next delivery`, async () => {
      const server = await adapters[name]!(createReceiver({ secrets: SECRET, dedup: false }), { maxBodyBytes: 4096 });
      running.push(server);
      const exchange = await rawExchange(
        server.url,
        [chunkedPost('/webhooks', signed(fired), 1_000_000), plainPost('/webhooks', signed(fired), fired)],
        2,
      );
      expect(exchange.closedEarly).toBe(false);
      expect(exchange.written).toBe(exchange.total);
      const statuses = [...exchange.received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => match[1]);
      expect(statuses).toEqual(['413', '200']);
    });
  }

  it(`cuts the connection of a client that keeps sending past ${DISCARD_MAX_BYTES / 1024 / 1024} MiB`, async () => {
    const server = await adapters['node:http']!(createReceiver({ secrets: SECRET, dedup: false }), { maxBodyBytes: 4096 });
    running.push(server);
    const exchange = await rawExchange(server.url, [chunkedPost('/webhooks', signed(fired), DISCARD_MAX_BYTES * 4)], 2);
    expect(exchange.received).toMatch(/^HTTP\/1\.1 413 /);
    expect(exchange.closedEarly).toBe(true);
    expect(exchange.written).toBeLessThan(exchange.total);
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
    it(`${name}: the app hears of it: one error record in its log, onError on every delivery`, async () => {
      const records: ReceiverLogRecord[] = [];
      const heard: unknown[] = [];
      const receiver = createReceiver({ secrets: SECRET, logger: (record) => records.push(record) }).onError((error) => {
        heard.push(error);
      });
      const server = await adapters[name]!(receiver, {}, 'json-parser-first');
      running.push(server);
      for (let i = 0; i < 2; i++) expect((await send(server.url, { body: fired, headers: signed(fired) })).status).toBe(500);
      const logged = records.filter((record) => record.event === 'raw_body_unavailable');
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ level: 'error', code: 'raw_body_unavailable' });
      expect(logged[0]!.message).toMatch(/before express\.json\(\)/);
      expect(heard).toHaveLength(2);
      expect(heard.every((error) => error instanceof WebhookMountError && error.code === 'raw_body_unavailable')).toBe(true);
    });
    it(`${name}: without a logger, the console warning has one rack-webhooks prefix`, async () => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      try {
        const server = await adapters[name]!(createReceiver({ secrets: SECRET }), {}, 'json-parser-first');
        running.push(server);
        expect((await send(server.url, { body: fired, headers: signed(fired) })).status).toBe(500);
        expect(warn).toHaveBeenCalledTimes(1);
        const line = String(warn.mock.calls[0]![0]);
        // It read "[rack-webhooks] rack-webhooks: the request body ..." (issue 38, point 7).
        expect(line).toMatch(/^\[rack-webhooks\] The request body was already read and parsed by a body parser/);
        expect(line.match(/rack-webhooks/g)).toHaveLength(1);
      } finally {
        warn.mockRestore();
      }
    });
    it(`${name}: the raw bytes kept by express.json({ verify }) or express.raw() are used`, async () => {
      for (const mount of ['json-parser-keeping-raw', 'raw-parser'] as const) {
        const server = await adapters[name]!(createReceiver({ secrets: SECRET }), {}, mount);
        running.push(server);
        expect(await send(server.url, { body: fired, headers: signed(fired) }), mount).toMatchObject({
          status: 200,
          json: { status: 'processed' },
        });
      }
    });
  }

  it('express 5: a string kept by express.text() is held to the limit in bytes, not characters', async () => {
    const server = await adapters['express 5']!(createReceiver({ secrets: SECRET, dedup: false }), { maxBodyBytes: 4096 }, 'text-parser');
    running.push(server);
    const json = JSON.parse(fired);
    json.data.note = '\u00e9'.repeat(1500); // 1,500 characters, 3,000 bytes
    const fits = JSON.stringify(json);
    json.data.note = '\u00e9'.repeat(2500); // 2,500 characters (under 4,096), 5,000 bytes (over)
    const tooBig = JSON.stringify(json);
    expect(tooBig.length).toBeLessThan(4096);
    expect(await send(server.url, { body: fits, headers: signed(fits) })).toMatchObject({ status: 200, json: { status: 'processed' } });
    // In pieces, so without a content-length: only the kept string's size can refuse it.
    expect(await send(server.url, { body: tooBig, headers: signed(tooBig), pieces: 2, pauseMs: 1 })).toMatchObject({
      status: 413,
      json: { error: 'payload_too_large' },
    });
  });

  it('fastify: a request Fastify itself refuses keeps its 4xx instead of becoming a 500', async () => {
    const { default: Fastify } = await import('fastify');
    const { rackWebhooks } = await import('../../src/adapters/fastify.js');
    const app = Fastify();
    await app.register(rackWebhooks, { receiver: createReceiver({ secrets: SECRET }) });
    // A content-length that does not match the body: Fastify's FST_ERR_CTP_INVALID_CONTENT_LENGTH, a 400.
    const reply = await app.inject({
      method: 'POST',
      url: '/webhooks',
      headers: { ...signed(fired), 'content-length': '5' },
      payload: fired,
    });
    expect(reply.statusCode).toBe(400);
    expect(reply.json()).toEqual({ error: 'bad_request' });
    await app.close();
  });

  it('fastify: each request is sent once and logged once by the plugin, at its own level', async () => {
    const { default: Fastify } = await import('fastify');
    const { rackWebhooks } = await import('../../src/adapters/fastify.js');
    const lines: Array<{ level: number; msg: string; webhook?: unknown; err?: { code?: string } }> = [];
    const app = Fastify({
      logger: { level: 'info', stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
      disableRequestLogging: true,
    });
    await app.register(rackWebhooks, { receiver: createReceiver({ secrets: SECRET }).on('app:budget:auto-shutdown:fired', () => {}) });
    const headers = signed(fired);
    for (const [body, status] of [
      [fired, 200],
      [fired, 200],
      [`${fired} `, 401],
    ] as const) {
      expect((await app.inject({ method: 'POST', url: '/webhooks', headers, payload: body })).statusCode).toBe(status);
    }
    await app.close();
    expect(lines.filter((line) => line.err?.code === 'FST_ERR_REP_ALREADY_SENT')).toEqual([]);
    expect(lines.filter((line) => line.msg === 'rack webhook').map((line) => [line.level, line.webhook])).toEqual([
      [30, { status: 'processed' }],
      [30, { status: 'duplicate' }],
      [
        40,
        {
          status: 401,
          error: 'signature_mismatch',
          reason: expect.stringMatching(
            /^No v1 signature \(of 1\) matches .* Signature read from Service-Signature; headers present: .*service-signature/,
          ),
          headerName: 'Service-Signature',
          headerNames: expect.arrayContaining(['content-type', 'service-signature']),
          timestamp: expect.any(Number),
        },
      ],
    ]);
    expect(JSON.stringify(lines)).not.toContain(SECRET);
    expect(JSON.stringify(lines)).not.toContain(headers['service-signature'].slice(-64));
  });

  it('fastify: the app keeps its JSON parsing on other routes while the webhook route gets raw bytes', async () => {
    const server = await adapters['fastify']!(createReceiver({ secrets: SECRET }));
    running.push(server);
    const other = server.url.replace('/webhooks', '/other');
    expect(await send(other, { body: '{"a":1}', headers: { 'content-type': 'application/json' } })).toMatchObject({
      status: 200,
      json: { echoed: { a: 1 } },
    });
    expect(await send(server.url, { body: fired, headers: signed(fired) })).toMatchObject({ status: 200, json: { status: 'processed' } });
  });

  it('fetch: a body stream that is locked (being read elsewhere) fails at once with raw_body_unavailable', async () => {
    const { createFetchHandler } = await import('../../src/adapters/web.js');
    const handler = createFetchHandler(createReceiver({ secrets: SECRET }));
    const request = new Request('http://x/webhooks', { method: 'POST', body: fired, headers: signed(fired) });
    request.body!.getReader();
    const response = await handler(request);
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: 'raw_body_unavailable' });
  });

  it("fetch: a body stream that errors midway is the request's fault: 400 body_read_failed", async () => {
    const { createFetchHandler } = await import('../../src/adapters/web.js');
    const handler = createFetchHandler(createReceiver({ secrets: SECRET }));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(fired.slice(0, 20)));
        controller.error(new Error('connection reset by peer'));
      },
    });
    const request = new Request('http://x/webhooks', { method: 'POST', body, headers: signed(fired), duplex: 'half' } as RequestInit);
    const response = await handler(request);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'body_read_failed' });
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
