/**
 * The read routes of rack-api.md section 2 over the emulator's state, as a fetch handler
 * (`Request` in, `Response` out) so that it runs wherever the emulator does; on Node, serve it
 * with `node:http` or `node:https` (docs/testing.md). Authentication, roles, status codes and
 * error bodies as section 1 describes them.
 */
import type { RackModel } from './model.js';
import type { AppRecord } from './records.js';
import type { TokenBook } from './tokens.js';

/** A negative `limit`: the rack's handler panics and the api closes the connection without answering. */
export class ConnectionDropped extends Error {}

interface RouteContext {
  readonly model: RackModel;
  readonly tokens: TokenBook;
  readonly password: string | undefined;
  readonly now: () => Date;
}

const API_GROUP = 'atom.rack.example';

function requestId(): string {
  return Array.from(globalThis.crypto.getRandomValues(new Uint8Array(6)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function json(value: unknown): Response {
  return new Response(`${JSON.stringify(value, null, 2)}\n`, {
    status: 200,
    headers: {
      'content-type': 'application/json',
      'request-id': requestId(),
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
    },
  });
}

function failure(request: Request, status: number, message: string, extra: Record<string, string> = {}): Response {
  const wantsJson = (request.headers.get('accept') ?? '').includes('application/json');
  const body = wantsJson ? `${JSON.stringify({ error: message })}\n` : `${message}\n`;
  const type = wantsJson ? 'application/json' : 'text/plain; charset=utf-8';
  return new Response(body, { status, headers: { 'content-type': type, 'request-id': requestId(), ...extra } });
}

/** The credential's refusal, or undefined when it may read. */
function refusal(request: Request, context: RouteContext): Response | undefined {
  const header = request.headers.get('authorization') ?? '';
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header);
  let user = '';
  let secret = '';
  if (match !== null) {
    const decoded = new TextDecoder().decode(Uint8Array.from(atob(match[1]!), (char) => char.charCodeAt(0)));
    const colon = decoded.indexOf(':');
    [user, secret] = colon < 0 ? [decoded, ''] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
  }
  if (user === 'jwt') {
    const grant = context.tokens.check(secret, context.now());
    if ('refused' in grant) return failure(request, 401, `invalid authentication: ${grant.refused}`);
    return grant.role.includes('r') ? undefined : failure(request, 401, 'you are unauthorized to access this');
  }
  if (context.password === '') return undefined; // a rack without a password lets everyone in (and says so at start)
  if (context.password !== undefined && secret === context.password) return undefined;
  return failure(request, 401, 'invalid authentication', { 'www-authenticate': 'Basic realm="rack"' });
}

function limitOf(url: URL, request: Request): number | Response {
  const text = url.searchParams.get('limit');
  if (text === null) return 10;
  if (!/^[+-]?\d+$/.test(text)) return failure(request, 500, `strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`);
  const limit = Number(text);
  if (limit < 0) throw new ConnectionDropped('negative limit: the rack closes the connection without answering');
  return limit;
}

const newestFirst = <T>(records: readonly T[], time: (record: T) => string, limit: number): T[] =>
  [...records].sort((a, b) => Date.parse(time(b)) - Date.parse(time(a))).slice(0, limit);

function appJson(app: AppRecord) {
  return {
    generation: app.generation,
    locked: app.locked,
    name: app.name,
    release: app.release,
    router: app.router,
    status: app.status,
    parameters: app.parameters,
  };
}

function appRoute(request: Request, url: URL, context: RouteContext, parts: readonly string[]): Response {
  const [name, kind, id, extra] = parts;
  const app = context.model.apps.get(name!);
  // The single build and release GETs never check the app: a missing one is the record's 500.
  if ((kind === 'builds' || kind === 'releases') && id !== undefined && extra === undefined) {
    const records: readonly { id: string }[] = app?.[kind] ?? [];
    const record = records.find((entry) => entry.id.toLowerCase() === id.toLowerCase());
    return record === undefined ? failure(request, 500, `${kind}.${API_GROUP} "${id.toLowerCase()}" not found`) : json(record);
  }
  if (app === undefined) return failure(request, 404, `app not found: ${name}`);
  if (kind === undefined) return json(appJson(app));
  if ((kind === 'builds' || kind === 'releases') && id === undefined) {
    const limit = limitOf(url, request);
    if (limit instanceof Response) return limit;
    return kind === 'builds'
      ? json(newestFirst(app.builds, (build) => build.started, limit))
      : json(newestFirst(app.releases, (release) => release.created, limit));
  }
  if (kind === 'budget' && id === undefined) return json(app.budget);
  if (kind === 'budget' && id === 'shutdown-state' && extra === undefined) {
    if (app.shutdownCorrupt) return failure(request, 500, 'budget shutdown state annotation malformed: unexpected end of JSON input');
    return json(app.shutdown);
  }
  return new Response(null, { status: 404 });
}

const KNOWN = /^\/(auth|check|system(\/releases)?|apps(\/[^/]+(\/(builds|releases)(\/[^/]+)?|\/budget(\/shutdown-state)?)?)?)$/;

/** Answers one request to the emulated rack's API. */
export async function handleRackApi(request: Request, context: RouteContext): Promise<Response> {
  const url = new URL(request.url);
  // Unknown routes are 404 with an empty body, decided before authentication.
  if (!KNOWN.test(url.pathname)) return new Response(null, { status: 404 });
  if (url.pathname === '/check') return new Response('ok', { status: 200 });
  const refused = refusal(request, context);
  if (refused !== undefined) return refused;
  if (request.method !== 'GET') return failure(request, 401, 'you are unauthorized to access this');
  if (url.pathname === '/auth') return new Response('ok\n', { status: 200 });
  if (url.pathname === '/system/releases') return failure(request, 501, 'release history is unavailable');
  if (url.pathname === '/system') {
    return json({
      count: 0,
      domain: 'router.rack.example',
      name: 'emulated-rack',
      provider: 'local',
      'rack-domain': 'api.rack.example',
      'router-internal': '',
      region: '',
      status: 'running',
      type: '',
      version: 'dev',
    });
  }
  if (url.pathname === '/apps') return json([...context.model.apps.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map(appJson));
  const parts = url.pathname.split('/').slice(2).map(decodeURIComponent);
  return appRoute(request, url, context, parts);
}
