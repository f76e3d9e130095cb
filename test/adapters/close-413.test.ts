/**
 * A 413 reaches a client that sends its whole body before reading, over a real socket to a server
 * in another process (so the client's writes and the server's reads never share an event loop):
 * with `Connection: close`, and with keep-alive for a body of several MiB.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const HERE = dirname(fileURLToPath(import.meta.url));
const BUNDLE = join(HERE, '../../.tmp/serve-adapter.mjs');
const LIMIT = 4096;
const children: ChildProcess[] = [];

beforeAll(() => {
  mkdirSync(dirname(BUNDLE), { recursive: true });
  // Bundled once (the adapters from src/, the frameworks left to node_modules) and run by plain node.
  buildSync({
    entryPoints: [join(HERE, 'serve-adapter.ts')],
    outfile: BUNDLE,
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'error',
  });
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

async function startServer(adapter: string): Promise<URL> {
  const child = spawn(process.execPath, [BUNDLE, adapter, String(LIMIT)], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${adapter} server exited with ${code}`)));
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('\n')) resolve(new URL(out.trim()));
    });
  });
}

/**
 * Writes the whole request, then reads: what a simple client (or a proxy) does. Resolves with
 * everything received, or the socket error that ended the exchange first.
 */
function postThenRead(url: URL, bodyBytes: number, connection: 'close' | 'keep-alive'): Promise<{ received: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.pause(); // nothing is read until every byte is written
    socket.on('error', (thrown: NodeJS.ErrnoException) => (error = thrown.code ?? thrown.message));
    socket.on('close', () => resolve({ received: Buffer.concat(chunks).toString('latin1'), ...(error === undefined ? {} : { error }) }));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // One response is all this client waits for.
      if (connection === 'keep-alive' && /\r\n\r\n[\s\S]*payload_too_large/.test(Buffer.concat(chunks).toString('latin1'))) socket.end();
    });
    socket.once('connect', () => {
      socket.write(
        `POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: ${bodyBytes}\r\nconnection: ${connection}\r\n\r\n`,
      );
      const piece = Buffer.alloc(64 * 1024, 0x20);
      let left = bodyBytes;
      const writeMore = () => {
        while (left > 0) {
          const size = Math.min(left, piece.length);
          left -= size;
          if (!socket.write(piece.subarray(0, size))) return void socket.once('drain', writeMore);
        }
        socket.resume(); // all written: now read the answer
      };
      writeMore();
    });
  });
}

describe('a 413 reaches a client that sends everything before reading, from a server in another process', { timeout: 180_000 }, () => {
  for (const adapter of ['node:http', 'express 5', 'fastify']) {
    describe(adapter, () => {
      let url: URL;
      beforeAll(async () => {
        url = await startServer(adapter);
      }, 60_000);

      it('Connection: close, 256 KiB bodies, 25 times in a row', async () => {
        for (let i = 0; i < 25; i++) {
          const reply = await postThenRead(url, 256 * 1024, 'close');
          expect(reply.error, `request ${i + 1}`).toBeUndefined();
          expect(reply.received, `request ${i + 1}`).toMatch(/^HTTP\/1\.1 413 [\s\S]*\r\n\r\n\{"error":"payload_too_large"\}$/);
        }
      });

      it('keep-alive and Connection: close, a body of 12 MiB', async () => {
        for (const connection of ['keep-alive', 'close'] as const) {
          const reply = await postThenRead(url, 12 * 1024 * 1024, connection);
          expect(reply.error, connection).toBeUndefined();
          expect(reply.received, connection).toMatch(/^HTTP\/1\.1 413 [\s\S]*\{"error":"payload_too_large"\}$/);
        }
      });
    });
  }
});
