/**
 * The same commands run in this process through `runCli`: the spawned-process suites prove the
 * real exit codes and pipes, but coverage cannot see into child processes, so the project's
 * coverage thresholds are met here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/cli.js';
import { logLine } from '../../src/cli/delivery-log.js';
import { INPUT_LIMIT_BYTES, readBody } from '../../src/cli/input.js';
import { acceptedLine, dispatchLine, paint, rejectedLine, shortUrl, withoutUrl } from '../../src/cli/format.js';
import { closeMatch, nearest } from '../../src/cli/suggest.js';
import { captureOutput, cli, writtenSoFar } from '../kit/cli.js';
import { tempDir, writeTemp, removeTempDirs } from './helpers.js';

afterAll(removeTempDirs);
captureOutput();
const stdout = () => writtenSoFar().stdout;

const BODY = '{"action":"app:create","status":"success","timestamp":"2026-04-27T10:30:00Z","data":{"name":"a","rack":"r","actor":"x"}}';

describe('runCli in-process', () => {
  it('keygen, sign and verify', async () => {
    expect((await cli('keygen')).out).toMatch(/^[0-9a-f]{64}\n$/);
    expect(JSON.parse((await cli('keygen', '--json')).out).key).toMatch(/^[0-9a-f]{64}$/);
    const dir = tempDir();
    const body = writeTemp(dir, 'body.json', BODY);
    const header = (await cli('sign', '--key', 'k1,k2', '--timestamp', '100', '--file', body)).out.trim();
    expect(
      await cli(
        'verify',
        '--key-file',
        writeTemp(dir, 'keys', 'k2\n'),
        '--header',
        `service-signature: ${header}`,
        '--now',
        '90',
        '--file',
        body,
      ),
    ).toEqual({
      code: 0,
      out: 'ok: signature verified with secret #1 of 1 (secretIndex 0); signed 10 s in the future (t=100)\n',
      err: '',
    });
    process.env['RACK_WEBHOOK_SECRETS'] = 'nope';
    expect(await cli('verify', '--header', header, '--now', '100', '--file', body)).toMatchObject({
      code: 1,
      out: expect.stringMatching(/^signature_mismatch: /),
    });
    expect(await cli('verify', '--key', 'k1', '--file', body)).toMatchObject({
      code: 2,
      err: expect.stringMatching(/no signature: pass --header/),
    });
    expect(await cli('verify', '--key', 'zz', '--secret-encoding', 'hex', '--header', header, '--file', body)).toMatchObject({
      code: 2,
      err: expect.stringMatching(/not an even-length hex/),
    });
    expect(await cli('sign', '--key-file', writeTemp(dir, 'empty', ' \n'), '--file', body)).toMatchObject({
      code: 2,
      err: expect.stringMatching(/holds no key/),
    });
    expect(await cli('sign', '--key', 'k', '--timestamp', 'soon', '--file', body)).toMatchObject({
      code: 2,
      err: expect.stringMatching(/--timestamp must be/),
    });
  });

  it('usage, help and version', async () => {
    expect(await cli()).toMatchObject({ code: 2, err: expect.stringContaining('Usage: rack-webhooks <command>') });
    expect(await cli('help', 'send')).toMatchObject({ code: 0, out: expect.stringMatching(/^Usage: rack-webhooks send/) });
    expect(await cli('-h')).toMatchObject({ code: 0, out: expect.stringContaining('listen') });
    expect(await cli('--version')).toMatchObject({ code: 0, out: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(await cli('sing')).toMatchObject({ code: 2, err: expect.stringContaining('did you mean "sign"') });
    expect((await cli('0123456789abcdef0123456789abcdef')).err).not.toContain('0123456789abcdef');
    expect(await cli('keygen', '--json=yes')).toMatchObject({ code: 2, err: 'rack-webhooks keygen: --json takes no value\n' });
    expect(await cli('keygen', '--zzzzzz')).toMatchObject({ code: 2, err: 'rack-webhooks keygen: unknown flag --zzzzzz; see --help\n' });
    const dir = tempDir();
    const body = writeTemp(dir, 'body.json', BODY);
    expect(await cli('sign', '--key', 'k', '--file', body)).toMatchObject({ code: 0, out: expect.stringMatching(/^t=\d+,v1=/) });
    for (const [args, reason] of [
      [['sign', '--key', 'k', '--file', join(dir, 'missing')], /cannot read --file .* \(ENOENT\)/],
      [['sign', '--key'], /--key needs a value/],
      [['sign', 'stray'], /unexpected argument/],
      [['sign', '--key', 'k', '--secret-encoding', 'b64', '--file', body], /--secret-encoding must be utf8 or hex/],
      [['verify', '--key', 'k', '--header', 'h', '--tolerance', 'x', '--file', body], /--tolerance must be .* \(or Infinity\)/],
      [['send', '--url', 'ftp://x', '--action', 'app:create'], /--url must be an http/],
      [['send', '--url', 'http://127.0.0.1:9/', '--event', writeTemp(dir, 'bad.json', '{')], /is not valid JSON/],
      [['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:creat'], /nearest known actions: app:create, /],
      [['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:create', '--set', 'data'], /--set "data": write/],
      [
        ['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:budget:cap', '--set', 'data.cap_us=5'],
        /--set data\.cap_us: app:budget:cap has no field "cap_us"; did you mean data\.cap_usd\?/,
      ],
    ] as const) {
      expect(await cli(...args), args.join(' ')).toMatchObject({ code: 2, out: '', err: expect.stringMatching(reason) });
    }
    expect(await cli('listen', '--key', 'k')).toMatchObject({ code: 2, err: expect.stringMatching(/no port/) });
    expect(await cli('listen', '--key', 'k', '--port', '99999')).toMatchObject({ code: 2, err: expect.stringMatching(/--port must be/) });
    expect(await cli('listen', '--key', 'k', '--port', '0', '--log', '/nonexistent/dir/log')).toMatchObject({
      code: 2,
      err: expect.stringMatching(/cannot open --log/),
    });
  });

  it('send to listen, with the log, refusals and every send mode', async () => {
    const dir = tempDir();
    const log = join(dir, 'events.jsonl');
    const listening = runCli(['listen', '--port', '0', '--key', 'k', '--log', log, '--tolerance', 'inf']);
    await vi.waitFor(() => expect(stdout()).toMatch(/listening on /));
    const url = /listening on (\S+)/.exec(stdout())![1]!;
    const port = new URL(url).port;
    expect(await cli('listen', '--key', 'k', '--port', port)).toMatchObject({ code: 1, err: expect.stringMatching(/EADDRINUSE/) });

    const pretty = writeTemp(dir, 'pretty.json', `${BODY}\n`);
    expect(await cli('send', '--url', url, '--key', 'k', '--file', pretty)).toMatchObject({ code: 0 });
    expect(await cli('send', '--url', url, '--key', 'k', '--event', pretty, '--set', 'status=x')).toMatchObject({ code: 2 });
    expect(
      await cli(
        'send',
        '--url',
        url,
        '--key',
        'k',
        '--action',
        'app:budget:cap',
        '--set',
        'timestamp=2026-01-01T00:00:00Z',
        '--set',
        'data.typo=1',
        '--timestamp',
        String(Math.floor(Date.now() / 1000)),
      ),
    ).toMatchObject({
      code: 0,
      err: expect.stringContaining('data.typo is not a field of app:budget:cap'),
    });
    expect(await cli('send', '--url', url, '--action', 'app:create')).toMatchObject({
      code: 1,
      err: expect.stringContaining('sending unsigned'),
    });
    expect(await cli('send', '--url', url, '--key', 'other', '--action', 'app:create')).toMatchObject({ code: 1 });
    expect(await cli('send', '--url', url, '--key', 'k', '--event', writeTemp(dir, 'bad-event.json', '{"action":1}'))).toMatchObject({
      code: 1,
    });
    expect(
      await cli('send', '--url', url, '--key', 'k', '--event', writeTemp(dir, 'latin1.json', Buffer.from('{"a":"\xe9"}', 'latin1'))),
    ).toMatchObject({ code: 2, err: expect.stringContaining('not UTF-8') });
    const config = writeTemp(dir, 'webhooks.json', JSON.stringify({ a: url, b: ' ', c: { url } }));
    expect(await cli('send', '--config', config, '--key', 'k', '--action', 'build:create', '--verbose')).toMatchObject({
      code: 1,
      // The rack's own line has an empty name on the dispatch path; send's line for the entry names it.
      err: expect.stringContaining('reason=empty_value name=\n'),
      out: expect.stringMatching(/^b {2}- {2}skipped \(empty_value\)/m),
    });
    expect(await cli('send', '--config', config, '--url', url, '--action', 'build:create')).toMatchObject({
      code: 2,
      err: expect.stringContaining('not both'),
    });
    expect(await cli('send', '--config', writeTemp(dir, 'empty.json', '{}'), '--action', 'build:create')).toMatchObject({
      code: 2,
      err: expect.stringContaining('has no receivers'),
    });
    expect(await cli('send', '--config', writeTemp(dir, 'num.json', '{"a":1}'), '--action', 'build:create')).toMatchObject({
      code: 2,
      err: expect.stringContaining('must be a string'),
    });
    expect(await cli('send', '--action', 'build:create')).toMatchObject({ code: 2, err: expect.stringContaining('no receiver') });
    expect(await cli('send', '--url', url)).toMatchObject({ code: 2, err: expect.stringContaining('nothing to send') });

    const post = (headers: Record<string, string>, body = BODY) =>
      fetch(url, { method: 'POST', headers, body }).then((response) => response.status);
    expect(await fetch(url)).toMatchObject({ status: 405 });
    expect(await post({ 'content-type': 'text/plain' })).toBe(415);
    expect(await post({ 'content-type': 'application/json' }, 'x'.repeat(1024 * 1024 + 1))).toBe(413);
    expect(stdout()).toMatch(/405 method_not_allowed[\s\S]*415 unsupported_media_type[\s\S]*413 payload_too_large/);
    expect(stdout()).toMatch(/401 signature_mismatch: No v1 signature/);
    expect(stdout()).toMatch(/400 invalid_event: /);

    process.emit('SIGTERM');
    expect(await listening).toBe(0);
    expect(
      readFileSync(log, 'utf8')
        .split('\n')
        .map((line) => (line === '' ? '' : JSON.parse(line).action)),
    ).toEqual(['app:create', 'app:budget:cap', 'build:create', '']);
  });

  it('bounded files, checked flags, and a --log that cannot be synced', async () => {
    const dir = tempDir();
    const body = writeTemp(dir, 'body.json', BODY);
    for (const [args, reason] of [
      [
        ['sign', '--key-file', '/dev/zero', '--file', body],
        'rack-webhooks sign: --key-file "/dev/zero" is neither a regular file nor a pipe\n',
      ],
      [
        ['sign', '--key-file', writeTemp(dir, 'keys', Buffer.alloc(64 * 1024 + 1, 'k')), '--file', body],
        /--key-file ".*keys" is over the 64 KiB limit\n$/,
      ],
      [['sign', '--key', 'k', '--file', dir], /cannot read --file ".*" \(EISDIR\)\n$/],
      [['sign', '--key', 'k', '--file', writeTemp(dir, 'empty', '')], /no body: --file ".*empty" is empty\n$/],
      [['sign', '--key', 'k', '-h=1'], 'rack-webhooks sign: --help takes no value\n'],
      [
        ['sign', '--key', 'k', '--timestamp', '1', '--timestamp', '1'],
        'rack-webhooks sign: --timestamp was given more than once; pass it once\n',
      ],
      [['sign', '--key', 'k', '--', 'stray'], /unexpected argument/],
      [
        ['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:create', '--header-name', 'a\tb'],
        /but it contains a control or non-ASCII character\n$/,
      ],
      [['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:create', '--key', 'k,'], 'rack-webhooks send: Secret #2 is empty.\n'],
      [
        ['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:create', '--key', 'k', '--timestamp', '1'.repeat(16)],
        /at most 15 digits/,
      ],
    ] as const) {
      expect(await cli(...args), args.join(' ')).toMatchObject({ code: 2, out: '', err: expect.stringMatching(reason) });
    }

    // /dev/null, like a pipe or a terminal, refuses fdatasync: it is written and not synced.
    const listening = runCli(['listen', '--port', '0', '--key', 'k', '--log', '/dev/null']);
    await vi.waitFor(() => expect(stdout()).toMatch(/listening on /));
    const url = /listening on (\S+)/.exec(stdout())![1]!;
    expect(await cli('send', '--url', url, '--key', 'k', '--action', 'app:create')).toMatchObject({
      code: 0,
      out: expect.stringMatching(/ {2}200 processed {2}\d+ ms\n$/),
    });
    process.emit('SIGTERM');
    expect(await listening).toBe(0);
  });

  it('reads the body from stdin, up to 16 MiB and not empty', async () => {
    const withStdin = async (chunks: Buffer[], isTTY?: boolean) => {
      const stdin = Object.assign(Readable.from(chunks), isTTY === undefined ? {} : { isTTY });
      vi.spyOn(process, 'stdin', 'get').mockReturnValue(stdin as unknown as typeof process.stdin);
      return readBody(undefined).then(
        (body) => body.toString(),
        (error: Error) => error.message,
      );
    };
    expect(await withStdin([Buffer.from('{"a":'), Buffer.from('1}')])).toBe('{"a":1}');
    expect(await withStdin([])).toBe('no body: stdin was empty; pipe the body in or pass --file F');
    expect(await withStdin([Buffer.alloc(INPUT_LIMIT_BYTES), Buffer.alloc(1)])).toBe('the body on stdin is over the 16 MiB limit');
    expect(await withStdin([], true)).toBe('no body: pipe it on stdin or pass --file F');
  });

  it('shortens webhook URLs, in the URL column and in error messages', () => {
    expect(shortUrl('https://hooks.example.com/services/T000/B000/SECRET')).toBe('https://hooks.example.com/…');
    expect(shortUrl('http://user:pass@127.0.0.1:8080/')).toBe('http://127.0.0.1:8080/…');
    expect(shortUrl('http://127.0.0.1:8080/?token=SECRET')).toBe('http://127.0.0.1:8080/…');
    expect(shortUrl('http://127.0.0.1:8080/#SECRET')).toBe('http://127.0.0.1:8080/…');
    expect(shortUrl('https://example.com')).toBe('https://example.com');
    expect(shortUrl('https://example.com:443/')).toBe('https://example.com');
    expect(shortUrl('not a URL SECRET')).toBe('(not a URL)');
    // Both the URL as configured and as fetch normalises it (the host lower-cased) are replaced.
    const raw = 'http://u:p@EXAMPLE.com/a/SECRET';
    expect(withoutUrl(`bad: ${raw}; also http://u:p@example.com/a/SECRET`, raw)).toBe(
      'bad: http://example.com/…; also http://example.com/…',
    );
    expect(withoutUrl('Failed to parse URL from not a URL SECRET', 'not a URL SECRET')).toBe('Failed to parse URL from (not a URL)');
    expect(dispatchLine({ name: 'n', url: raw, error: `refused ${raw}`, timeoutMs: 5, durationMs: 1 }, false)).toBe(
      'n  http://example.com/…  error (refused http://example.com/…)  1 ms',
    );
  });

  it('formats and suggestions', () => {
    expect(paint(true, 'red', 'x')).toBe('\u001b[31mx\u001b[0m');
    expect(acceptedLine({ outcome: 'duplicate', action: 'app:create', data: { name: 'n' } }, true)).toContain('\u001b[33mduplicate');
    expect(rejectedLine(401, 'missing_header', 'a\nb', false)).toMatch(/401 missing_header: a b$/);
    expect(rejectedLine(401, 'signature_mismatch', "decoded as hex: set secretEncoding: 'hex' (this rack", false)).toMatch(
      /decoded as hex: pass --secret-encoding hex \(this rack$/,
    );
    // A sender's escape sequences never reach the terminal, in the action or in a field.
    const hostile = acceptedLine(
      { outcome: 'ignored', action: 'x:\u001b[2J\u0007', data: { app: 'a\u001b]0;pwned\u0007', tick_id: 't\tx' } },
      false,
      new Date(0),
    );
    // eslint-disable-next-line no-control-regex -- the control characters are what must not appear
    expect(hostile).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(hostile).toContain('x:\ufffd[2J\ufffd  app=a\ufffd]0;pwned\ufffd  tick_id=t x');
    expect(dispatchLine({ name: 'n', url: 'http://h/', timedOut: true, error: 'timed out', timeoutMs: 5, durationMs: 5 }, false)).toBe(
      'n  http://h  timeout after 5 ms  5 ms',
    );
    expect(dispatchLine({ name: 'n', url: 'http://h/', timeoutMs: 5, durationMs: 1.6 }, false)).toBe(
      'n  http://h  error (no response)  2 ms',
    );
    expect(logLine('{"a":\r1}').toString()).toBe('{"a":1}\n');
    expect(logLine('\ufeff{"a":\n1}').toString()).toBe('{"a":1}\n');
    expect(nearest('x', [], 3)).toEqual([]);
    expect(closeMatch('zzzzzz', ['key'])).toBeUndefined();
    expect(closeMatch('x', [])).toBeUndefined();
  });
});
