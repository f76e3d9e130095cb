/**
 * The rack API client against the emulator's routes: what it reads, that a release's env never
 * comes back, and each failure as a typed error with the rack's status and a one-line reason,
 * over real HTTP and HTTPS (a self-signed certificate made with openssl) where the transport matters.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRackClient } from '../../src/rack-api/client.js';
import { RackApiError } from '../../src/rack-api/errors.js';
import { createNodeRackFetch } from '../../src/rack-api/node-fetch.js';
import { createRackEmulator } from '../../src/testing/emulator.js';
import { inProcessFetch, selfSignedCertificate, serveRackApi, type Served } from '../kit/rack-api.js';

const served: Served[] = [];
afterEach(async () => {
  await Promise.all(served.splice(0).map((server) => server.close()));
});

function rackWithApp() {
  const rack = createRackEmulator({ log: () => {} });
  return rack;
}

async function rejection(promise: Promise<unknown>): Promise<RackApiError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RackApiError);
  return error as RackApiError;
}

describe('createRackClient', () => {
  it('reads apps, builds and releases newest first, and drops every release env on parse', async () => {
    const rack = rackWithApp();
    await rack.api.createApp('web');
    const first = await rack.api.build('web', { at: new Date('2026-11-28T10:00:00Z') });
    const second = await rack.api.build('web', { at: new Date('2026-11-28T11:00:00Z') });
    await rack.api.promote('web', second.release!.id);
    const token = rack.api.mintToken();
    const seen: Record<string, string>[] = [];
    const fetch = inProcessFetch(rack.api);
    const client = createRackClient({
      url: 'https://api.rack.example',
      token,
      fetch: (url, init) => (seen.push(init.headers), fetch(url, init)),
    });

    expect(await client.apps()).toEqual([{ name: 'web', release: second.release!.id, status: 'running', locked: false }]);
    expect((await client.builds('web', 10)).map((build) => build.id)).toEqual([second.build.id, first.build.id]);
    expect((await client.builds('web', 1)).map((build) => build.id)).toEqual([second.build.id]);
    const releases = await client.releases('web', 10);
    expect(releases).toEqual([
      { id: second.release!.id, app: 'web', build: second.build.id, created: '2026-11-28T11:00:00Z' },
      { id: first.release!.id, app: 'web', build: first.build.id, created: '2026-11-28T10:00:00Z' },
    ]);
    const single = await client.release('web', first.release!.id.toLowerCase());
    expect(JSON.stringify([releases, single])).not.toContain('SECRET_TOKEN');
    expect(single).not.toHaveProperty('env');
    expect(await client.shutdownState('web')).toBeNull();
    expect(await client.budget('web')).toEqual({ config: null, state: null });
    expect(seen[0]).toEqual({ authorization: `Basic ${btoa(`jwt:${token}`)}`, accept: 'application/json' });
  });

  it('takes Basic credentials from the URL', async () => {
    const rack = rackWithApp();
    await rack.api.createApp('web');
    const server = await serveRackApi(rack.api);
    served.push(server);
    const token = rack.api.mintToken();
    const client = createRackClient({ url: server.url.replace('://', `://jwt:${token}@`) });
    expect(client.baseUrl).toBe(server.url);
    expect(client.token).toMatchObject({ role: 'r', user: 'system-read' });
    expect((await client.app('web')).name).toBe('web');
    await expect(client.checkAuth()).resolves.toBeUndefined();
  });

  it('says whether a 401 is a wrong token, an expired one, or one without the read role', async () => {
    const rack = rackWithApp();
    await rack.api.createApp('web');
    const fetch = inProcessFetch(rack.api);
    const url = 'https://api.rack.example';

    const wrong = await rejection(createRackClient({ url, token: 'not.a-token.at-all', fetch }).apps());
    expect([wrong.code, wrong.httpStatus, wrong.route]).toEqual(['rack_auth_invalid', 401, '/apps']);
    expect(wrong.message).toMatch(/^the rack refused \/apps \(401\): the credential is wrong.*token signature is invalid\)$/);

    const expiresAt = new Date(Date.now() - 60_000);
    const expired = await rejection(createRackClient({ url, token: rack.api.mintToken({ expiresAt }), fetch }).apps());
    expect([expired.code, expired.httpStatus]).toEqual(['rack_token_expired', 401]);
    expect(expired.message).toContain(`the token expired at ${new Date(Math.floor(expiresAt.getTime() / 1000) * 1000).toISOString()}`);

    const readLess = await rejection(createRackClient({ url, token: rack.api.mintToken({ role: 'w' }), fetch }).builds('web', 5));
    expect([readLess.code, readLess.httpStatus]).toEqual(['rack_role_missing', 401]);
    expect(readLess.message).toBe(
      'the rack refused /apps/web/builds?limit=5 (401): the credential is valid but lacks the read role (the token\'s role is "w")',
    );

    const token = rack.api.mintToken();
    rack.api.rotateTokens();
    expect((await rejection(createRackClient({ url, token, fetch }).apps())).code).toBe('rack_auth_invalid');
  });

  it('treats the 500 for a missing build or release as not found, keeping the status', async () => {
    const rack = rackWithApp();
    await rack.api.createApp('web');
    const client = createRackClient({ url: 'https://api.rack.example', token: rack.api.mintToken(), fetch: inProcessFetch(rack.api) });
    const build = await rejection(client.build('web', 'BNOSUCHBUILD'));
    expect([build.code, build.httpStatus, build.message]).toEqual([
      'rack_not_found',
      500,
      'the rack has no /apps/web/builds/BNOSUCHBUILD (500: builds.atom.rack.example "bnosuchbuild" not found)',
    ]);
    const app = await rejection(client.budget('gone'));
    expect([app.code, app.httpStatus, app.message]).toEqual([
      'rack_not_found',
      404,
      'the rack has no /apps/gone/budget (404: app not found: gone)',
    ]);
    rack.api.corruptShutdownState('web');
    const corrupt = await rejection(client.shutdownState('web'));
    expect([corrupt.code, corrupt.httpStatus]).toEqual(['rack_failed', 500]);
    expect(corrupt.message).toMatch(
      /^the rack answered 500 to \/apps\/web\/budget\/shutdown-state: budget shutdown state annotation malformed/,
    );
  });

  it('refuses a bad URL, no credential, two credentials and a negative limit before sending anything', async () => {
    const sent: string[] = [];
    const fetch = async (url: string) => (sent.push(url), new Response('[]'));
    const bad = (options: Parameters<typeof createRackClient>[0]) => {
      try {
        createRackClient(options);
      } catch (error) {
        return [(error as RackApiError).code, (error as Error).message];
      }
      return undefined;
    };
    expect(bad({ url: 'api.rack.example' })?.[0]).toBe('rack_bad_config');
    expect(bad({ url: 'ftp://jwt:x@api.rack.example' })).toEqual([
      'rack_bad_config',
      'the rack URL must be https:// (or http://), got ftp:',
    ]);
    expect(bad({ url: 'https://api.rack.example' })?.[1]).toMatch(/^no rack credential/);
    expect(bad({ url: 'https://jwt:a@api.rack.example', token: 'b' })?.[1]).toMatch(/carries credentials and a token was given apart/);
    const client = createRackClient({ url: 'https://api.rack.example', token: 't', fetch });
    expect((await rejection(client.builds('web', -1))).code).toBe('rack_bad_config');
    expect(sent).toEqual([]);
  });

  it('says when the answer is not JSON of the route, when nothing answers in time, and when nothing listens', async () => {
    const notJson = createRackClient({
      url: 'https://api.rack.example',
      token: 't',
      fetch: async () => new Response('<html>proxy</html>'),
    });
    expect((await rejection(notJson.apps())).code).toBe('rack_bad_answer');
    const wrongShape = createRackClient({ url: 'https://api.rack.example', token: 't', fetch: async () => new Response('[{"name":1}]') });
    expect((await rejection(wrongShape.apps())).message).toBe(
      "the rack's answer to /apps is not what the route returns: apps[0].name is not a string",
    );

    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      const timedOut = await rejection(createRackClient({ url, token: 't', timeoutMs: 300 }).apps());
      expect([timedOut.code, timedOut.message]).toEqual(['rack_timeout', 'the rack did not answer /apps within 300 ms']);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
    const refused = await rejection(createRackClient({ url, token: 't' }).apps());
    expect(refused.code).toBe('rack_unreachable');
    expect(refused.message).toMatch(/^could not reach the rack for \/apps: .*ECONNREFUSED/);
  });

  it('verifies TLS by default, trusts a CA given, and skips verification only when told to', { timeout: 30_000 }, async () => {
    const rack = rackWithApp();
    await rack.api.createApp('web');
    const tls = selfSignedCertificate();
    const server = await serveRackApi(rack.api, tls);
    served.push(server);
    const token = rack.api.mintToken();

    const untrusted = await rejection(createRackClient({ url: server.url, token }).apps());
    expect(untrusted.code).toBe('rack_unreachable');
    expect(untrusted.message).toMatch(/self.signed certificate.*the certificate is not trusted/);
    const strictNode = await rejection(createRackClient({ url: server.url, token, fetch: createNodeRackFetch() }).apps());
    expect(strictNode.code).toBe('rack_unreachable');

    const withCa = createRackClient({ url: server.url, token, fetch: createNodeRackFetch({ ca: tls.cert }) });
    expect((await withCa.apps()).map((app) => app.name)).toEqual(['web']);
    const insecure = createRackClient({ url: server.url, token, fetch: createNodeRackFetch({ insecure: true }) });
    expect((await insecure.apps()).map((app) => app.name)).toEqual(['web']);
  });
});
