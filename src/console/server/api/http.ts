/** JSON in and out, and the one error shape the page reads: `{ error: { code, message } }`. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WebhookInboxError } from '../../../inbox/facade/index.js';

export class ConsoleRequestError extends Error {
  override readonly name = 'ConsoleRequestError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Dates as ISO strings and bigints as decimal strings: JSON has neither. */
function replacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

export function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload, replacer);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

export function sendError(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  sendJson(res, status, { error: { code, message } });
}

/**
 * Any failure as the page's error: bad filters 400, a database that is down 503 (its message
 * names what failed, never a password: the inbox's errors carry no connection string).
 */
export function sendFailure(res: ServerResponse, error: unknown): void {
  if (error instanceof ConsoleRequestError) return sendError(res, error.status, error.code, error.message);
  if (error instanceof RangeError || error instanceof TypeError) return sendError(res, 400, 'bad_filter', error.message);
  if (error instanceof WebhookInboxError) return sendError(res, error.status, error.code, error.message);
  sendError(res, 500, 'console_failed', 'the console failed to answer; see its terminal');
}

const MAX_ACTION_BODY = 1024;

/** POST bodies are `{}` (the action is in the path); read and bounded so a stream cannot hang us. */
export async function readSmallBody(req: IncomingMessage): Promise<void> {
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_ACTION_BODY)
      throw new ConsoleRequestError(413, 'body_too_large', `an action's body is {} (at most ${MAX_ACTION_BODY} bytes)`);
  }
}
