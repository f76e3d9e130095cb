import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSignatureHeader, verifySync } from '../../src/index.js';
import { createRackEmulator, createTestEvent, parseDuration, parseReceiverEntry } from '../../src/testing/index.js';
import { recordingReceiver } from './receivers.js';

const open: Array<{ close: () => Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});
async function receiver(options?: { status?: number; delayMs?: number }) {
  const r = await recordingReceiver(options);
  open.push(r);
  return r;
}

describe('receiver configuration entries, as the rack parses them', () => {
  it("takes both value forms and skips bad entries with the rack's reasons", () => {
    expect(parseReceiverEntry(' https://a.example/hook ')).toEqual({ url: 'https://a.example/hook', timeoutMs: 30_000 });
    expect(parseReceiverEntry('{"url":"https://b.example","timeout":"5s"}')).toEqual({ url: 'https://b.example', timeoutMs: 5000 });
    expect(parseReceiverEntry('   ')).toEqual({ skipped: 'empty_value' });
    expect(parseReceiverEntry('{"url":')).toEqual({ skipped: 'invalid_json' });
    expect(parseReceiverEntry('{"timeout":"5s"}')).toEqual({ skipped: 'empty_url_in_json' });
    expect(parseReceiverEntry('{"url":"  "}')).toEqual({ skipped: 'empty_url_in_json' });
  });

  it.each([['garbage'], ['0s'], ['-5s'], [''], ['5'], ['9999999999999999999999h'], ['2562048h']])(
    'an invalid, zero, negative or longer-than-Go timeout %j falls back to 30 s',
    (timeout) => {
      expect(parseReceiverEntry(JSON.stringify({ url: 'http://x', timeout }))).toEqual({ url: 'http://x', timeoutMs: 30_000 });
    },
  );

  it('takes both micro signs Go takes, and the longest duration Go can hold', () => {
    expect([parseDuration('1500\u00b5s'), parseDuration('1500\u03bcs'), parseDuration('1500us')]).toEqual([1.5, 1.5, 1.5]);
    expect(parseDuration('2562047h')).toBe(2562047 * 3_600_000);
    expect(parseDuration('2562048h')).toBeUndefined();
  });

  it('parses Go durations', () => {
    expect([
      parseDuration('5s'),
      parseDuration('1m'),
      parseDuration('90s'),
      parseDuration('1m30s'),
      parseDuration('500ms'),
      parseDuration('1.5h'),
    ]).toEqual([5000, 60_000, 90_000, 90_000, 500, 5_400_000]);
    fc.assert(
      fc.property(fc.nat(100), fc.nat(59), fc.nat(999), (m, s, ms) => {
        expect(parseDuration(`${m}m${s}s${ms}ms`)).toBe(m * 60_000 + s * 1000 + ms);
      }),
    );
    fc.assert(
      fc.property(fc.string(), (text) => {
        const value = parseDuration(text);
        expect(value === undefined || Number.isFinite(value)).toBe(true);
      }),
    );
  });
});

