import { RackApiError, type RackApiErrorCode } from './errors.js';
import {
  parseApp,
  parseApps,
  parseBudget,
  parseBuild,
  parseBuilds,
  parseRelease,
  parseReleases,
  parseShutdownState,
  parseSystem,
  ShapeError,
} from './parse.js';
import { decodeRackToken } from './token.js';
import type { RackApp, RackBuild, RackBudget, RackRelease, RackShutdownState, RackSystem, RackTokenClaims } from './types.js';

/** What the client calls to reach the rack: the global `fetch`, or one with its own TLS (`createNodeRackFetch`). */
export type RackFetch = (
  url: string,
  init: { method: 'GET'; headers: Record<string, string>; signal: AbortSignal; redirect: 'manual' },
) => Promise<Response>;

/** Options of {@link createRackClient}. */
export interface RackClientOptions {
  /** The rack's API address, `https://api.<domain>`; may carry Basic credentials, `https://jwt:<token>@api.<domain>`. */
  url: string;
  /**
   * A token minted by the rack (`<cli> rack access --role read`), when the URL carries none: sent as `jwt:<token>`.
   *
   * @defaultValue none: the credentials in `url`
   */
  token?: string;
  /**
   * How requests are sent. On Node, `createNodeRackFetch({ ca })` (from `rack-webhooks/inbox`)
   * verifies against a CA file of your own, or turns verification off for a self-signed rack.
   *
   * @defaultValue the global `fetch` (TLS verified against the system's CAs)
   */
  fetch?: RackFetch;
  /**
   * Milliseconds for each read, answer included.
   *
   * @defaultValue `30000`
   */
  timeoutMs?: number;
}

/** A typed, read-only client of the rack's API (rack-api.md). Every method rejects with a {@link RackApiError}. */
export interface RackClient {
  /** The address read, without credentials. */
  readonly baseUrl: string;
  /** The token's claims, decoded without the rack's key; undefined for the rack password or an opaque token. */
  readonly token: RackTokenClaims | undefined;
  /** `GET /auth`: the credential is valid (any role). */
  checkAuth(): Promise<void>;
  /** `GET /apps`: every app of the rack, by `name` (no limit, no paging). */
  apps(): Promise<RackApp[]>;
  /** `GET /apps/{name}`; rejects with `rack_not_found` when there is no such app. */
  app(name: string): Promise<RackApp>;
  /** The newest `limit` builds (no paging on the rack: ask enough). */
  builds(app: string, limit: number): Promise<RackBuild[]>;
  /** `GET /apps/{app}/builds/{id}` (id in either case); rejects with `rack_not_found` when missing. */
  build(app: string, id: string): Promise<RackBuild>;
  /** The newest `limit` releases, without `env`. */
  releases(app: string, limit: number): Promise<RackRelease[]>;
  /** `GET /apps/{app}/releases/{id}` (id in either case), without `env`; rejects with `rack_not_found` when missing. */
  release(app: string, id: string): Promise<RackRelease>;
  /** `GET /apps/{app}/budget`: `config` and `state` both `null` when the app has no budget. */
  budget(app: string): Promise<RackBudget>;
  /** `null` when no auto-shutdown lifecycle is stored. */
  shutdownState(app: string): Promise<RackShutdownState | null>;
  /** `GET /system`: the rack's name, provider, version and API host. */
  system(): Promise<RackSystem>;
}

const MISSING_RECORD = /^(builds|releases)\.\S+ "[a-z0-9]+" not found$/;
const DEFAULT_TIMEOUT_MS = 30_000;

/** The rack's error line, safe to print: one line, no control characters, bounded. */
function rackMessage(body: string): string {
  let message = body;
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    if (typeof parsed?.error === 'string') message = parsed.error;
  } catch {
    // a plain-text error
  }
  // eslint-disable-next-line no-control-regex
  const line = message.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

interface Credentials {
  readonly baseUrl: string;
  readonly authorization: string;
  readonly token: RackTokenClaims | undefined;
}

function basic(user: string, password: string): string {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  return `Basic ${btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(''))}`;
}

function credentialsOf(options: RackClientOptions): Credentials {
  const bad = (message: string) => new RackApiError('rack_bad_config', '', message);
  if (typeof options?.url !== 'string') throw bad('createRackClient: url must be the rack API address, such as https://api.example.com');
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw bad('the rack URL is not a URL: pass https://api.<domain> (with jwt:<token>@ before the host, or a token apart)');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw bad(`the rack URL must be https:// (or http://), got ${url.protocol}`);
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  url.username = '';
  url.password = '';
  const baseUrl = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  const token = options.token?.trim();
  if (token !== undefined && token !== '' && (user !== '' || password !== ''))
    throw bad('the rack URL carries credentials and a token was given apart: give one of them');
  if (token !== undefined && token !== '') return { baseUrl, authorization: basic('jwt', token), token: decodeRackToken(token) };
  if (password === '') throw bad('no rack credential: put jwt:<token>@ in the URL, or give a read token apart');
  return { baseUrl, authorization: basic(user, password), token: user === 'jwt' ? decodeRackToken(password) : undefined };
}

function networkError(route: string, error: unknown, timeoutMs: number): RackApiError {
  if ((error as { name?: string })?.name === 'TimeoutError')
    return new RackApiError('rack_timeout', route, `the rack did not answer ${route} within ${timeoutMs} ms`, { cause: error });
  const cause = (error as { cause?: unknown })?.cause ?? error;
  const code = (cause as { code?: unknown })?.code;
  const reason = cause instanceof Error ? cause.message : String(cause);
  const tls = typeof code === 'string' && /CERT|SELF_SIGNED|TLS|SSL/.test(code);
  const hint = tls
    ? " (the certificate is not trusted: give the rack's CA, or for a self-signed local/metal rack turn verification off explicitly)"
    : '';
  return new RackApiError('rack_unreachable', route, `could not reach the rack for ${route}: ${reason}${hint}`, { cause: error });
}

