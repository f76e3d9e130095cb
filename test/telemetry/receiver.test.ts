import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, trace } from '@opentelemetry/api';
import express from 'express';
import Fastify from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { webhookMiddleware } from '../../src/adapters/express.js';
import rackWebhooks from '../../src/adapters/fastify.js';
import { createNodeHandler, observeReceivers } from '../../src/adapters/node.js';
import { createFetchHandler } from '../../src/adapters/web.js';
import { createReceiver, type Receiver } from '../../src/index.js';
import { createSignedRequestSync, type SignedRequest } from '../../src/testing/index.js';
import { everythingSaid, points, registerSdk, total, type TestSdk } from './otel-sdk.js';

const SECRET = 'telemetry-suite-secret';
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');
const event = {
  action: 'app:budget:cap',
  status: 'success',
  timestamp: new Date().toISOString(),
  data: { app: 'billing-api', rack: 'example-rack', actor: 'system', tick_id: `tick-${Math.random()}` },
};
const signed = (body: object = event, secret = SECRET): SignedRequest =>
  createSignedRequestSync(body, { secrets: secret, timestamp: Math.floor(Date.now() / 1000) });

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

/** A node:http server whose requests run inside an active server span, as instrumentation-http makes them. */
async function nodeServer(sdk: TestSdk, receiver: Receiver) {
  const handle = createNodeHandler(receiver, { maxBodyBytes: 4096 });
  const serverSpans: string[] = [];
  const url = await listen((req, res) => {
    const { span, result } = sdk.inServerSpan(() => handle(req, res));
    serverSpans.push(span.spanContext().spanId);
    void result.finally(() => span.end());
  });
  return { url, serverSpans };
}

const post = (url: string, request: SignedRequest) => fetch(url, { method: 'POST', headers: request.headers, body: request.body });

describe('receiver telemetry through the Node adapters', () => {
  it('node:http: a receive span per delivery, child of the HTTP server span, and the received counter by outcome', async () => {
    const sdk = registerSdk();
    const receiver = createReceiver({ secrets: SECRET });
    let handled = 0;
    receiver.on('app:budget:cap', () => void handled++);
    const { url, serverSpans } = await nodeServer(sdk, receiver);

    const delivery = signed();
    expect((await post(url, delivery)).status).toBe(200);
    expect((await post(url, delivery)).status).toBe(200); // a duplicate
    expect(handled).toBe(1);

    const receives = sdk.spans().filter((span) => span.name.startsWith('receive'));
    expect(receives.map((span) => span.name)).toEqual(['receive app:budget:cap', 'receive app:budget:cap']);
    const [first, second] = receives;
    expect(first!.kind).toBe(4); // CONSUMER
    expect(first!.parentSpanContext?.spanId).toBe(serverSpans[0]);
    expect(second!.parentSpanContext?.spanId).toBe(serverSpans[1]);
    expect(first!.attributes).toEqual({
      'messaging.system': 'rack-webhooks',
      'messaging.operation.type': 'receive',
      'messaging.operation.name': 'receive',
      'messaging.destination.name': 'app:budget:cap',
      'rack_webhooks.action': 'app:budget:cap',
      'rack_webhooks.app': 'billing-api',
      'rack_webhooks.outcome': 'processed',
    });
    expect(second!.attributes['rack_webhooks.outcome']).toBe('duplicate');
    expect(first!.status.code).toBe(0);

    const metrics = await sdk.collect();
    const received = metrics.get('messaging.client.consumed.messages');
    expect(received?.descriptor.unit).toBe('{message}');
    expect(total(received, { 'rack_webhooks.outcome': 'processed', 'messaging.destination.name': 'app:budget:cap' })).toBe(1);
    expect(total(received, { 'rack_webhooks.outcome': 'duplicate' })).toBe(1);
    const duration = metrics.get('messaging.client.operation.duration');
    expect(duration?.descriptor.unit).toBe('s');
    expect(total(duration, { 'messaging.operation.name': 'receive' })).toBe(2);
  });

  it('node:http: refusals carry their code (error.type, status ERROR), before and after the receiver, and never a secret, signature or body', async () => {
    const sdk = registerSdk();
    const receiver = createReceiver({ secrets: SECRET });
    const { url } = await nodeServer(sdk, receiver);

    const forged = signed(event, 'not-the-secret');
    expect((await post(url, forged)).status).toBe(401);
    const tooLarge = signed({ ...event, data: { ...event.data, padding: 'x'.repeat(5000) } });
    expect((await post(url, tooLarge)).status).toBe(413);
    expect((await fetch(url, { method: 'GET' })).status).toBe(405);

    const receives = sdk.spans().filter((span) => span.name === 'receive');
    expect(receives.map((span) => span.attributes['error.type'])).toEqual([
      'signature_mismatch',
      'payload_too_large',
      'method_not_allowed',
    ]);
    for (const span of receives) {
      expect(span.status).toEqual({ code: 2, message: span.attributes['error.type'] });
      expect(span.attributes['rack_webhooks.outcome']).toBe('refused');
    }
    const said = everythingSaid(sdk.spans());
    for (const secretThing of [SECRET, 'not-the-secret', forged.headers['service-signature']!, forged.body, 'billing-api']) {
      expect(said).not.toContain(secretThing);
    }

    const received = (await sdk.collect()).get('messaging.client.consumed.messages');
    expect(total(received, { 'rack_webhooks.outcome': 'refused', 'error.type': 'signature_mismatch' })).toBe(1);
    expect(total(received, { 'rack_webhooks.outcome': 'refused', 'error.type': 'payload_too_large' })).toBe(1);
    expect(total(received, { 'rack_webhooks.outcome': 'refused', 'error.type': 'method_not_allowed' })).toBe(1);
    expect(total(received)).toBe(3);
  });

  it('express: the receive span is a child of the span active around the middleware', async () => {
    const sdk = registerSdk();
    const receiver = createReceiver({ secrets: SECRET });
    receiver.on('app:budget:cap', () => {});
    const app = express();
    const serverSpans: string[] = [];
    app.use((req, res, next) => {
      const { span } = sdk.inServerSpan(() => undefined);
      serverSpans.push(span.spanContext().spanId);
      res.on('finish', () => span.end());
      context.with(trace.setSpan(context.active(), span), next);
    });
    app.all('/webhooks', webhookMiddleware(receiver));
    const url = await listen(app);
    expect((await post(url, signed())).status).toBe(200);
    const [receive] = sdk.spans().filter((span) => span.name.startsWith('receive'));
    expect(receive?.name).toBe('receive app:budget:cap');
    expect(receive?.parentSpanContext?.spanId).toBe(serverSpans[0]);
    expect(total((await sdk.collect()).get('messaging.client.consumed.messages'), { 'rack_webhooks.outcome': 'processed' })).toBe(1);
  });

  it("fastify: receive spans and counts, Fastify's own 415 included", async () => {
    const sdk = registerSdk();
    const receiver = createReceiver({ secrets: SECRET });
    receiver.on('app:budget:cap', () => {});
    const app = Fastify();
    await app.register(rackWebhooks, { receiver, path: '/webhooks' });
    onTestFinished(() => app.close());
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `${address}/webhooks`;
    expect((await post(url, signed())).status).toBe(200);
    expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' })).status).toBe(415);
    expect(sdk.spans().map((span) => [span.name, span.attributes['rack_webhooks.outcome'], span.attributes['error.type']])).toEqual([
      ['receive app:budget:cap', 'processed', undefined],
      ['receive', 'refused', 'unsupported_media_type'],
    ]);
    const received = (await sdk.collect()).get('messaging.client.consumed.messages');
    expect(total(received, { 'error.type': 'unsupported_media_type' })).toBe(1);
  });
});

