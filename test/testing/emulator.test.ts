import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSignatureHeader, verifySync } from '../../src/index.js';
import { createRackEmulator, createTestEvent, deployedJson, parseDuration, parseReceiverEntry } from '../../src/testing/index.js';

/** A key a deployed rack accepts: 64 lowercase hex characters with enough entropy. */
const DEPLOYED_KEY = '8f3a1c9e5b7d2f4a6c8e0b1d3f5a7c9e2b4d6f8a0c1e3f5a7b9d1c3e5f7a9b2d';
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

describe('receiver configuration, exactly as a deployed rack parses it (field notes)', () => {
  it('reads url and timeout case-insensitively; a non-string timeout or url makes the value invalid_json; null is unset', () => {
    expect(parseReceiverEntry('{"URL":"http://x","Timeout":"5s"}')).toEqual({ url: 'http://x', timeoutMs: 5000 });
    expect(parseReceiverEntry('{"Url":"http://x","TIMEOUT":"300ms"}')).toEqual({ url: 'http://x', timeoutMs: 300 });
    expect(parseReceiverEntry('{"url":"http://x","timeout":5}')).toEqual({ skipped: 'invalid_json' });
    expect(parseReceiverEntry('{"url":"http://x","timeout":{"s":5}}')).toEqual({ skipped: 'invalid_json' });
    expect(parseReceiverEntry('{"url":5}')).toEqual({ skipped: 'invalid_json' });
    expect(parseReceiverEntry('{"url":"http://x","timeout":null}')).toEqual({ url: 'http://x', timeoutMs: 30_000 });
    expect(parseReceiverEntry('{"url":"http://a","URL":"http://b"}')).toEqual({ url: 'http://b', timeoutMs: 30_000 });
    expect(parseReceiverEntry('{"url":"http://x","other":5}')).toEqual({ url: 'http://x', timeoutMs: 30_000 });
    expect(parseReceiverEntry('{"url":"http://x"} trailing')).toEqual({ skipped: 'invalid_json' });
  });

  it.each([
    ['300ms', 300],
    ['5s', 5000],
    ['1m30s', 90_000],
    ['1.5h', 5_400_000],
    [' 5s', 30_000],
    ['5s ', 30_000],
    ['5', 30_000],
    ['0', 30_000],
    ['-1s', 30_000],
    ['5 s', 30_000],
    ['.5s', 500],
    ['1.s', 1000],
    ['.s', 30_000],
  ])('timeout %j dispatches with %d ms', (timeout, ms) => {
    expect(parseReceiverEntry(JSON.stringify({ url: 'http://x', timeout }))).toEqual({ url: 'http://x', timeoutMs: ms });
  });

  it("trims the value as Go's strings.TrimSpace does", () => {
    expect(parseReceiverEntry('\u0085 http://x \t\n')).toEqual({ url: 'http://x', timeoutMs: 30_000 });
    expect(parseReceiverEntry('\ufeffhttp://x')).toEqual({ url: '\ufeffhttp://x', timeoutMs: 30_000 });
    expect(parseReceiverEntry('\u3000\u00a0')).toEqual({ skipped: 'empty_value' });
    expect(parseReceiverEntry('  {"url":"http://x"}  ')).toEqual({ url: 'http://x', timeoutMs: 30_000 });
  });

  // CPU-bound (three properties, 100 runs each): 8.7 s at load 14 on 2 cores, past vitest's 5 s default.
  // A synchronous test cannot be stopped at its bound anyway: the bound only says how long CPU work may take.
  it(
    'property: any casing of the keys reads the same; any non-string timeout is invalid_json; surrounding space never matters',
    { timeout: 60_000 },
    () => {
      const casing = (word: string) =>
        fc
          .array(fc.boolean(), { minLength: word.length, maxLength: word.length })
          .map((upper) => [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
      const durations = fc.record({ value: fc.integer({ min: 1, max: 10_000 }), unit: fc.constantFrom('ms', 's', 'm', 'h') });
      const msOf = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
      fc.assert(
        fc.property(casing('url'), casing('timeout'), durations, fc.webUrl(), (urlKey, timeoutKey, d, url) => {
          const value = `{${JSON.stringify(urlKey)}:${JSON.stringify(url)},${JSON.stringify(timeoutKey)}:"${d.value}${d.unit}"}`;
          expect(parseReceiverEntry(value)).toEqual({ url, timeoutMs: d.value * msOf[d.unit] });
        }),
      );
      const notString = fc.oneof(
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }), // JSON has no Infinity: stringify writes null, which Go reads as unset
        fc.boolean(),
        fc.array(fc.string()),
        fc.dictionary(fc.string(), fc.string()),
      );
      fc.assert(
        fc.property(casing('timeout'), notString, (timeoutKey, timeout) => {
          expect(parseReceiverEntry(JSON.stringify({ url: 'http://x', [timeoutKey]: timeout }))).toEqual({ skipped: 'invalid_json' });
        }),
      );
      fc.assert(
        fc.property(fc.string(), fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u2003'), (value, space) => {
          const result = parseReceiverEntry(value);
          expect(parseReceiverEntry(`${space}${value}${space}`)).toEqual(result);
          if ('url' in result) expect(result.timeoutMs).toBeGreaterThan(0);
        }),
      );
    },
  );
});

