/**
 * The rack client's transport on Node when the system's CAs are not the right ones: a CA file of
 * the rack's own, or (for a self-signed local/metal rack, or the api's :5443 whose certificate is
 * made afresh at each start) no verification at all. Node's global fetch cannot take either
 * without undici, which the package does not depend on, so this is node:https.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { RackFetch } from './client.js';

/** Options of {@link createNodeRackFetch}. */
export interface NodeRackFetchOptions {
  /**
   * PEM text of the CA (or CAs) that signed the rack's certificate, instead of the system's.
   *
   * @defaultValue the system's CAs
   */
  ca?: string | Uint8Array;
  /**
   * Accept any certificate. Anyone on the path can then read the token and forge the answers:
   * only for a self-signed rack on a network you trust. Must be exactly `true`.
   *
   * @defaultValue `false`: certificates are verified
   */
  insecure?: boolean;
}

/** The largest answer read: a list of 1,000 builds with their manifests fits many times over. */
const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/**
 * A `fetch` for {@link createRackClient} over node:https with a CA of your own, or with
 * verification turned off (`insecure: true`, which the caller should announce on every run).
 *
 * @param options - `ca` (PEM), or `insecure: true`.
 * @returns The function to pass as `fetch` to `createRackClient`.
 *
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs';
 * import { createNodeRackFetch, createRackClient } from 'rack-webhooks/inbox';
 *
 * const rack = createRackClient({ url: process.env.RACK_URL!, fetch: createNodeRackFetch({ ca: readFileSync('rack-ca.pem') }) });
 * ```
 */
export function createNodeRackFetch(options: NodeRackFetchOptions = {}): RackFetch {
  const insecure = options.insecure === true;
  const ca = options.ca === undefined ? undefined : typeof options.ca === 'string' ? options.ca : Buffer.from(options.ca);
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      const target = new URL(url);
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const tls = target.protocol === 'https:' ? { rejectUnauthorized: !insecure, ...(ca === undefined ? {} : { ca }) } : {};
      const req = send(target, { method: init.method, headers: init.headers, signal: init.signal, ...tls }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) res.destroy(new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('error', reject);
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (typeof value === 'string') headers.set(name, value);
          }
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 502, headers }));
        });
      });
      // Same shape as fetch's failures: a TypeError whose cause holds the socket's error and its code.
      req.on('error', (error) =>
        reject(error.name === 'AbortError' ? (init.signal.reason ?? error) : new TypeError('fetch failed', { cause: error })),
      );
      req.end();
    });
}
