/**
 * Who may use the console, over real HTTP: the token or nothing (401, assets included), the
 * token swapped for a strict cookie, actions from the console's own origin only, the Host header
 * checked, and no request path that reaches past the page's three files.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEvent } from '../../src/testing/test-event.js';
import { openConsoleFixture, type ConsoleFixture } from './console-fixture.js';

let fixture: ConsoleFixture;
let origin: string;
let cookie: string;
let host: string;

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A request sent as written: the path is not normalised by a URL parser on the way. */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers: { host, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const json = (response: RawResponse) => JSON.parse(response.body) as { error?: { code: string; message: string } };

beforeAll(async () => {
  fixture = await openConsoleFixture();
  origin = fixture.console.origin;
  host = new URL(origin).host;
  const first = await raw('GET', `/?token=${fixture.console.token}`);
  cookie = String(first.headers['set-cookie']?.[0]).split(';')[0]!;
  await fixture.send(createTestEvent('app:budget:cap', { data: { app: 'billing-api' } }));
});
afterAll(() => fixture?.close());

describe('the token', () => {
  it('prints a URL on 127.0.0.1 carrying a 256-bit token', () => {
    expect(fixture.console.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
  });

  it.each([
    '/',
    '/assets/console.js',
    '/assets/console.css',
    '/api/overview',
    '/api/deliveries',
    '/api/stream',
    '/api/apps',
    '/nothing-here',
  ])('answers 401 without it: GET %s', async (path) => {
    const response = await raw('GET', path);
    expect(response.status).toBe(401);
    expect(json(response).error?.code).toBe('unauthorized');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(response.headers['set-cookie']).toBeUndefined();
  });

  it('tells a browser in a sentence, not JSON, and runs nothing', async () => {
    const response = await raw('GET', '/', { accept: 'text/html,application/xhtml+xml' });
    expect(response.status).toBe(401);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toBe("default-src 'none'");
    expect(response.body).toContain('Open the URL the console printed: it carries the access token.');
    expect(response.body).not.toContain('<script');
  });

  it('answers 401 to a wrong token in the URL, the cookie or the Authorization header', async () => {
    const wrong = `${fixture.console.token.slice(0, -1)}${fixture.console.token.endsWith('A') ? 'B' : 'A'}`;
    const name = cookie.split('=')[0]!;
    for (const response of [
      await raw('GET', `/?token=${wrong}`),
      await raw('GET', '/?token='),
      await raw('GET', '/api/overview', { cookie: `${name}=${wrong}` }),
      await raw('GET', '/api/overview', { cookie: `${name}=` }),
      await raw('GET', '/api/overview', { authorization: `Bearer ${wrong}` }),
      // The right cookie of another console (another port) is not this one's.
      await raw('GET', '/api/overview', { cookie: `rack_webhooks_console_1=${fixture.console.token}` }),
      await raw('POST', '/api/retry-dead', { cookie: `${name}=${wrong}`, origin, 'content-type': 'application/json' }, '{}'),
    ]) {
      expect(response.status).toBe(401);
      expect(json(response).error?.code).toBe('unauthorized');
    }
  });

  it('swaps the token in the URL for an HttpOnly, SameSite=Strict cookie and a clean URL', async () => {
    const response = await raw('GET', `/?token=${fixture.console.token}&view=1`);
    expect(response.status).toBe(303);
    expect(response.headers.location).toBe('/rack-webhooks-console/');
    const set = String(response.headers['set-cookie']?.[0]);
    expect(set).toMatch(new RegExp(`^rack_webhooks_console_${new URL(origin).port}=${fixture.console.token}; `));
    expect(set).toContain('HttpOnly');
    expect(set).toContain('SameSite=Strict');
    // Browsers send a 127.0.0.1 cookie to every port: the path keeps it from other local services.
    expect(set).toContain('Path=/rack-webhooks-console/');
    expect(set).not.toMatch(/Path=\/(;|$)/);
    expect(response.headers['referrer-policy']).toBe('no-referrer');
  });

  it.each([
    '/..//evil.example?token=',
    '/.//evil.example/?token=',
    '/a/..//evil.example?token=',
    '//evil.example/?token=',
    '/\\evil.example/?token=',
  ])('redirects to its own page only, whatever the path: %s', async (path) => {
    const response = await raw('GET', `${path}${fixture.console.token}`);
    expect(response.status).toBe(303);
    expect(response.headers.location).toBe('/rack-webhooks-console/');
  });

  it('serves the page with the cookie, under a CSP that allows nothing from elsewhere', async () => {
    const response = await raw('GET', '/', { cookie });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.body).toContain('<script type="module" src="assets/console.js">');
    expect(response.body).not.toMatch(/https?:\/\//); // no CDN, no external request
  });

  it('serves the page and its API under the path its cookie is scoped to', async () => {
    const page = await raw('GET', '/rack-webhooks-console/', { cookie });
    expect(page.status).toBe(200);
    expect(page.body).toContain('assets/console.js');
    expect((await raw('GET', '/rack-webhooks-console/assets/console.js', { cookie })).status).toBe(200);
    const overview = await raw('GET', '/rack-webhooks-console/api/overview', { cookie });
    expect(overview.status).toBe(200);
    expect(JSON.parse(overview.body)).toMatchObject({ table: fixture.inbox.table });
    expect((await raw('GET', '/rack-webhooks-console/api/overview')).status).toBe(401);
  });

  it('takes the token as a Bearer header (for scripts)', async () => {
    const response = await raw('GET', '/api/overview', { authorization: `Bearer ${fixture.console.token}` });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ table: fixture.inbox.table, stats: { total: 1 } });
  });

  it('refuses a Host header that does not name the console (DNS rebinding)', async () => {
    const response = await raw('GET', '/api/overview', { cookie, host: `rebind.example:${new URL(origin).port}` });
    expect(response.status).toBe(403);
    expect(json(response).error?.code).toBe('bad_host');
  });
});