/**
 * A read-only client of the rack's API (rack-api.md): HTTP Basic with a read token (or the rack
 * password), `Accept: application/json`, a timeout per read, no paging (the lists return the
 * newest `limit`), a release's `env` dropped on parse. Runs wherever `fetch` does.
 *
 * @param options - The rack's URL (with or without `jwt:<token>@`), a token apart, a `fetch`, a timeout.
 * @returns The client. Every read rejects with a {@link RackApiError} saying what failed in one line.
 * @throws RackApiError `rack_bad_config` for a URL that is not http(s), no credential, or two.
 *
 * @example
 * ```ts
 * import { createRackClient } from 'rack-webhooks/inbox';
 *
 * const rack = createRackClient({ url: 'https://api.rack.example.com', token: process.env.RACK_TOKEN! });
 * const releases = await rack.releases('web', 50); // newest first, no env
 * ```
 */
export function createRackClient(options: RackClientOptions): RackClient {
  const { baseUrl, authorization, token } = credentialsOf(options);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new RackApiError('rack_bad_config', '', 'timeoutMs must be a positive number of milliseconds');
  const send: RackFetch = options.fetch ?? ((url, init) => fetch(url, init));

  const failure = (route: string, status: number, body: string): RackApiError => {
    const message = rackMessage(body);
    const fail = (code: RackApiErrorCode, text: string) => new RackApiError(code, route, text, { httpStatus: status });
    if (status === 401) {
      if (message.startsWith('you are unauthorized')) {
        const role = token === undefined ? '' : ` (the token's role is "${token.role}")`;
        return fail('rack_role_missing', `the rack refused ${route} (401): the credential is valid but lacks the read role${role}`);
      }
      if (token !== undefined && token.expiresAt * 1000 <= Date.now())
        return fail(
          'rack_token_expired',
          `the rack refused ${route} (401): the token expired at ${new Date(token.expiresAt * 1000).toISOString()}; mint a new one`,
        );
      return fail(
        'rack_auth_invalid',
        `the rack refused ${route} (401): the credential is wrong, or the token was minted before the rack rotated its secret (${message || 'no reason given'})`,
      );
    }
    if (status === 404 || (status === 500 && MISSING_RECORD.test(message)))
      return fail('rack_not_found', `the rack has no ${route} (${status}${message === '' ? '' : `: ${message}`})`);
    return fail('rack_failed', `the rack answered ${status} to ${route}${message === '' ? '' : `: ${message}`}`);
  };

  const read = async <T>(route: string, parse: (value: unknown) => T): Promise<T> => {
    let response: Response;
    let body: string;
    try {
      const signal = AbortSignal.timeout(timeoutMs);
      response = await send(`${baseUrl}${route}`, {
        method: 'GET',
        headers: { authorization, accept: 'application/json' },
        signal,
        redirect: 'manual',
      });
      body = await response.text();
    } catch (error) {
      throw networkError(route, error, timeoutMs);
    }
    if (response.status !== 200) throw failure(route, response.status, body);
    try {
      return parse(JSON.parse(body));
    } catch (error) {
      const why = error instanceof ShapeError ? error.message : 'the answer is not JSON';
      throw new RackApiError('rack_bad_answer', route, `the rack's answer to ${route} is not what the route returns: ${why}`, {
        httpStatus: 200,
      });
    }
  };

  const path = (value: string, what: string): string => {
    if (typeof value !== 'string' || value === '') throw new RackApiError('rack_bad_config', '', `${what} must be a non-empty string`);
    return encodeURIComponent(value);
  };
  const limitOf = (limit: number): number => {
    // A negative limit makes the rack drop the connection without an answer (rack-api.md 1.6).
    if (!Number.isSafeInteger(limit) || limit < 0)
      throw new RackApiError('rack_bad_config', '', `limit must be a whole number of 0 or more, got ${limit}`);
    return limit;
  };

  return {
    baseUrl,
    token,
    async checkAuth() {
      await read('/auth', () => undefined).catch((error: unknown) => {
        // `/auth` answers `ok\n`, which is not JSON: only a failure matters here.
        if (error instanceof RackApiError && error.code === 'rack_bad_answer') return;
        throw error;
      });
    },
    apps: async () => read('/apps', parseApps),
    app: async (name) => read(`/apps/${path(name, 'app')}`, parseApp),
    builds: async (app, limit) => read(`/apps/${path(app, 'app')}/builds?limit=${limitOf(limit)}`, parseBuilds),
    build: async (app, id) => read(`/apps/${path(app, 'app')}/builds/${path(id, 'build id')}`, parseBuild),
    releases: async (app, limit) => read(`/apps/${path(app, 'app')}/releases?limit=${limitOf(limit)}`, parseReleases),
    release: async (app, id) => read(`/apps/${path(app, 'app')}/releases/${path(id, 'release id')}`, parseRelease),
    budget: async (app) => read(`/apps/${path(app, 'app')}/budget`, parseBudget),
    shutdownState: async (app) => read(`/apps/${path(app, 'app')}/budget/shutdown-state`, parseShutdownState),
    system: async () => read('/system', parseSystem),
  };
}
