// Typed fetches of the console API. The access token is a cookie the browser already holds,
// so these are plain same-origin requests; any non-2xx becomes an ApiError with the server's message.

import type { ApiErrorBody } from './types.js';

export const UNAUTHORIZED_MESSAGE = 'Open the URL the console printed (it carries the access token).';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function isErrorBody(value: unknown): value is ApiErrorBody {
  const error = (value as { error?: unknown } | null)?.error as { code?: unknown; message?: unknown } | undefined;
  return typeof error?.code === 'string' && typeof error.message === 'string';
}

async function request<T>(path: string, init?: RequestInit): Promise<T> {
  let response: Response;
  try {
    // Relative to the page (served under /rack-webhooks-console/, where its cookie is scoped).
    response = await fetch(path.replace(/^\//, ''), init);
  } catch {
    throw new ApiError(0, 'network', 'The console server cannot be reached: is `rack-webhooks console` still running?');
  }
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // handled below: a 2xx without JSON is as wrong as an error without one
  }
  if (response.ok && body !== null) return body as T;
  if (response.status === 401) throw new ApiError(401, 'unauthorized', UNAUTHORIZED_MESSAGE);
  if (isErrorBody(body)) throw new ApiError(response.status, body.error.code, body.error.message);
  throw new ApiError(response.status, 'bad_response', `${path} answered ${response.status} ${response.statusText}`.trim());
}

export function getJson<T>(path: string): Promise<T> {
  return request<T>(path, { headers: { accept: 'application/json' } });
}

export function postJson<T>(path: string): Promise<T> {
  return request<T>(path, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{}' });
}

/** A query string from the set, non-empty values only ('' when none). */
export function query(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, value);
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