describe('a receiver called directly, or through the fetch handler on Node', () => {
  it('receive() called directly: its receive span, child of the active span, and the counter; a refusal too', async () => {
    observeReceivers();
    const sdk = registerSdk();
    const receiver = createReceiver({ secrets: SECRET });
    let handled = 0;
    receiver.on('app:budget:cap', () => void handled++);
    const { span: server, result } = sdk.inServerSpan(() => receiver.receive(signed()));
    expect((await result).outcome).toBe('processed');
    server.end();
    await expect(receiver.receive(signed(event, 'forged'))).rejects.toMatchObject({ code: 'signature_mismatch' });
    expect(handled).toBe(1);

    const receives = sdk.spans().filter((span) => span.name.startsWith('receive'));
    expect(receives.map((span) => [span.name, span.attributes['rack_webhooks.outcome'], span.attributes['error.type']])).toEqual([
      ['receive app:budget:cap', 'processed', undefined],
      ['receive', 'refused', 'signature_mismatch'],
    ]);
    expect(receives[0]!.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(receives[0]!.kind).toBe(4);
    expect(receives[1]!.status).toEqual({ code: 2, message: 'signature_mismatch' });
    const received = (await sdk.collect()).get('messaging.client.consumed.messages');
    expect(total(received, { 'rack_webhooks.outcome': 'processed' })).toBe(1);
    expect(total(received, { 'rack_webhooks.outcome': 'refused', 'error.type': 'signature_mismatch' })).toBe(1);
  });

  it("a handler's own span is a child of the receive span", async () => {
    observeReceivers();
    const sdk = registerSdk();
    const receiver = createReceiver({ secrets: SECRET });
    receiver.on('app:budget:cap', () => trace.getTracer('app').startSpan('handler work').end());
    await receiver.receive(signed());
    const receive = sdk.spans().find((span) => span.name === 'receive app:budget:cap');
    const work = sdk.spans().find((span) => span.name === 'handler work');
    expect(work?.parentSpanContext?.spanId).toBe(receive?.spanContext().spanId);
  });

  it('receiver.reportRefusal(): a refused receive span from the given start, and the counter by code', async () => {
    observeReceivers();
    const sdk = registerSdk();
    const receiver = createReceiver({ secrets: SECRET });
    const startTime = performance.now() - 50;
    await receiver.reportRefusal('method_not_allowed', { startTime });
    const [span] = sdk.spans();
    expect(span?.name).toBe('receive');
    expect(span?.attributes).toEqual({
      'messaging.system': 'rack-webhooks',
      'messaging.operation.type': 'receive',
      'messaging.operation.name': 'receive',
      'rack_webhooks.outcome': 'refused',
      'error.type': 'method_not_allowed',
    });
    expect(span!.duration[0] * 1000 + span!.duration[1] / 1e6).toBeGreaterThanOrEqual(45);
    const metrics = await sdk.collect();
    expect(total(metrics.get('messaging.client.consumed.messages'), { 'error.type': 'method_not_allowed' })).toBe(1);
    expect(total(metrics.get('messaging.client.operation.duration'), { 'error.type': 'method_not_allowed' })).toBe(1);
  });

  it('createFetchHandler on Node: receive spans, and its own refusals (415) through reportRefusal', async () => {
    observeReceivers();
    const sdk = registerSdk();
    const receiver = createReceiver({ secrets: SECRET });
    receiver.on('app:budget:cap', () => {});
    const handle = createFetchHandler(receiver);
    const delivery = signed();
    const url = 'http://localhost/webhooks';
    expect((await handle(new Request(url, { method: 'POST', headers: delivery.headers, body: delivery.body }))).status).toBe(200);
    expect((await handle(new Request(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }))).status).toBe(415);
    expect(sdk.spans().map((span) => [span.name, span.attributes['error.type']])).toEqual([
      ['receive app:budget:cap', undefined],
      ['receive', 'unsupported_media_type'],
    ]);
  });
});

