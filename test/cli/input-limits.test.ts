/** What the CLI reads is bounded: regular files and pipes only, 64 KiB key files, 16 MiB bodies, no empty body. */
import { execFileSync, spawn } from 'node:child_process';
import { signSync } from '../../src/index.js';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { expectUsageError, killChildren, removeTempDirs, run, runWithStdin, tempDir, writeTemp } from './helpers.js';

afterEach(killChildren);
afterAll(removeTempDirs);
// A test here runs the CLI several times, each run bounded by run()'s own 10 s: vitest's 5 s
// default for them all timed out at load 14 on 2 cores (16 MiB in --file, --event and --config;
// the empty bodies), with every run well inside its own bound.
vi.setConfig({ testTimeout: 60_000 });

const KEY_FILE_LIMIT = 64 * 1024;
const INPUT_LIMIT = 16 * 1024 * 1024;
const BODY = '{"action":"app:create","status":"success","timestamp":"2026-04-27T10:30:00Z","data":{"name":"a","rack":"r","actor":"x"}}';
/** A receiver no request reaches: every test here must stop before sending. */
const NOWHERE = 'http://127.0.0.1:9/';

/** A file of exactly `bytes` bytes that starts with a marker the error must never quote. */
function fileOfSize(dir: string, name: string, bytes: number, fill = ' '): string {
  const marker = 'CONTENTMARKER';
  return writeTemp(dir, name, Buffer.concat([Buffer.from(marker), Buffer.alloc(bytes - marker.length, fill)]));
}

describe('files named by flags', () => {
  it('refuses a device at once, for every flag that names a file', async () => {
    const body = writeTemp(tempDir(), 'body.json', BODY);
    const cases: [string[], RegExp][] = [
      [
        ['sign', '--key-file', '/dev/zero', '--file', body],
        /^rack-webhooks sign: --key-file "\/dev\/zero" is neither a regular file nor a pipe\n$/,
      ],
      [
        ['verify', '--key', 'k', '--header', 't=1,v1=00', '--file', '/dev/zero'],
        /^rack-webhooks verify: --file "\/dev\/zero" is neither a regular file nor a pipe\n$/,
      ],
      [
        ['send', '--url', NOWHERE, '--event', '/dev/zero'],
        /^rack-webhooks send: --event "\/dev\/zero" is neither a regular file nor a pipe\n$/,
      ],
      [
        ['send', '--config', '/dev/zero', '--action', 'app:create'],
        /^rack-webhooks send: --config "\/dev\/zero" is neither a regular file nor a pipe\n$/,
      ],
    ];
    for (const [args, reason] of cases) expectUsageError(await run(args, { timeoutMs: 5_000 }), reason);
  });

  it('reads a key from a pipe, as `--key-file <(pass show rack-key)` hands it over', async () => {
    const dir = tempDir();
    const fifo = join(dir, 'key.fifo');
    execFileSync('mkfifo', [fifo]);
    const body = writeTemp(dir, 'body.json', BODY);
    // The writer starts after a pause: the CLI waits for it instead of reading an empty pipe.
    const writer = spawn('sh', ['-c', `sleep 0.3; printf 'k\n' > '${fifo}'`]);
    const signed = await run(['sign', '--key-file', fifo, '--file', body, '--timestamp', '1000'], { timeoutMs: 10_000 });
    writer.kill();
    expect(signed, signed.stderr).toMatchObject({ code: 0, stdout: `${signSync(BODY, { secrets: 'k', timestamp: 1000 })}\n` });
  });

  it('bounds a pipe too: an endless writer is cut off at the limit, one that never writes reads as empty', async () => {
    const dir = tempDir();
    const endless = join(dir, 'endless.fifo');
    execFileSync('mkfifo', [endless]);
    const writer = spawn('sh', ['-c', `yes > '${endless}'`]);
    expectUsageError(
      await run(['sign', '--key-file', endless, '--file', writeTemp(dir, 'b.json', BODY)], { timeoutMs: 10_000 }),
      /--key-file ".*endless.fifo" is over the 64 KiB limit\n$/,
    );
    writer.kill();
    const silent = join(dir, 'silent.fifo');
    execFileSync('mkfifo', [silent]);
    expectUsageError(
      await run(['sign', '--key', 'k', '--file', silent], { timeoutMs: 10_000 }),
      /^rack-webhooks sign: no body: --file ".*silent.fifo" is empty\n$/,
    );
  });

  it('keeps the clear errors for a directory and a missing file', async () => {
    const dir = tempDir();
    expectUsageError(await run(['sign', '--key', 'k', '--file', dir]), /^rack-webhooks sign: cannot read --file ".*" \(EISDIR\)\n$/);
    expectUsageError(
      await run(['send', '--url', NOWHERE, '--event', join(dir, 'missing.json')]),
      /^rack-webhooks send: cannot read --event ".*missing.json" \(ENOENT\)\n$/,
    );
  });

  it('takes a key file of 64 KiB and refuses one byte more, naming the flag and the limit only', async () => {
    const dir = tempDir();
    const body = writeTemp(dir, 'body.json', BODY);
    const atLimit = await run(['sign', '--key-file', fileOfSize(dir, 'keys', KEY_FILE_LIMIT), '--file', body]);
    expect(atLimit, atLimit.stderr).toMatchObject({ code: 0, stdout: expect.stringMatching(/^t=\d+,v1=[0-9a-f]{64}\n$/) });
    const over = await run(['sign', '--key-file', fileOfSize(dir, 'big-keys', KEY_FILE_LIMIT + 1), '--file', body]);
    expectUsageError(over, /^rack-webhooks sign: --key-file ".*big-keys" is over the 64 KiB limit\n$/);
    expect(over.stderr).not.toContain('CONTENTMARKER');
  });

  it('takes a body of 16 MiB and refuses one byte more in --file, --event and --config', async () => {
    const dir = tempDir();
    const atLimit = await run(['sign', '--key', 'k', '--file', fileOfSize(dir, 'body', INPUT_LIMIT)]);
    expect(atLimit, atLimit.stderr).toMatchObject({ code: 0, stdout: expect.stringMatching(/^t=\d+,v1=/) });
    const big = fileOfSize(dir, 'big.json', INPUT_LIMIT + 1);
    for (const [args, flag] of [
      [['sign', '--key', 'k', '--file', big], '--file'],
      [['send', '--url', NOWHERE, '--event', big], '--event'],
      [['send', '--config', big, '--action', 'app:create'], '--config'],
    ] as const) {
      const result = await run(args);
      expectUsageError(result, new RegExp(`^rack-webhooks \\w+: ${flag} ".*big.json" is over the 16 MiB limit\\n$`));
      expect(result.stderr).not.toContain('CONTENTMARKER');
    }
  });
});

