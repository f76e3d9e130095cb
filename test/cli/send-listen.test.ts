import { execFileSync } from 'node:child_process';
import { createReadStream, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killChildren, run, startListener, tempDir, writeTemp, removeTempDirs } from './helpers.js';

afterEach(killChildren);
afterAll(removeTempDirs);

const KEY = 'listen-test-key';
/** Odd spacing and non-ASCII text: only a byte-for-byte copy reproduces it. */
const compact = (tick: string) =>
  `{"action":"app:budget:auto-shutdown:fired",  "status":"success","timestamp":"2026-04-27T10:30:00.1Z","data":{"app":"café","rack":"r","actor":"system","tick_id":"${tick}","schema_version":"1","dry_run":"false","cap_usd":"100","spend_usd":"101"}}`;
const TICK_A = 'tick-2026-04-27T10:30:00Z-9fe533fc297241caa6ca5760dc9b9836';
const TICK_B = 'tick-2026-04-27T10:31:00Z-0fe533fc297241caa6ca5760dc9b9836';

describe('send to listen over HTTP', { timeout: 60_000 }, () => {
  it('prints processed, duplicate and unsigned deliveries, and logs exactly the accepted payloads before answering', async () => {
    const dir = tempDir();
    const log = join(dir, 'events.jsonl');
    const listener = await startListener(['--key', KEY, '--log', log]);
    expect(listener.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks$/);

    const first = writeTemp(dir, 'first.json', compact(TICK_A));
    const sent = await run(['send', '--url', listener.url, '--key', KEY, '--event', first]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/^default {2}http:\/\/127\.0\.0\.1:\d+\/… {2}200 processed {2}\d+ ms\n$/);
    // send has exited, so the 200 was sent, so the line is already on disk.
    expect(readFileSync(log, 'utf8')).toBe(`${compact(TICK_A)}\n`);
    const processed = await listener.waitForLine(/processed/);
    expect(processed).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} {2}processed {2}app:budget:auto-shutdown:fired {2}app=café {2}tick_id=tick-2026-04-27T10:30:00Z-9fe5/,
    );
    expect(processed).not.toContain('\u001b['); // stdout is a pipe: no colour

    const again = await run(['send', '--url', listener.url, '--key', KEY, '--event', first]);
    expect(again.code).toBe(0); // a duplicate is answered 200
    await listener.waitForLine(/ {2}duplicate {2}app:budget:auto-shutdown:fired/);

    const unsigned = await run(['send', '--url', listener.url, '--event', first]);
    expect(unsigned.code).toBe(1);
    expect(unsigned.stdout).toMatch(/ {2}401 missing_header {2}\d+ ms\n$/);
    expect(unsigned.stderr).toMatch(/^rack-webhooks send: note: no key .* sending unsigned/);
    await listener.waitForLine(/ {2}401 missing_header: /);

    // A pretty-printed body spans lines, so it is logged re-serialised; a test event, and an unknown
    // action (ignored, but accepted), are logged as sent.
    const pretty = writeTemp(dir, 'pretty.json', JSON.stringify(JSON.parse(compact(TICK_B)), null, 2));
    expect((await run(['send', '--url', listener.url, '--key', KEY, '--event', pretty])).code).toBe(0);
    const unknown = '{"action":"app:from-the-future","status":"success","timestamp":"2026-04-27T10:30:00Z","data":{}}';
    expect((await run(['send', '--url', listener.url, '--key', KEY, '--event', writeTemp(dir, 'unknown.json', unknown)])).code).toBe(0);
    await listener.waitForLine(/ {2}ignored {4}app:from-the-future {2}app=- {2}tick_id=-/);
    const generated = await run([
      'send',
      '--url',
      listener.url,
      '--key',
      KEY,
      '--action',
      'app:budget:cap',
      '--set',
      'data.app=generated-app',
      '--set',
      'status=error',
    ]);
    expect(generated.code).toBe(0);
    await listener.waitForLine(/processed {2}app:budget:cap {2}app=generated-app/);

    const lines = readFileSync(log, 'utf8').split('\n');
    expect(lines).toHaveLength(5); // four payloads and the final newline
    expect(lines.slice(0, 3)).toEqual([compact(TICK_A), JSON.stringify(JSON.parse(compact(TICK_B))), unknown]);
    expect(JSON.parse(lines[3]!)).toMatchObject({ action: 'app:budget:cap', status: 'error', data: { app: 'generated-app' } });
    expect(lines[4]).toBe('');

    // Only POST; and the process stops cleanly on a signal.
    const get = await fetch(listener.url);
    expect(get.status).toBe(405);
    await listener.waitForLine(/ {2}405 method_not_allowed$/);
    expect(await listener.stop('SIGINT')).toBe(0);
  }, 20_000);

  it('verifies with the header name and key encoding it is given', async () => {
    const hexKey = (await run(['keygen'])).stdout.trim();
    const listener = await startListener(['--key', hexKey, '--header-name', 'X-Rack-Signature']);
    const wrong = await run([
      'send',
      '--url',
      listener.url,
      '--key',
      hexKey,
      '--header-name',
      'X-Rack-Signature',
      '--action',
      'app:create',
    ]);
    expect(wrong.code).toBe(0); // utf8 on both sides
    await listener.waitForLine(/processed {2}app:create/);
    const missing = await run(['send', '--url', listener.url, '--key', hexKey, '--action', 'app:create']);
    expect(missing.code).toBe(1); // sent under Service-Signature, read from X-Rack-Signature
    await listener.waitForLine(/401 missing_header/);
    expect(await listener.stop()).toBe(0);
  });

  it('signs and verifies with hex-decoded keys on both sides', async () => {
    const hexKey = (await run(['keygen'])).stdout.trim();
    const listener = await startListener(['--key', hexKey, '--secret-encoding', 'hex']);
    const sent = await run(['send', '--url', listener.url, '--key', hexKey, '--secret-encoding', 'hex', '--action', 'app:budget:cap']);
    expect(sent.code).toBe(0);
    await listener.waitForLine(/processed {2}app:budget:cap/);
    const utf8 = await run(['send', '--url', listener.url, '--key', hexKey, '--action', 'app:budget:cap']);
    expect(utf8.code).toBe(1); // signed with the key text: the listener reports the mismatch
    await listener.waitForLine(/401 signature_mismatch/);
    expect(await listener.stop()).toBe(0);
  });

  it('listen with only the key accepts a deployed rack (vendor header, hex key); send says when a deployed rack would send unsigned', async () => {
    const hexKey = (await run(['keygen'])).stdout.trim();
    const listener = await startListener(['--key', hexKey]);
    const deployed = ['--key', hexKey, '--secret-encoding', 'hex', '--header-name', 'Acme-Signature', '--action', 'app:budget:cap'];
    expect((await run(['send', '--url', listener.url, ...deployed])).code).toBe(0);
    await listener.waitForLine(/processed {2}app:budget:cap/);
    const weak = 'ab'.repeat(32);
    const unsigned = await run(['send', '--url', listener.url, '--key', weak, '--secret-encoding', 'hex', '--action', 'app:budget:cap']);
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toContain(
      'note: sent unsigned, as a deployed rack does with such keys (ns=k8s at=webhook_signing_key result=invalid reason=repeated_byte key=1 count=1 signing=disabled)',
    );
    expect(unsigned.stdout + unsigned.stderr).not.toContain(weak);
    await listener.waitForLine(/401 missing_header/);
    expect(await listener.stop()).toBe(0);
  });

  it('dispatches a config map to every receiver, reporting the entries the rack would skip', async () => {
    const dir = tempDir();
    const listener = await startListener(['--key', KEY]);
    const config = writeTemp(
      dir,
      'webhooks.json',
      JSON.stringify({
        good: listener.url,
        empty: '',
        broken: '{"url": ',
        nourl: '{"timeout":"5s"}',
        json: JSON.stringify({ url: listener.url, timeout: '5s' }),
      }),
    );
    const sent = await run(['send', '--config', config, '--action', 'build:create'], { env: { RACK_WEBHOOK_SECRETS: KEY } });
    expect(sent.code).toBe(1); // not every receiver answered 2xx
    const lines = sent.stdout.trimEnd().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/^good {2}http:\/\/127\.0\.0\.1:\d+\/… {2}200 (processed|duplicate) {2}\d+ ms$/),
      'empty  -  skipped (empty_value)  0 ms',
      'broken  -  skipped (invalid_json)  0 ms',
      'nourl  -  skipped (empty_url_in_json)  0 ms',
      expect.stringMatching(/^json {2}http:\/\/127\.0\.0\.1:\d+\/… {2}200 (processed|duplicate) {2}\d+ ms$/),
    ]);
    // The same event reached both receivers: one processed, one duplicate (same tick_id).
    await listener.waitForLine(/processed {2}build:create/);
    await listener.waitForLine(/duplicate {2}build:create/);
    expect(sent.stderr).toBe('');
  });

  it('reports a receiver that is down, and one that does not answer in time', async () => {
    const listener = await startListener(['--key', KEY]);
    const port = new URL(listener.url).port;
    expect(await listener.stop()).toBe(0);
    // Accepts the request, never answers: the entry's own timeout must end the dispatch.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const dir = tempDir();
      const config = writeTemp(
        dir,
        'webhooks.json',
        JSON.stringify({
          down: `http://127.0.0.1:${port}/webhooks`,
          slow: { url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, timeout: '300ms' },
        }),
      );
      const sent = await run(['send', '--config', config, '--key', KEY, '--action', 'app:create']);
      expect(sent.code).toBe(1);
      expect(sent.stdout.trimEnd().split('\n')).toEqual([
        expect.stringMatching(/^down {2}http:\/\/127\.0\.0\.1:\d+\/… {2}error \(.*ECONNREFUSED.*\) {2}\d+ ms$/),
        expect.stringMatching(/^slow {2}http:\/\/127\.0\.0\.1:\d+ {2}timeout after 300 ms {2}\d+ ms$/),
      ]);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('prints webhook URLs as scheme://host[:port], never their user:pass@, path or query, in errors too', { timeout: 60_000 }, async () => {
    const listener = await startListener(['--key', KEY]);
    const origin = new URL(listener.url).origin;
    const config = writeTemp(
      tempDir(),
      'webhooks.json',
      JSON.stringify({
        path: `${origin}/services/T000/B000/PATHMARKER?token=QUERYMARKER`,
        bare: origin,
        userinfo: `http://user:PASSMARKER@${new URL(listener.url).host}/webhooks`,
        broken: 'not a URL URLMARKER',
      }),
    );
    const sent = await run(['send', '--config', config, '--key', KEY, '--action', 'app:create']);
    expect(sent.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^path {2}${origin}/… {2}200 (processed|duplicate) {2}\\d+ ms$`)),
      expect.stringMatching(new RegExp(`^bare {2}${origin} {2}200 (processed|duplicate) {2}\\d+ ms$`)),
      // The credentials go as basic auth (as the rack sends them), and are never shown.
      expect.stringMatching(new RegExp(`^userinfo {2}${origin}/… {2}200 (processed|duplicate) {2}\\d+ ms$`)),
      expect.stringMatching(/^broken {2}\(not a URL\) {2}error \(Invalid URL\) {2}\d+ ms$/),
    ]);
    for (const marker of ['PATHMARKER', 'QUERYMARKER', 'PASSMARKER', 'URLMARKER']) expect(sent.stdout + sent.stderr).not.toContain(marker);
    expect(await listener.stop()).toBe(0);
  });

  it('logs to a pipe without syncing it, instead of failing every delivery', async () => {
    const fifo = join(tempDir(), 'log.fifo');
    execFileSync('mkfifo', [fifo]);
    // The reader is opened first: listen's open of the FIFO waits for one.
    let piped = '';
    const reader = createReadStream(fifo, { encoding: 'utf8' }).on('data', (chunk) => (piped += chunk));
    const readerClosed = new Promise<void>((resolve) => reader.on('close', () => resolve())); // once listen closes its end
    const listener = await startListener(['--key', KEY, '--log', fifo]);
    const event = writeTemp(tempDir(), 'event.json', compact(TICK_A));
    const sent = await run(['send', '--url', listener.url, '--key', KEY, '--event', event]);
    expect(sent, sent.stdout).toMatchObject({ code: 0, stdout: expect.stringMatching(/ {2}200 processed {2}\d+ ms\n$/) });
    await listener.waitForLine(/processed {2}app:budget:auto-shutdown:fired/);
    expect(await listener.stop()).toBe(0);
    await readerClosed;
    expect(piped).toBe(`${compact(TICK_A)}\n`);
  });
});
