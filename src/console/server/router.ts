/**
 * One request: the token first (401 for anything without it, assets included), then the Host
 * header, then the route. Reads are GET; the three actions are POST from the console's own page.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InboxMonitor, InboxOperator } from '../../inbox/facade/index.js';
import type { AppsIndex } from './api/apps.js';
import type { ChangeFeed } from './api/changes.js';
import { deliveryDetail, historySpan, listPage, moveOne, retryAllDead } from './api/deliveries.js';
import { ConsoleRequestError, readSmallBody, sendError, sendFailure, sendJson } from './api/http.js';
import type { GapsPayload } from './api/gaps.js';
import type { FieldDescriber } from './api/schema-fields.js';
import { workersAndRefusals } from './api/workers.js';
import { PAGE_CSP, type Asset } from './assets.js';
import {
  CONSOLE_PATH,
  hostAllowed,
  presentedToken,
  routedPath,
  sameOrigin,
  sessionCookie,
  tokenMatches,
  type ConsoleAccess,
} from './auth.js';

export interface ConsoleContext {
  readonly access: ConsoleAccess;
  readonly assets: ReadonlyMap<string, Asset>;
  readonly operator: InboxOperator;
  readonly monitor: InboxMonitor;
  readonly apps: AppsIndex;
  readonly changes: ChangeFeed;
  readonly describe: FieldDescriber;
  readonly overview: () => { table: string; database: string };
  /** The log gaps and the scheduled reconcile's gaps inbox.watch() keeps open. */
  readonly gaps: () => Promise<GapsPayload>;
}

/** On every response: nothing cached, sniffed, framed, or sent on as a Referer (the first URL holds the token). */
const COMMON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
};

const UNAUTHORIZED = 'open the URL the console printed: it carries the access token';

export async function handleConsoleRequest(context: ConsoleContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  for (const [name, value] of Object.entries(COMMON_HEADERS)) res.setHeader(name, value);
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://console.invalid');
  } catch {
    return sendError(res, 400, 'bad_request', 'the request target is not a valid path');
  }
  const { access } = context;
  const fromUrl = req.method === 'GET' ? (url.searchParams.get('token') ?? undefined) : undefined;
  const bearer = req.headers.authorization !== undefined;
  if (!tokenMatches(access, fromUrl ?? presentedToken(access, req.headers))) {
    if (req.method === 'GET' && /\btext\/html\b/.test(String(req.headers.accept ?? ''))) return sendUnauthorizedPage(res);
    return sendError(res, 401, 'unauthorized', UNAUTHORIZED, { 'www-authenticate': 'Bearer realm="rack-webhooks console"' });
  }
  if (!hostAllowed(access, req.headers)) return sendError(res, 403, 'bad_host', 'the Host header does not name this console');
  if (fromUrl !== undefined) {
    // The token leaves the URL (and the history) for a cookie only this origin's requests carry.
    // Always to the page's own path (the page routes by the hash): a path such as `/..//evil.com` must not become
    // a Location of `//evil.com`.
    res.writeHead(303, { 'set-cookie': sessionCookie(access), location: CONSOLE_PATH, 'cache-control': 'no-store' });
    res.end();
    return;
  }
  const path = routedPath(url.pathname);
  try {
    if (path.startsWith('/api/')) return await api(context, req, res, new URL(path + url.search, url), bearer);
    return asset(context, req, res, path);
  } catch (error) {
    sendFailure(res, error);
  }
}

/** A browser that lost its cookie (or never had the token) gets a sentence, not JSON. */
function sendUnauthorizedPage(res: ServerResponse): void {
  const body =
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>rack-webhooks console</title></head>' +
    '<body><p>Open the URL the console printed: it carries the access token.</p></body></html>';
  res.writeHead(401, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': "default-src 'none'",
    'www-authenticate': 'Bearer realm="rack-webhooks console"',
    'cache-control': 'no-store',
  });
  res.end(body);
}

