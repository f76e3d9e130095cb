/**
 * `rack-webhooks inbox reconcile` in this process (runCli), against the emulator's API served
 * over real HTTP/HTTPS and an inbox on the test PostgreSQL: the output for people and as JSON,
 * the exit codes (0 nothing missing, 1 missing, 2 usage / connection / authentication).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { captureOutput, cli } from '../kit/cli.js';
import { selfSignedCertificate, serveRackApi, type Served } from '../kit/rack-api.js';
import { connectionRefusedUrl, databaseForFile, POSTGRES_URL, type TestDatabase } from '../inbox/databases.js';
import { tempDir, removeTempDirs, writeTemp } from '../cli/helpers.js';
import { ago, HOUR, startScenario, type Scenario } from './scenario.js';

captureOutput();
let db: TestDatabase<'pg'>;
databaseForFile('pg', (opened) => (db = opened));
afterAll(removeTempDirs);
const open: (Scenario | Served)[] = [];
afterEach(async () => {
  delete process.env['RACK_TOKEN'];
  await Promise.all(open.splice(0).map((item) => item.close()));
});

/** A rack with one dropped release on `web` and nothing missing on `api`, its API served, and the flags that reach both. */
async function setUp(tls?: { key: string; cert: string }) {
  const scenario = await startScenario(db);
  open.push(scenario);
  const { api } = scenario.rack;
  await api.createApp('api', { at: ago(48 * HOUR) });
  await api.createApp('web', { at: ago(48 * HOUR) });
  await api.changeEnv('api', { at: ago(2 * HOUR) });
  const dropped = await api.changeEnv('web', { at: ago(HOUR), drop: true });
  const server = await serveRackApi(api, tls);
  open.push(server);
  return { scenario, dropped, server, flags: ['--database', POSTGRES_URL, '--table', scenario.table, '--rack', server.url] };
}

