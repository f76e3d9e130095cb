import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { httpAlertSink, type Alert } from '../../../src/inbox.js';

/** httpAlertSink against a real HTTP server: what it posts, its retry, its timeout, and that it never throws. */

const alert: Alert = {
  status: 'open',
  rule: 'refusals',
  severity: 'critical',
  key: 'refusals:signature_mismatch',
  incidentId: '7',
  summary: '11 deliveries refused with signature_mismatch in the last 5 min (bound 10)',
  since: new Date('2026-11-26T04:00:00.000Z'),
  openedAt: new Date('2026-11-26T04:01:00.000Z'),
  resolvedAt: null,
  table: 'rack_webhooks_inbox',
  fields: { code: 'signature_mismatch', count: 11, threshold: 10, windowMs: 300_000 },
};

interface Received {
  method: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A server answering each request with the next status of `statuses` (the last one repeats); `hang` never answers. */
async function endpoint(statuses: (number | 'hang')[]) {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ method: req.method ?? '', headers: req.headers, body });
      const status = statuses[Math.min(received.length - 1, statuses.length - 1)]!;
      if (status === 'hang') return;
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { received, url: `http://127.0.0.1:${port}/hooks/T000/secret-path` };
}

describe('httpAlertSink', () => {
  it('POSTs the alert as JSON with the given headers', async () => {
    const { received, url } = await endpoint([202]);
    const errors: Error[] = [];
    await httpAlertSink(url, { headers: { authorization: 'Token abc' }, onError: (error) => errors.push(error) })(alert);
    expect(errors).toEqual([]);
    expect(received).toHaveLength(1);
    expect(received[0]!.method).toBe('POST');
    expect(received[0]!.headers['content-type']).toBe('application/json');
    expect(received[0]!.headers['authorization']).toBe('Token abc');
    expect(JSON.parse(received[0]!.body)).toEqual({
      ...alert,
      since: '2026-11-26T04:00:00.000Z',
      openedAt: '2026-11-26T04:01:00.000Z',
    });
  });

  it('shapes the body with `body` (a chat webhook takes { text })', async () => {
    const { received, url } = await endpoint([200]);
    await httpAlertSink(url, { body: (a) => ({ text: `[${a.severity}] ${a.summary}` }) })(alert);
    expect(JSON.parse(received[0]!.body)).toEqual({ text: `[critical] ${alert.summary}` });
  });

  it('retries once on 5xx, and reports (never throws) when every attempt failed, naming the origin only', async () => {
    const ok = await endpoint([503, 200]);
    const errors: Error[] = [];
    await httpAlertSink(ok.url, { retryDelayMs: 10, onError: (error) => errors.push(error) })(alert);
    expect(ok.received).toHaveLength(2);
    expect(errors).toEqual([]);

    const down = await endpoint([500]);
    const reported: [Error, Alert][] = [];
    await expect(
      httpAlertSink(down.url, { retryDelayMs: 10, retries: 2, onError: (error, failed) => reported.push([error, failed]) })(alert),
    ).resolves.toBeUndefined();
    expect(down.received).toHaveLength(3);
    expect(reported).toHaveLength(1);
    expect(reported[0]![0].message).toBe('alert refusals:signature_mismatch (open) not delivered: answered HTTP 500');
    expect(reported[0]![1]).toBe(alert);
    expect(reported[0]![0].message).not.toContain('secret-path');
  });

  it('does not retry a 4xx other than 408 and 429', async () => {
    const { received, url } = await endpoint([400]);
    const errors: Error[] = [];
    await httpAlertSink(url, { retryDelayMs: 10, onError: (error) => errors.push(error) })(alert);
    expect(received).toHaveLength(1);
    expect(errors.map((e) => e.message)).toEqual(['alert refusals:signature_mismatch (open) not delivered: answered HTTP 400']);
  });

  it('gives up on an endpoint that never answers after timeoutMs per attempt', async () => {
    const { received, url } = await endpoint(['hang']);
    const errors: Error[] = [];
    // 1 s, not 100 ms: on a loaded machine a request can take longer than 100 ms to reach the server,
    // and the attempt then ends before the endpoint counts it.
    await httpAlertSink(url, { timeoutMs: 1000, retries: 1, retryDelayMs: 10, onError: (error) => errors.push(error) })(alert);
    expect(received).toHaveLength(2);
    expect(errors.map((e) => e.message)).toEqual(['alert refusals:signature_mismatch (open) not delivered: no answer within 1000 ms']);
  });

  it('refuses a URL that is not http(s) at once, and bad bounds', () => {
    expect(() => httpAlertSink('ftp://pager.example.com')).toThrow(new TypeError('httpAlertSink expects an http(s) URL, got ftp:'));
    expect(() => httpAlertSink('not a url')).toThrow(new TypeError('httpAlertSink expects an http(s) URL'));
    expect(() => httpAlertSink('https://pager.example.com', { timeoutMs: -1 })).toThrow(RangeError);
  });
});