describe("Go's duration syntax, exactly (property tests)", () => {
  const unitNs = { ns: 1, us: 1e3, '\u00b5s': 1e3, '\u03bcs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 } as const;
  const part = fc.record({
    value: fc.integer({ min: 0, max: 1000 }),
    unit: fc.constantFrom(...(Object.keys(unitNs) as (keyof typeof unitNs)[])),
  });

  it('a sequence of number-unit parts is their sum; a sign applies to the whole', () => {
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 6 }), fc.constantFrom('', '+', '-'), (parts, sign) => {
        const text = sign + parts.map((p) => `${p.value}${p.unit}`).join('');
        const ns = parts.reduce((sum, p) => sum + p.value * unitNs[p.unit], 0);
        const expected = (sign === '-' ? -ns : ns) / 1e6;
        expect(parseDuration(text)).toBeCloseTo(expected, 6);
      }),
    );
  });

  it('a bare number other than 0, any whitespace, or an unknown unit is not a duration', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e9 }), (n) => {
        expect(parseDuration(String(n))).toBeUndefined();
        expect(parseDuration(` ${n}s`)).toBeUndefined();
        expect(parseDuration(`${n}s `)).toBeUndefined();
        expect(parseDuration(`${n} s`)).toBeUndefined();
        expect(parseDuration(`${n}sec`)).toBeUndefined();
        expect(parseDuration(`${n}S`)).toBeUndefined();
      }),
    );
    expect([
      parseDuration('0'),
      parseDuration('-0'),
      parseDuration('+0'),
      parseDuration(''),
      parseDuration('-'),
      parseDuration('constructor'),
    ]).toEqual([0, 0, 0, undefined, undefined, undefined]);
  });

  it('never throws, and gives a finite number or undefined for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789.+-nsuµμmh '.split('')) }), (text) => {
        const value = parseDuration(text);
        expect(value === undefined || Number.isFinite(value)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('holds at most an int64 of nanoseconds, as Go does', () => {
    expect(parseDuration('2562047h47m16.854775807s')).toBeCloseTo(9_223_372_036_854.775, 3);
    expect(parseDuration('2562047h47m16.854775808s')).toBeUndefined();
    expect(parseDuration('-2562047h47m16.854775808s')).toBeCloseTo(-9_223_372_036_854.775, 3);
    expect(parseDuration('99999999999999999999s')).toBeUndefined();
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
      expect(request!.body).toBe(deployedJson(event));
      expect(JSON.parse(request!.body)).toEqual(event);
      const header = request!.headers['service-signature'] as string;
      expect(parseSignatureHeader(header).signatures).toHaveLength(4);
      keys.forEach((key) => expect(verifySync(request!.body, header, { secrets: key }).secretIndex).toBe(0));
    }
  });

  it('signs with hex-decoded keys under a vendor header name when the rack does', async () => {
    const r = await receiver();
    const results = await createRackEmulator({
      webhooks: { r: r.url },
      signingKeys: DEPLOYED_KEY,
      secretEncoding: 'hex',
      headerName: 'Acme-Signature',
      log: () => {},
    }).dispatch('{"a":1}');
    expect(results[0]).toMatchObject({ status: 200, signed: true });
    expect(results[0]!.signingDisabled).toBeUndefined();
    const header = r.requests[0]!.headers['acme-signature'] as string;
    expect(r.requests[0]!.headers['service-signature']).toBeUndefined();
    expect(verifySync('{"a":1}', header, { secrets: DEPLOYED_KEY, secretEncoding: 'hex' }).secretIndex).toBe(0);
    // What the SDK's receiver accepts with nothing but the key, pasted as the rack holds it.
    expect(verifySync('{"a":1}', header, { secrets: DEPLOYED_KEY })).toMatchObject({ secretIndex: 0, secretEncoding: 'hex' });
  });

  it('sends unsigned with more than 4 keys, as a deployed rack does, and says so in its log and its results', async () => {
    const r = await receiver();
    const lines: string[] = [];
    const emulator = createRackEmulator({ webhooks: { r: r.url }, signingKeys: 'a,b,c,d,e', log: (line) => lines.push(line) });
    expect(lines).toEqual(['ns=k8s at=webhook_signing_key result=invalid reason=too_many_keys count=5 signing=disabled']);
    const [result] = await emulator.dispatch('{"action":"app:create"}');
    expect(result).toMatchObject({ status: 200, signed: false, signingDisabled: lines[0] });
    expect(r.requests[0]!.headers['service-signature']).toBeUndefined();
    emulator.setSigningKeys(['a', 'b', 'c', 'd']);
    expect((await emulator.dispatch('{"action":"app:create"}'))[0]).toMatchObject({ signed: true });
    expect(parseSignatureHeader(r.requests[1]!.headers['service-signature'] as string).signatures).toHaveLength(4);
    emulator.setSigningKeys(undefined);
    const [unsigned] = await emulator.dispatch('{"action":"app:create"}');
    expect(unsigned).toMatchObject({ signed: false });
    expect(unsigned!.signingDisabled).toBeUndefined();
    expect(r.requests[2]!.headers['service-signature']).toBeUndefined();
    expect(r.requests[2]!.body).toBe('{"action":"app:create"}');
  });

  it.each([
    ['a key of 40 characters', 'ab12'.repeat(10), 'too_short key=1'],
    ['a trailing comma', `${DEPLOYED_KEY},`, 'empty_entry key=2'],
    ['an odd length', `${DEPLOYED_KEY}a`, 'odd_length key=1'],
    ['upper-case hex', DEPLOYED_KEY.toUpperCase(), 'not_lowercase_hex key=1'],
    ['an all-zero key', '0'.repeat(64), 'all_zero key=1'],
    ['one repeated byte', 'ab'.repeat(32), 'repeated_byte key=1'],
    ['low entropy', '0123456789abcdef'.repeat(4).replace(/^0123/, '1023'), 'low_entropy key=1'],
    ['a good key beside a bad one', `${DEPLOYED_KEY},${'ab'.repeat(32)}`, 'repeated_byte key=2'],
  ])('with %s, a deployed rack (hex keys) sends unsigned', async (_, keys, reason) => {
    const r = await receiver();
    const lines: string[] = [];
    const emulator = createRackEmulator({
      webhooks: { r: r.url },
      signingKeys: keys,
      secretEncoding: 'hex',
      log: (line) => lines.push(line),
    });
    const [result] = await emulator.dispatch('{"a":1}');
    expect(lines[0]).toMatch(new RegExp(`^ns=k8s at=webhook_signing_key result=invalid reason=${reason} count=\\d signing=disabled$`));
    expect(result).toMatchObject({ status: 200, signed: false, signingDisabled: lines[0] });
    expect(Object.keys(r.requests[0]!.headers).filter((name) => name.endsWith('-signature'))).toEqual([]);
  });

  it('takes any key under the spec (utf8) unless keyChecks is set', async () => {
    const r = await receiver();
    const spec = createRackEmulator({ webhooks: { r: r.url }, signingKeys: 'short-key', log: () => {} });
    expect((await spec.dispatch('{"a":1}'))[0]).toMatchObject({ signed: true });
    const checked = createRackEmulator({ webhooks: { r: r.url }, signingKeys: 'short-keys', keyChecks: true, log: () => {} });
    expect((await checked.dispatch('{"a":1}'))[0]).toMatchObject({ signed: false, signingDisabled: expect.stringContaining('too_short') });
  });

  it('serialises events as the deployed sender does: compact, data keys sorted, <>& escaped', async () => {
    const r = await receiver();
    const event = {
      action: 'rack:update',
      status: 'success',
      timestamp: '2026-04-27T10:30:00Z',
      data: { rack: 'r<1>', name: 'a&b', actor: 'x\u2028' },
    };
    await createRackEmulator({ webhooks: { r: r.url }, log: () => {} }).dispatch(event);
    expect(r.requests[0]!.body).toBe(
      '{"action":"rack:update","status":"success","timestamp":"2026-04-27T10:30:00Z","data":{"actor":"x\\u2028","name":"a\\u0026b","rack":"r\\u003c1\\u003e"}}',
    );
    await createRackEmulator({ webhooks: { r: r.url }, json: 'plain', log: () => {} }).dispatch(event);
    expect(r.requests[1]!.body).toBe(JSON.stringify(event));
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
    // On the dispatch path a deployed rack logs an empty name (field notes); the results name the entries.
    expect(lines.sort()).toEqual([
      'ns=webhook_parse at=skip reason=empty_url_in_json name=',
      'ns=webhook_parse at=skip reason=empty_value name=',
      'ns=webhook_parse at=skip reason=invalid_json name=',
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
    const lines: string[] = [];
    const emulator = createRackEmulator({
      webhooks: { failing: failing.url, closed: gone.url, ok: (await receiver()).url },
      log: (line) => lines.push(line),
    });
    const results = await emulator.dispatch(createTestEvent('app:budget:cap'));
    expect(failing.requests).toHaveLength(1); // dispatch() resolved: nothing was sent again before
    expect(results[0]).toMatchObject({ name: 'failing', status: 503 });
    expect(results[2]).toMatchObject({ name: 'ok', status: 200 });
    // Only an answer of 400 or more is logged, as a deployed rack logs it: the host, never the path.
    expect(lines).toEqual([`ns=event_dispatch at=non2xx url_host=${new URL(failing.url).host} status=503`]);
    expect(results[1]!.error).toMatch(/ECONNREFUSED|fetch failed|connect/);
    // The next request the failing receiver sees is the next event, not the first one again.
    await emulator.dispatch(createTestEvent('app:create'));
    expect(failing.requests.map((request) => (JSON.parse(request.body) as { action: string }).action)).toEqual([
      'app:budget:cap',
      'app:create',
    ]);
  });
});