describe('without an SDK, or turned off', () => {
  it('works and emits nothing when no OpenTelemetry SDK is registered', async () => {
    // What an SDK registers is absent (the API leaves `{ version }` behind once an SDK was disabled).
    const registered = (globalThis as Record<symbol, Record<string, unknown> | undefined>)[OTEL_GLOBAL];
    expect([registered?.['trace'], registered?.['metrics'], registered?.['context']]).toEqual([undefined, undefined, undefined]);
    const receiver = createReceiver({ secrets: SECRET });
    let handled = 0;
    receiver.on('app:budget:cap', () => void handled++);
    const url = await listen(createNodeHandler(receiver));
    expect((await post(url, signed())).status).toBe(200);
    expect((await post(url, signed(event, 'forged'))).status).toBe(401);
    expect(handled).toBe(1);
    // An SDK registered afterwards sees nothing of what came before, and sees what comes next.
    const sdk = registerSdk();
    expect(sdk.spans()).toEqual([]);
    expect(points((await sdk.collect()).get('messaging.client.consumed.messages'))).toEqual([]);
    expect((await post(url, signed({ ...event, data: { ...event.data, tick_id: 'next' } }))).status).toBe(200);
    expect(sdk.spans().map((span) => span.name)).toEqual(['receive app:budget:cap']);
  });

  it('telemetry: false on the receiver: no span and no metric, with an SDK registered', async () => {
    const sdk = registerSdk();
    const receiver = createReceiver({ secrets: SECRET, telemetry: false });
    receiver.on('app:budget:cap', () => {});
    const url = await listen(createNodeHandler(receiver, { maxBodyBytes: 10 }));
    expect((await post(url, signed())).status).toBe(413);
    expect((await receiver.receive(signed())).outcome).toBe('processed');
    expect(sdk.spans()).toEqual([]);
    const metrics = await sdk.collect();
    expect(points(metrics.get('messaging.client.consumed.messages'))).toEqual([]);
    expect(points(metrics.get('messaging.client.operation.duration'))).toEqual([]);
  });

  it('only traces, or only metrics: each works without the other', async () => {
    const onlyMetrics = registerSdk({ traces: false });
    const receiver = createReceiver({ secrets: SECRET });
    receiver.on('app:budget:cap', () => {});
    const url = await listen(createNodeHandler(receiver));
    expect((await post(url, signed())).status).toBe(200);
    expect(onlyMetrics.spans()).toEqual([]);
    expect(total((await onlyMetrics.collect()).get('messaging.client.consumed.messages'))).toBe(1);
  });
});

describe('the built package', () => {
  it('never imports @opentelemetry/api: nothing to fail without it, nothing for a bundler to resolve', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const dist = new URL('../../dist/', import.meta.url);
    const files = readdirSync(dist).filter((name) => /\.(c?js)$/.test(name));
    expect(files.length).toBeGreaterThan(5);
    const importing = files.filter((name) =>
      /(?:from|require\(|import\()\s*["']@opentelemetry\//.test(readFileSync(new URL(name, dist), 'utf8')),
    );
    expect(importing).toEqual([]);
    // ...and the telemetry is in it: the inbox and node adapter entries require the public API lazily, never its global.
    const all = files.map((name) => readFileSync(new URL(name, dist), 'utf8')).join('\n');
    expect(all).toContain('("@opentelemetry/api")');
    expect(all).not.toContain('opentelemetry.js.api.1');
  });
});