describe('the body on stdin', () => {
  it('stops reading past 16 MiB, even from a writer that never ends (cat /dev/zero |)', async () => {
    const zeros = Buffer.alloc(64 * 1024);
    const endless = new Readable({
      read() {
        this.push(zeros);
      },
    });
    const result = await runWithStdin(['verify', '--key', 'k', '--header', 't=1,v1=00'], endless);
    expectUsageError(result, /^rack-webhooks verify: the body on stdin is over the 16 MiB limit\n$/);
  });

  it('takes 16 MiB on stdin', async () => {
    const signed = await run(['sign', '--key', 'k'], { stdin: Buffer.alloc(INPUT_LIMIT, ' ') });
    expect(signed, signed.stderr).toMatchObject({ code: 0, stdout: expect.stringMatching(/^t=\d+,v1=/) });
  });

  it('refuses an empty body instead of signing it, or verifying it and blaming the key', async () => {
    const dir = tempDir();
    expectUsageError(
      await run(['sign', '--key', 'k'], { stdin: '' }),
      /^rack-webhooks sign: no body: stdin was empty; pipe the body in or pass --file F\n$/,
    );
    expectUsageError(
      await run(['verify', '--key', 'k', '--header', 't=1,v1=00'], { stdin: '' }),
      /^rack-webhooks verify: no body: stdin was empty/,
    );
    expectUsageError(
      await run(['sign', '--key', 'k', '--file', writeTemp(dir, 'empty.json', '')]),
      /^rack-webhooks sign: no body: --file ".*empty.json" is empty\n$/,
    );
    const directory = openSync(dir, 'r');
    try {
      expectUsageError(
        await runWithStdin(['sign', '--key', 'k'], directory),
        /^rack-webhooks sign: no body: stdin is a directory; pass a file with --file F or pipe the body in\n$/,
      );
    } finally {
      closeSync(directory);
    }
  });

  it('checks every flag before reading the body', async () => {
    // The key mistake is reported, not the empty body behind it.
    expectUsageError(await run(['sign', '--key', 'a,'], { stdin: '' }), /^rack-webhooks sign: Secret #2 is empty\.\n$/);
    expectUsageError(await run(['sign', '--key', 'k', '--secret-encoding', 'b64'], { stdin: '' }), /--secret-encoding must be utf8 or hex/);
  });
});