describe('dispatching to real HTTP receivers', () => {
  it('POSTs JSON to every receiver in both value forms, signed with one v1 per key', async () => {
    const [a, b] = [await receiver(), await receiver()];
    const keys = ['k1', 'k2', 'k3', 'k4'];
    const emulator = createRackEmulator({
      webhooks: { plain: a.url, json: JSON.stringify({ url: b.url, timeout: '5s' }) },
      signingKeys: keys,
      log: () => {},
    });
    const event = createTestEvent('app:budget:auto-shutdown:fired');
    const results = await emulator.dispatch(event);
    expect(results.map((r) => [r.name, r.status, r.timeoutMs])).toEqual([
      ['plain', 200, 30_000],
      ['json', 200, 5000],
    ]);
    for (const r of [a, b]) {
      expect(r.requests).toHaveLength(1);
      const [request] = r.requests;
      expect(request!.method).toBe('POST');
      expect(request!.headers['content-type']).toBe('application/json');
      expect(request!.body).toBe(JSON.stringify(event));
      const header = request!.headers['service-signature'] as string;
      expect(parseSignatureHeader(header).signatures).toHaveLength(4);
      keys.forEach((key) => expect(verifySync(request!.body, header, { secrets: key }).secretIndex).toBe(0));
    }
  });

  it('signs with hex-decoded keys when the rack does', async () => {
    const r = await receiver();
    const key = 'ab'.repeat(32);
    await createRackEmulator({ webhooks: { r: r.url }, signingKeys: key, secretEncoding: 'hex', log: () => {} }).dispatch('{"a":1}');
    const header = r.requests[0]!.headers['service-signature'] as string;
    expect(verifySync('{"a":1}', header, { secrets: key, secretEncoding: 'hex' }).secretIndex).toBe(0);
  });

  it('refuses a fifth key, as the rack does, and sends no signature header without a key', async () => {
    expect(() => createRackEmulator({ signingKeys: 'a,b,c,d,e' })).toThrow(RangeError);
    const emulator = createRackEmulator({ signingKeys: ['a'] });
    expect(() => emulator.setSigningKeys(['a', 'b', 'c', 'd', 'e'])).toThrow(/at most 4/);
    const r = await receiver();
    emulator.setSigningKeys(undefined);
    emulator.setWebhooks({ r: r.url });
    await emulator.dispatch('{"action":"app:create"}');
    expect(r.requests[0]!.headers['service-signature']).toBeUndefined();
    expect(r.requests[0]!.body).toBe('{"action":"app:create"}');
  });

  it('skips bad entries with the log line, and never takes a JSON object without url for a URL', async () => {
    const good = await receiver();
    const lines: string[] = [];
    const emulator = createRackEmulator({
      webhooks: { good: good.url, blank: ' ', broken: '{"url": nope', nourl: JSON.stringify({ timeout: '5s', href: good.url }) },
      log: (line) => lines.push(line),
    });
    const results = await emulator.dispatch(createTestEvent('app:budget:cap'));
    expect(results.map((r) => [r.name, r.skipped ?? r.status])).toEqual([
      ['good', 200],
      ['blank', 'empty_value'],
      ['broken', 'invalid_json'],
      ['nourl', 'empty_url_in_json'],
    ]);
    expect(lines.sort()).toEqual([
      'ns=webhook_parse at=skip reason=empty_url_in_json name=nourl',
      'ns=webhook_parse at=skip reason=empty_value name=blank',
      'ns=webhook_parse at=skip reason=invalid_json name=broken',
    ]);
    expect(good.requests).toHaveLength(1);
  });

  it('reads the map at every dispatch: a change applies to the next event', async () => {
    const [a, b] = [await receiver(), await receiver()];
    let config: Record<string, string> = { r: a.url };
    const emulator = createRackEmulator({ webhooks: () => config, log: () => {} });
    await emulator.dispatch(createTestEvent('app:budget:cap'));
    config = { r: b.url };
    await emulator.dispatch(createTestEvent('app:budget:cap'));
    expect([a.requests.length, b.requests.length]).toEqual([1, 1]);
  });

  it('enforces each timeout per receiver: a slow receiver does not delay a fast one', async () => {
    const slow = await receiver({ delayMs: 3000 });
    const fast = await receiver();
    const emulator = createRackEmulator({
      webhooks: { slow: JSON.stringify({ url: slow.url, timeout: '300ms' }), fast: fast.url },
      log: () => {},
    });
    const started = performance.now();
    const results = await emulator.dispatch(createTestEvent('app:budget:auto-shutdown:fired'));
    const [slowResult, fastResult] = results;
    expect(slowResult).toMatchObject({ name: 'slow', timedOut: true, timeoutMs: 300 });
    expect(slowResult!.durationMs).toBeGreaterThanOrEqual(290);
    expect(fastResult).toMatchObject({ name: 'fast', status: 200 });
    expect(fastResult!.durationMs).toBeLessThan(250);
    expect(fast.requests[0]!.at - started).toBeLessThan(250); // delivered at once, not after the slow one
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('dispatches with a timeout that is not a whole number of milliseconds', async () => {
    const r = await receiver();
    const emulator = createRackEmulator({
      webhooks: { frac: JSON.stringify({ url: r.url, timeout: '1500.5ms' }), micro: JSON.stringify({ url: r.url, timeout: '5\u00b5s' }) },
      log: () => {},
    });
    const [frac, micro] = await emulator.dispatch(createTestEvent('app:budget:auto-shutdown:fired'));
    expect(frac).toMatchObject({ name: 'frac', status: 200, timeoutMs: 1500.5 });
    // 5 µs rounds up to a 1 ms timer: the request goes out, and (almost always) times out, as the
    // rack's would; what it must never do is fail before sending.
    expect(micro!.name).toBe('micro');
    expect(micro!.timedOut === true || micro!.status === 200).toBe(true);
  });

  it('drops a reply body unread: a receiver that streams forever does not hold the dispatch', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const timer = setInterval(() => res.write(Buffer.alloc(64 * 1024)), 5);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push({
      close: () =>
        new Promise<void>((done) => {
          server.closeAllConnections();
          server.close(() => done());
        }),
    });
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    const started = performance.now();
    const [result] = await createRackEmulator({ webhooks: { endless: url }, log: () => {} }).dispatch('{"a":1}');
    expect(result).toMatchObject({ name: 'endless', status: 200 });
    expect(performance.now() - started).toBeLessThan(2000); // not the 30 s timeout
  });

  it('waits on a timeout longer than a Node timer can hold instead of timing out at once', async () => {
    const r = await receiver({ delayMs: 50 });
    // 600 h is 2,160,000,000 ms, past 2^31 - 1: a raw timer would fire after 1 ms.
    const emulator = createRackEmulator({ webhooks: { r: JSON.stringify({ url: r.url, timeout: '600h' }) }, log: () => {} });
    const [result] = await emulator.dispatch(createTestEvent('app:budget:auto-shutdown:fired'));
    expect(result).toMatchObject({ name: 'r', status: 200, timeoutMs: 2_160_000_000 });
  });

  it('never retries and reports (without acting on) a failing status or a refused connection', async () => {
    const failing = await receiver({ status: 503 });
    const gone = await recordingReceiver();
    await gone.close(); // a port that just stopped listening
    const emulator = createRackEmulator({ webhooks: { failing: failing.url, closed: gone.url }, log: () => {} });
    const results = await emulator.dispatch(createTestEvent('app:budget:cap'));
    expect(results[0]).toMatchObject({ name: 'failing', status: 503 });
    expect(results[1]!.error).toMatch(/ECONNREFUSED|fetch failed|connect/);
    await new Promise((r) => setTimeout(r, 100));
    expect(failing.requests).toHaveLength(1);
  });
});
