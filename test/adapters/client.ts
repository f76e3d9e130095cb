import { request } from 'node:http';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown>;
}

/**
 * Sends a request the way a rack (or an attacker) would; `pieces` splits the body into separately
 * written chunks with a pause between them (a slow client), without a Content-Length.
 */
export function send(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    pieces?: number;
    pauseMs?: number;
    omitLength?: boolean;
  } = {},
): Promise<Reply> {
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const chunked = options.pieces !== undefined || options.omitLength === true;
  let answered = false;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'POST',
        headers: { ...(body !== undefined && !chunked ? { 'content-length': String(body.length) } : {}), ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          answered = true;
          const text = Buffer.concat(chunks).toString('utf8');
          let json: Record<string, unknown>;
          try {
            json = text === '' ? {} : JSON.parse(text);
          } catch {
            json = { raw: text };
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A write that fails after the whole answer arrived (a server that cut a body past its
      // drain bound) changes nothing; before it, the exchange failed. The answer may still be on
      // its way when the error is seen: it is waited for, under load too, then the error wins.
      if (answered) return;
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') setTimeout(() => reject(error), 10_000);
      else reject(error);
    });
    (async () => {
      if (body !== undefined && options.pieces !== undefined) {
        const size = Math.ceil(body.length / options.pieces);
        for (let i = 0; i < body.length; i += size) {
          req.write(body.subarray(i, i + size));
          await new Promise((r) => setTimeout(r, options.pauseMs ?? 20)); // a slow client's pace between pieces
        }
        req.end();
      } else {
        req.end(body);
      }
    })().catch(reject);
  });
}