function asset(context: ConsoleContext, req: IncomingMessage, res: ServerResponse, path: string): void {
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return sendError(res, 405, 'method_not_allowed', 'the page is read with GET', { allow: 'GET, HEAD' });
  const item = context.assets.get(path);
  if (item === undefined) return sendError(res, 404, 'not_found', 'no such page or file');
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? item.gzip : item.body;
  res.writeHead(200, {
    'content-type': item.type,
    'content-length': body.length,
    'cache-control': 'no-cache',
    vary: 'accept-encoding',
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    ...(path === '/' ? { 'content-security-policy': PAGE_CSP } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ConsoleRequestError(400, 'bad_request', 'a path segment is not valid percent-encoding');
  }
}

interface Route {
  readonly method: 'GET' | 'POST';
  /** The whole path; its groups, percent-decoded, are the handler's `params`. */
  readonly path: RegExp;
  /** The JSON to send; a route that `streams` writes its own response instead. */
  readonly handle: (context: ConsoleContext, params: readonly string[], url: URL, res: ServerResponse) => Promise<unknown> | void;
  readonly streams?: true;
}

/** Every API route, once: GET routes also answer HEAD (the stream with its headers only). */
const ROUTES: readonly Route[] = [
  { method: 'GET', path: /^\/api\/stream$/, streams: true, handle: (context, _, __, res) => context.changes.subscribe(res) },
  {
    method: 'GET',
    path: /^\/api\/overview$/,
    handle: async (context) => {
      const [stats, health, alerts] = await Promise.all([
        context.operator.stats(),
        workersAndRefusals(context.monitor),
        context.operator.alerts(),
      ]);
      return { ...context.overview(), stats, ...health, alerts: alerts ?? null, now: new Date().toISOString() };
    },
  },
  { method: 'GET', path: /^\/api\/gaps$/, handle: (context) => context.gaps() },
  {
    method: 'GET',
    path: /^\/api\/history$/,
    handle: (context, _, url) => context.operator.history(historySpan(url.searchParams.get('span'))),
  },
  { method: 'GET', path: /^\/api\/deliveries$/, handle: (context, _, url) => listPage(context.operator, url.searchParams) },
  {
    method: 'GET',
    path: /^\/api\/deliveries\/([^/]+)$/,
    handle: (context, [id]) => deliveryDetail(context.operator, id!, context.describe),
  },
  { method: 'GET', path: /^\/api\/apps$/, handle: (context) => context.apps.summaries() },
  // By query parameter, the one app route: an app named `.` or `..` cannot be a path segment
  // (browsers resolve it away).
  { method: 'GET', path: /^\/api\/app$/, handle: (context, _, url) => context.apps.detail(url.searchParams.get('name') ?? '') },
  {
    method: 'POST',
    path: /^\/api\/deliveries\/([^/]+)\/(retry|replay)$/,
    handle: (context, [id, verb]) => moveOne(context, id!, verb as 'retry' | 'replay'),
  },
  { method: 'POST', path: /^\/api\/retry-dead$/, handle: (context) => retryAllDead(context) },
];

function findRoute(method: 'GET' | 'POST', path: string): { route: Route; params: string[] } | undefined {
  for (const route of ROUTES) {
    if (route.method !== method) continue;
    const match = route.path.exec(path);
    if (match !== null) return { route, params: match.slice(1).map(decoded) };
  }
  return undefined;
}

async function api(context: ConsoleContext, req: IncomingMessage, res: ServerResponse, url: URL, bearer: boolean): Promise<void> {
  const path = url.pathname;
  if (req.method === 'POST') {
    // A cookie rides along on any site's form post; only the console's own page may act with it.
    if (!bearer && !sameOrigin(context.access, req.headers)) {
      return sendError(res, 403, 'cross_origin', 'actions are accepted from the console page itself only (same origin)');
    }
    if (!/^application\/json\b/i.test(String(req.headers['content-type'] ?? ''))) {
      return sendError(res, 415, 'unsupported_media_type', 'actions take content-type: application/json');
    }
    await readSmallBody(req);
    const found = findRoute('POST', path);
    if (found === undefined) return sendError(res, 404, 'not_found', `no action at ${path}`);
    return sendJson(res, 200, await found.route.handle(context, found.params, url, res));
  }
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return sendError(res, 405, 'method_not_allowed', 'the API takes GET, and POST for actions', { allow: 'GET, HEAD, POST' });
  const found = findRoute('GET', path);
  if (found === undefined) return sendError(res, 404, 'not_found', `no API at ${path}`);
  if (found.route.streams === true) {
    if (req.method === 'HEAD')
      return void res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' }).end();
    return void (await found.route.handle(context, found.params, url, res));
  }
  return sendJson(res, 200, await found.route.handle(context, found.params, url, res));
}
