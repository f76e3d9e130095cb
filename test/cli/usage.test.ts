import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killChildren, run, tempDir, writeTemp, removeTempDirs } from './helpers.js';

afterEach(killChildren);
afterAll(removeTempDirs);

/** A usage error: exit 2 and exactly one line on stderr, `rack-webhooks <command>: <reason>`. */
function expectUsageError(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.split('\n')).toHaveLength(2); // one line and its newline
  expect(result.stderr).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
}

describe('usage errors', () => {
  it('a missing key', async () => {
    expectUsageError(await run(['sign'], { stdin: '{}' }), /^rack-webhooks sign: no key: pass --key, --key-file, or set RACK_WEBHOOK_SECRETS\n$/);
    expectUsageError(await run(['verify', '--header', 't=1,v1=00'], { stdin: '{}' }), /^rack-webhooks verify: no key/);
    expectUsageError(await run(['listen', '--port', '0']), /^rack-webhooks listen: no key/);
  });

  it('an unreadable file, naming it but not quoting anything from it', async () => {
    expectUsageError(await run(['sign', '--key', 'k', '--file', '/nonexistent/body.json']), /^rack-webhooks sign: cannot read --file "\/nonexistent\/body.json" \(ENOENT\)\n$/);
    expectUsageError(await run(['verify', '--key-file', '/nonexistent/keys', '--header', 'x']), /^rack-webhooks verify: cannot read --key-file/);
  });

  it('invalid JSON in --event or --config', async () => {
    const dir = tempDir();
    const broken = writeTemp(dir, 'broken.json', '{"action": "app:create", SECRETDATA');
    const event = await run(['send', '--url', 'http://127.0.0.1:9/', '--event', broken]);
    expectUsageError(event, /^rack-webhooks send: --event ".*broken.json" is not valid JSON\n$/);
    expect(event.stderr).not.toContain('SECRETDATA');
    expectUsageError(await run(['send', '--config', broken, '--action', 'app:create']), /^rack-webhooks send: --config ".*broken.json" is not valid JSON\n$/);
    const list = writeTemp(dir, 'list.json', '["http://127.0.0.1:9/"]');
    expectUsageError(await run(['send', '--config', list, '--action', 'app:create']), /must be a JSON object/);
  });

  it('an unknown action, with the three nearest known ones', async () => {
    const result = await run(['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:budget:auto-shutdown:fird']);
    expectUsageError(result, /^rack-webhooks send: unknown action "app:budget:auto-shutdown:fird"; nearest known actions: app:budget:auto-shutdown:fired, [a-z:-]+, [a-z:-]+\n$/);
  });

  it('an unknown command, with the nearest one suggested', async () => {
    expectUsageError(await run(['verfiy']), /^rack-webhooks: unknown command "verfiy"; did you mean "verify"\?/);
  });

  it('an unknown flag, a flag without its value, a bad value, a stray argument', async () => {
    expectUsageError(await run(['sign', '--kye', 'k']), /^rack-webhooks sign: unknown flag --kye \(did you mean --key\?\)/);
    const dashed = await run(['verify', '--key', '-KEYMARKER', '--header', 'x']);
    expectUsageError(dashed, /^rack-webhooks verify: --key needs a value/);
    expect(dashed.stderr).not.toContain('KEYMARKER');
    expectUsageError(await run(['verify', '--key', 'k', '--header', 'x', '--tolerance=-5']), /--tolerance must be a whole number of seconds/);
    expectUsageError(await run(['sign', '--key', 'k', '--secret-encoding', 'base64']), /--secret-encoding must be utf8 or hex/);
    const stray = await run(['sign', 'KEYMARKER']);
    expectUsageError(stray, /^rack-webhooks sign: unexpected argument/);
    expect(stray.stderr).not.toContain('KEYMARKER');
  });

  it('a key the SDK refuses, and flags send cannot use', async () => {
    expectUsageError(await run(['sign', '--key', 'a,b,c,d,e'], { stdin: '{}' }), /^rack-webhooks sign: sign takes at most 4 secrets/);
    expectUsageError(await run(['sign', '--key', 'nothex', '--secret-encoding', 'hex'], { stdin: '{}' }), /^rack-webhooks sign: Secret #1 is not an even-length hex string/);
    expectUsageError(await run(['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:create', '--set', 'bogus=1']), /--set "bogus": write status=VALUE/);
    expectUsageError(await run(['send', '--url', 'localhost:3000', '--action', 'app:create']), /--url must be an http:\/\/ or https:\/\/ URL/);
    expectUsageError(await run(['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:create', '--key', 'nothex', '--secret-encoding', 'hex']), /Secret #1 is not an even-length hex string/);
  });
});

describe('help', () => {
  it('lists every command, and every command has its own --help', async () => {
    const overview = await run(['--help']);
    expect(overview.code).toBe(0);
    const names = ['keygen', 'sign', 'verify', 'send', 'listen'];
    for (const name of names) expect(overview.stdout).toMatch(new RegExp(`^  ${name}\\s+\\S`, 'm'));
    const helps = await Promise.all(names.map((name) => run([name, '--help'])));
    helps.forEach((help, index) => {
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: rack-webhooks ${names[index]}`));
    });
    const bare = await run([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Usage: rack-webhooks <command>');
  });
});
