/**
 * `send` reports what the receiver said, sends a URL's user:pass@ as basic auth, and can post a raw
 * body or an action outside the catalog: against a real receiver over real HTTP, in-process.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createNodeHandler } from '../../src/adapters/node.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { captureOutput, cli } from '../kit/cli.js';
import { removeTempDirs, tempDir, writeTemp } from './helpers.js';

const KEY = 'send-answers-key';
const servers: Server[] = [];
afterAll(removeTempDirs);
captureOutput();
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(handler: (req: IncomingMessage, res: import('node:http').ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A real receiver; records the actions its handlers saw. */
async function receiver(seen: string[]): Promise<string> {
  const handle = createNodeHandler(createReceiver({ secrets: KEY }).on('app:*', (event) => void seen.push(event.action)));
  return `${await listen((req, res) => void handle(req, res))}/webhooks`;
}

describe('send', () => {
  it("prints the receiver's answer: its status word, or its error code and message", async () => {
    const seen: string[] = [];
    const url = await receiver(seen);
    const ok = await cli('send', '--url', url, '--key', KEY, '--action', 'app:create');
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toMatch(/^default {2}http:\/\/127\.0\.0\.1:\d+\/… {2}200 processed {2}\d+ ms\n$/);
    const wrongKey = await cli('send', '--url', url, '--key', 'another-key', '--action', 'app:create');
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.out).toMatch(/ {2}401 signature_mismatch {2}\d+ ms\n$/);
    expect(seen).toEqual(['app:create']);
  });

  it('posts a raw body file, JSON or not, byte for byte (a bad body gets its error code)', async () => {
    const seen: string[] = [];
    const url = await receiver(seen);
    const dir = tempDir();
    const bad = await cli('send', '--url', url, '--key', KEY, '--body', writeTemp(dir, 'bad.txt', 'not json at all'));
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/ {2}400 invalid_json\b/);
    const bodies: Buffer[] = [];
    const echo = await listen((req, res) => {
      const chunks: Buffer[] = [];
      req
        .on('data', (chunk: Buffer) => chunks.push(chunk))
        .on('end', () => {
          bodies.push(Buffer.concat(chunks));
          const refuse = bodies.length > 1;
          res
            .writeHead(refuse ? 503 : 200, { 'content-type': 'application/json' })
            .end(
              refuse
                ? JSON.stringify({ error: 'inbox_unavailable', message: 'The inbox database\ncould not be reached' })
                : '{"status":"accepted"}',
            );
        });
    });
    const bytes = Buffer.from([0xff, 0x00, 0x7b, 0x0a, 0xc3]);
    const raw = await cli('send', '--url', echo, '--body', writeTemp(dir, 'bytes.bin', bytes));
    expect(raw.code, raw.err).toBe(0);
    expect(raw.out).toMatch(/ {2}200 accepted {2}/);
    expect(bodies).toEqual([bytes]);
    const refused = await cli('send', '--url', echo, '--body', writeTemp(dir, 'again.bin', bytes));
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/ {2}503 inbox_unavailable \(The inbox database could not be reached\) {2}\d+ ms\n$/);
    expect(seen).toEqual([]);
    const both = await cli('send', '--url', echo, '--body', writeTemp(dir, 'b.json', '{}'), '--action', 'app:create');
    expect(both.code).toBe(2);
    expect(both.err).toBe('rack-webhooks send: --body is the whole body: it cannot be combined with --event, --file or --action\n');
  });

  it('sends an action outside the catalog with --unknown-action (the receiver ignores it, 200)', async () => {
    const seen: string[] = [];
    const url = await receiver(seen);
    const refused = await cli('send', '--url', url, '--key', KEY, '--action', 'app:from-the-future');
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/unknown action "app:from-the-future".*; --unknown-action sends it anyway, as a newer rack would\n$/);
    const sent = await cli(
      'send',
      '--url',
      url,
      '--key',
      KEY,
      '--action',
      'app:from-the-future',
      '--unknown-action',
      '--set',
      'data.app=a1',
    );
    expect(sent.code, sent.out + sent.err).toBe(0);
    expect(sent.out).toMatch(/ {2}200 ignored {2}/);
    const known = await cli('send', '--url', url, '--key', KEY, '--action', 'app:create', '--unknown-action');
    expect(known.code).toBe(2);
    expect(known.err).toMatch(/--unknown-action is for actions outside the catalog; "app:create" is in it/);
    expect(seen).toEqual([]);
  });

  it("sends a URL's user:pass@ as basic auth, from --url and from --config, and never prints it", async () => {
    const authorizations: (string | undefined)[] = [];
    const origin = await listen((req, res) => {
      authorizations.push(req.headers.authorization);
      req.resume().on('end', () => res.writeHead(204).end());
    });
    const withCredentials = origin.replace('http://', 'http://us%40er:p%C3%A4ss:w@');
    const direct = await cli('send', '--url', `${withCredentials}/hook`, '--action', 'app:create');
    expect(direct.code, direct.out + direct.err).toBe(0);
    const dir = tempDir();
    const config = writeTemp(
      dir,
      'webhooks.json',
      JSON.stringify({ one: `${withCredentials}/a`, two: JSON.stringify({ url: `${withCredentials}/b` }) }),
    );
    const configured = await cli('send', '--config', config, '--action', 'app:create');
    expect(configured.code, configured.out + configured.err).toBe(0);
    const expected = `Basic ${Buffer.from('us@er:päss:w').toString('base64')}`;
    expect(authorizations).toEqual([expected, expected, expected]);
    for (const output of [direct, configured]) expect(output.out + output.err).not.toMatch(/us%40er|p%C3%A4ss|päss/);
  });
});