describe('actions', () => {
  const post = (headers: Record<string, string>, path = '/api/retry-dead') =>
    raw('POST', path, { cookie, 'content-type': 'application/json', ...headers }, '{}');

  it('are refused from another origin, or with no Origin at all', async () => {
    for (const headers of [
      {},
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { origin: `http://localhost:1` },
      { origin, 'sec-fetch-site': 'cross-site' },
      { origin, 'sec-fetch-site': 'same-site' },
    ]) {
      const response = await post(headers);
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(json(response).error?.code).toBe('cross_origin');
    }
  });

  it('are taken from the same origin, as JSON only', async () => {
    const ok = await post({ origin, 'sec-fetch-site': 'same-origin' });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ moved: 0, liveWorkers: 0 });
    const form = await raw('POST', '/api/retry-dead', { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' }, 'a=b');
    expect(form.status).toBe(415);
    expect(json(form).error?.code).toBe('unsupported_media_type');
  });

  it('refuses other methods and bodies that are not small', async () => {
    expect((await raw('DELETE', '/api/deliveries/1', { cookie })).status).toBe(405);
    expect((await raw('PUT', '/', { cookie })).status).toBe(405);
    const big = await raw('POST', '/api/retry-dead', { cookie, origin, 'content-type': 'application/json' }, `{"x":"${'a'.repeat(5000)}"}`);
    expect(big.status).toBe(413);
  });
});

describe('static files', () => {
  it('serves the page files, gzip when accepted', async () => {
    const plain = await raw('GET', '/assets/console.js', { cookie });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.body).toBe('console.log("page");\n');
    const gzip = await raw('GET', '/assets/console.css', { cookie, 'accept-encoding': 'gzip, br' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
  });

  it.each([
    '/assets/../package.json',
    '/assets/../../package.json',
    '/../../../../etc/passwd',
    '/assets/%2e%2e/%2e%2e/package.json',
    '/assets/..%2f..%2fpackage.json',
    '/assets/..%5c..%5cpackage.json',
    '/assets/console.js/../../cli.js',
    '/assets/console.js%00.png',
    '//etc/passwd',
    '/assets//etc/passwd',
    '/assets/',
    '/assets',
    '/index.html',
    '/assets/CONSOLE.JS',
  ])('never serves outside its files: %s', async (path) => {
    const response = await raw('GET', path, { cookie });
    expect([400, 404]).toContain(response.status);
    expect(response.body).not.toContain('"name": "rack-webhooks"');
    expect(response.body).not.toContain('root:');
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  });
});

describe('what is never shown', () => {
  it('no signature, key or secret in any answer', async () => {
    const [row] = await fixture.db.query<{ id: string; signature: string }>(`SELECT id::text AS id, signature FROM ${fixture.db.table}`);
    const answers = await Promise.all(
      ['/api/overview', '/api/deliveries', `/api/deliveries/${row!.id}`, '/api/apps', '/api/app?name=billing-api'].map((path) =>
        raw('GET', path, { cookie }),
      ),
    );
    const signatureValues = row!.signature
      .split(',')
      .map((part) => part.split('=')[1]!)
      .filter((value) => value.length > 20);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body).not.toContain(fixture.key);
      expect(answer.body).not.toContain(row!.signature);
      for (const value of signatureValues) expect(answer.body).not.toContain(value);
    }
  });
});
