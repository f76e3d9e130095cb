import type { IncomingMessage } from 'node:http';
import type { BodyReadResult } from './core.js';
import { rawBodyGone } from './errors.js';

/** Bodies frameworks may have left on the request: a raw buffer or string kept by the user. */
export type RequestWithBody = IncomingMessage & { body?: unknown; rawBody?: unknown; _body?: unknown };

function rawFrom(value: unknown): Uint8Array | string | undefined {
  return typeof value === 'string' || value instanceof Uint8Array ? value : undefined;
}

/**
 * Reads a Node request body, or uses the raw bytes a framework kept. Stops reading (and answers
 * 413) as soon as the limit is passed; fails at once, never waits, if the stream was consumed.
 */
export function readNodeBody(req: RequestWithBody, maxBytes: number, framework: 'express' | 'node'): Promise<BodyReadResult> {
  const kept = rawFrom(req.body) ?? rawFrom(req.rawBody);
  if (kept !== undefined) {
    // Bytes, not characters: a kept string of 2-byte characters is up to twice its length on the wire.
    const bytes = typeof kept === 'string' ? Buffer.byteLength(kept, 'utf8') : kept.byteLength;
    return Promise.resolve(bytes > maxBytes ? { tooLarge: true } : { body: kept });
  }
  // body-parser marks the request (`_body`) and the stream has ended: the bytes are gone.
  if (req.body !== undefined || req._body === true || req.readableEnded) return Promise.reject(rawBodyGone(framework));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup(); // the stream keeps flowing; the 413 writer drains what is left (discardRest)
        resolve({ tooLarge: true });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve({ body: Buffer.concat(chunks, size) });
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onAborted = () => onError(new Error('the client aborted the request'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/** How much of an oversized body is read and thrown away after the 413, at most. */
export const DISCARD_MAX_BYTES = 16 * 1024 * 1024;
const DISCARD_MAX_MS = 10_000;

/**
 * After a 413 was written in full: reads what the client is still sending and throws it away
 * (keeping none of it), then calls `done`. Closing a socket that has unread bytes makes the kernel
 * reset the connection, and the reset can reach the client before it has read the 413; so the
 * response is ended (and, for `Connection: close`, the socket closed) only once the body is in.
 * Past 16 MiB or 10 s the connection is cut: `done(true)`.
 */
export function discardRest(req: IncomingMessage, done: (cut: boolean) => void): void {
  if (req.readableEnded || req.destroyed) return done(false);
  let discarded = 0;
  const finish = (cut: boolean) => {
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onEnd);
    req.off('close', onEnd);
    done(cut);
  };
  const onEnd = () => finish(false);
  const onData = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_MAX_BYTES) finish(true);
  };
  const timer = setTimeout(() => finish(true), DISCARD_MAX_MS);
  timer.unref?.();
  req.on('data', onData);
  req.once('end', onEnd);
  req.once('error', onEnd);
  req.once('close', onEnd); // the client went away: nothing left to drain
  req.resume();
}
