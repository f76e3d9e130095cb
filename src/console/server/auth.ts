/**
 * Who may use the console: the holder of the token printed with its URL. The token arrives once in
 * the URL (`?token=`), is swapped for an HttpOnly, SameSite=Strict cookie named for the port and
 * scoped to {@link CONSOLE_PATH}, and the URL is cleaned by a redirect so it stays out of the history. Scripts may send `Authorization: Bearer <token>`.
 *
 * Requests that change rows also need the browser to say they come from the console's own page
 * (Origin, Sec-Fetch-Site), so another site open in the same browser cannot post to it. The Host
 * header is checked too: a DNS-rebinding page reaches 127.0.0.1 under a name of its own.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export interface ConsoleAccess {
  readonly token: string;
  /** The cookie's name: one per port, since cookies are not scoped by port. */
  readonly cookieName: string;
  /** `host:port` values a request may name in its Host header (and its Origin). */
  readonly hosts: ReadonlySet<string>;
  /** Bound to every interface (0.0.0.0, ::): the machine's names are unknown, so any Host is taken. */
  readonly anyHost: boolean;
}

/** 32 random bytes, base64url: 256 bits, safe in a URL and a cookie as they are. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export function consoleAccess(token: string, boundHost: string, port: number): ConsoleAccess {
  const shown = boundHost.includes(':') && !boundHost.startsWith('[') ? `[${boundHost}]` : boundHost;
  const names = new Set([shown, ...(isLoopback(boundHost) ? LOOPBACK_NAMES : [])]);
  const anyHost = boundHost === '0.0.0.0' || boundHost === '::' || boundHost === '[::]';
  return {
    token,
    cookieName: `rack_webhooks_console_${port}`,
    hosts: new Set([...names].map((name) => `${name.toLowerCase()}:${port}`)),
    anyHost,
  };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Constant time whatever the candidate's length. */
export function tokenMatches(access: ConsoleAccess, candidate: string | undefined): boolean {
  if (candidate === undefined || candidate === '') return false;
  return timingSafeEqual(digest(candidate), digest(access.token));
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}

/** The token the request carries: the Authorization header, else the cookie. */
export function presentedToken(access: ConsoleAccess, headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    return match?.[1];
  }
  return cookieValue(headers.cookie, access.cookieName);
}

/**
 * Where the page lives. Browsers send a 127.0.0.1 cookie to every port of 127.0.0.1, so the cookie
 * is limited to this path: another local service gets it only if asked for a page under it.
 */
export const CONSOLE_PATH = '/rack-webhooks-console/';

export function sessionCookie(access: ConsoleAccess): string {
  return `${access.cookieName}=${access.token}; HttpOnly; SameSite=Strict; Path=${CONSOLE_PATH}`;
}

/** The path the routes know: the page's own prefix taken off (scripts may leave it out). */
export function routedPath(pathname: string): string {
  return pathname.startsWith(CONSOLE_PATH) ? pathname.slice(CONSOLE_PATH.length - 1) : pathname;
}

/** The Host header names this console (not a rebinding name pointing at it). */
export function hostAllowed(access: ConsoleAccess, headers: IncomingHttpHeaders): boolean {
  const host = headers.host?.toLowerCase();
  return host !== undefined && (access.anyHost || access.hosts.has(host));
}

/**
 * A state-changing request comes from the console's own page: an Origin naming one of its hosts
 * (browsers send Origin on every POST), and no Sec-Fetch-Site saying otherwise.
 */
export function sameOrigin(access: ConsoleAccess, headers: IncomingHttpHeaders): boolean {
  const fetchSite = headers['sec-fetch-site'];
  if (fetchSite !== undefined && fetchSite !== 'same-origin') return false;
  const origin = headers.origin;
  if (origin === undefined) return false;
  const match = /^http:\/\/([^/]+)$/i.exec(origin);
  // Same origin means the Origin names the host this request was sent to.
  return (
    match !== null &&
    match[1]!.toLowerCase() === headers.host?.toLowerCase() &&
    (access.anyHost || access.hosts.has(match[1]!.toLowerCase()))
  );
}