describe('inbox reconcile', () => {
  it('prints each missing event with its proof and exits 1; 0 when nothing is missing', { timeout: 60_000 }, async () => {
    const { scenario, dropped, flags } = await setUp();
    process.env['RACK_TOKEN'] = scenario.rack.api.mintToken();
    const people = await cli('inbox', 'reconcile', ...flags);
    expect(people.code).toBe(1);
    expect(people.out.split('\n')[0]).toBe(
      `missing  release:create  app=web  id=${dropped.id}  proof: GET /apps/web/releases?limit=50 id=${dropped.id}`,
    );
    expect(people.out).toMatch(/^1 missing, 0 cannot tell, 2 apps, since \d{4}-/m);

    const json = await cli('inbox', 'reconcile', ...flags, '--json', '--since', '3h');
    expect(json.code).toBe(1);
    const lines = json.out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([
      {
        action: 'release:create',
        app: 'web',
        id: dropped.id,
        evidence: { route: '/apps/web/releases?limit=50', field: 'id', value: dropped.id, at: dropped.created },
      },
    ]);
    expect(json.err).toMatch(/^1 missing, 0 cannot tell, 2 apps/m);

    expect(await cli('inbox', 'reconcile', ...flags, '--app', 'api', '--json')).toMatchObject({ code: 0, out: '' });
    // Outside the window: nothing to judge.
    expect((await cli('inbox', 'reconcile', ...flags, '--since', '30m')).code).toBe(0);
  });

  it(
    '--record stores each missing event as a reconciled delivery, says so and exits 1; the next run exits 0',
    { timeout: 60_000 },
    async () => {
      const { scenario, dropped, flags } = await setUp();
      process.env['RACK_TOKEN'] = scenario.rack.api.mintToken();
      const recorded = await cli('inbox', 'reconcile', ...flags, '--record');
      expect(recorded.code).toBe(1);
      const [line] = recorded.out.split('\n');
      const id = /recorded as delivery (\d+) \(reconciled\)$/.exec(line!)?.[1];
      expect(line).toBe(
        `missing  release:create  app=web  id=${dropped.id}  proof: GET /apps/web/releases?limit=50 id=${dropped.id}  recorded as delivery ${id} (reconciled)`,
      );
      expect(recorded.out).toMatch(/^1 missing, 1 recorded, 0 cannot tell, 2 apps, since /m);
      const stored = await scenario.inbox.get(id!);
      expect(stored).toMatchObject({ origin: 'reconciled', state: 'pending', action: 'release:create', app: 'web' });

      // Held now: nothing missing, nothing stored again.
      expect(await cli('inbox', 'reconcile', ...flags, '--record', '--json')).toMatchObject({ code: 0, out: '' });
      expect((await scenario.inbox.list({ limit: 100 })).deliveries.filter((delivery) => delivery.origin === 'reconciled')).toHaveLength(1);

      // inbox list marks it (an ORIGIN column on a page that holds one; origin in --json); inbox show says what proves it.
      const listed = await cli('inbox', 'list', '--database', POSTGRES_URL, '--table', scenario.table);
      expect(listed.out.split('\n')[0]).toMatch(/^ID +STATE +ATTEMPTS +EVENT TIME +ACTION +APP +ORIGIN$/);
      expect(listed.out).toMatch(new RegExp(`^${id} +pending .* release:create +web +reconciled$`, 'm'));
      expect(listed.out).toMatch(/ api +received$/m);
      const json = await cli('inbox', 'list', '--database', POSTGRES_URL, '--table', scenario.table, '--json');
      const rows = json.out
        .trim()
        .split('\n')
        .map((text) => JSON.parse(text) as Record<string, unknown>);
      expect(rows.find((row) => row['id'] === id)).toMatchObject({
        origin: 'reconciled',
        evidence: { route: '/apps/web/releases?limit=50', field: 'id', value: dropped.id, at: dropped.created },
      });
      expect(rows.filter((row) => row['id'] !== id).every((row) => row['origin'] === 'received' && row['evidence'] === null)).toBe(true);
      const shown = await cli('inbox', 'show', id!, '--database', POSTGRES_URL, '--table', scenario.table);
      expect(shown.out).toContain('  origin       reconciled (unsigned, rebuilt from the rack API by inbox reconcile --record)');
      expect(shown.out).toContain(`  evidence     GET /apps/web/releases?limit=50 id=${dropped.id} (at ${dropped.created})`);
      expect(shown.out).not.toContain('signature');
    },
  );

  it('takes the token from --rack-token-file or the URL, and exits 2 with one line for a refused one', { timeout: 60_000 }, async () => {
    const { scenario, flags, server } = await setUp();
    const dir = tempDir();
    const file = writeTemp(dir, 'token', `${scenario.rack.api.mintToken()}\n`);
    const fromFile = await cli('inbox', 'reconcile', ...flags, '--rack-token-file', file);
    expect(fromFile.code).toBe(1);
    expect(fromFile.err).toBe('');
    const lapsing = scenario.rack.api.mintToken({ expiresAt: new Date(Date.now() + 2 * HOUR) });
    const soon = await cli('inbox', 'reconcile', ...flags, '--rack-token-file', writeTemp(dir, 'soon', lapsing), '--json');
    expect(soon.code).toBe(1);
    expect(soon.err).toMatch(/^warning: the rack token expires at \d{4}-\S+Z: mint a new one before then\n/);

    const inUrl = flags.map((flag) => (flag === server.url ? server.url.replace('://', `://jwt:${scenario.rack.api.mintToken()}@`) : flag));
    expect((await cli('inbox', 'reconcile', ...inUrl)).code).toBe(1);

    const expired = writeTemp(dir, 'expired', scenario.rack.api.mintToken({ expiresAt: ago(60_000) }));
    const refused = await cli('inbox', 'reconcile', ...flags, '--rack-token-file', expired);
    expect(refused.code).toBe(2);
    expect(refused.out).toBe('');
    expect(refused.err).toMatch(
      /^rack-webhooks inbox reconcile: the rack refused \/apps \(401\): the token expired at \S+; mint a new one\n$/,
    );

    process.env['RACK_TOKEN'] = scenario.rack.api.mintToken({ role: 'w' });
    const readLess = await cli('inbox', 'reconcile', ...flags);
    expect([readLess.code, readLess.err.split('\n').length]).toEqual([2, 2]);
    expect(readLess.err).toContain('lacks the read role');

    expect(await cli('inbox', 'reconcile', ...flags.slice(0, -2))).toMatchObject({
      code: 2,
      err: expect.stringMatching(/no rack: pass --rack/),
    });
    expect((await cli('inbox', 'reconcile', ...flags, '--since', 'yesterday')).err).toMatch(/--since must be a duration/);
    process.env['RACK_TOKEN'] = scenario.rack.api.mintToken();
    const noDatabase = await cli('inbox', 'reconcile', '--database', await connectionRefusedUrl(), ...flags.slice(2));
    expect([noDatabase.code, noDatabase.out, noDatabase.err.split('\n').length]).toEqual([2, '', 2]);
    expect(noDatabase.err).toMatch(/^rack-webhooks inbox reconcile: /);

    delete process.env['RACK_TOKEN'];
    const noToken = await cli('inbox', 'reconcile', ...flags);
    expect(noToken.code).toBe(2);
    expect(noToken.err).toMatch(/^rack-webhooks inbox reconcile: no rack credential: /);
  });

  it('verifies a self-signed rack by default; --rack-ca-file trusts it, --rack-insecure skips it loudly', { timeout: 60_000 }, async () => {
    const tls = selfSignedCertificate();
    const { scenario, flags } = await setUp(tls);
    process.env['RACK_TOKEN'] = scenario.rack.api.mintToken();
    const strict = await cli('inbox', 'reconcile', ...flags);
    expect(strict.code).toBe(2);
    expect(strict.err).toMatch(/^rack-webhooks inbox reconcile: could not reach the rack for \/apps: .*certificate is not trusted/);

    const ca = writeTemp(tempDir(), 'ca.pem', tls.cert);
    expect((await cli('inbox', 'reconcile', ...flags, '--rack-ca-file', ca)).code).toBe(1);
    const insecure = await cli('inbox', 'reconcile', ...flags, '--rack-insecure', '--json');
    expect(insecure.code).toBe(1);
    expect(insecure.err.split('\n')[0]).toBe(
      "warning: --rack-insecure: the rack's TLS certificate is NOT verified; anyone on the path can read the token and forge answers",
    );
  });
});
