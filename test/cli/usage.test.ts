import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/cli.js';
import { captureOutput, cli } from '../kit/cli.js';
import { expectUsageError, killChildren, run, tempDir, writeTemp, removeTempDirs } from './helpers.js';

captureOutput();
afterEach(killChildren);
afterAll(removeTempDirs);

describe('usage errors', { timeout: 60_000 }, () => {
  it('a missing key', async () => {
    expectUsageError(
      await run(['sign'], { stdin: '{}' }),
      /^rack-webhooks sign: no key: pass --key, --key-file, or set RACK_WEBHOOK_SECRETS\n$/,
    );
    expectUsageError(await run(['verify', '--header', 't=1,v1=00'], { stdin: '{}' }), /^rack-webhooks verify: no key/);
    expectUsageError(await run(['listen', '--port', '0']), /^rack-webhooks listen: no key/);
  });

  it('an unreadable file, naming it but not quoting anything from it', async () => {
    expectUsageError(
      await run(['sign', '--key', 'k', '--file', '/nonexistent/body.json']),
      /^rack-webhooks sign: cannot read --file "\/nonexistent\/body.json" \(ENOENT\)\n$/,
    );
    expectUsageError(
      await run(['verify', '--key-file', '/nonexistent/keys', '--header', 'x']),
      /^rack-webhooks verify: cannot read --key-file/,
    );
  });

  it('invalid JSON in --event or --config', async () => {
    const dir = tempDir();
    const broken = writeTemp(dir, 'broken.json', '{"action": "app:create", SECRETDATA');
    const event = await run(['send', '--url', 'http://127.0.0.1:9/', '--event', broken]);
    expectUsageError(event, /^rack-webhooks send: --event ".*broken.json" is not valid JSON\n$/);
    expect(event.stderr).not.toContain('SECRETDATA');
    expectUsageError(
      await run(['send', '--config', broken, '--action', 'app:create']),
      /^rack-webhooks send: --config ".*broken.json" is not valid JSON\n$/,
    );
    const list = writeTemp(dir, 'list.json', '["http://127.0.0.1:9/"]');
    expectUsageError(await run(['send', '--config', list, '--action', 'app:create']), /must be a JSON object/);
  });

  it('an unknown action, with the three nearest known ones', async () => {
    const result = await run(['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:budget:auto-shutdown:fird']);
    expectUsageError(
      result,
      /^rack-webhooks send: unknown action "app:budget:auto-shutdown:fird"; nearest known actions: app:budget:auto-shutdown:fired, [a-z:-]+, [a-z:-]+; --unknown-action sends it anyway, as a newer rack would\n$/,
    );
  });

  it('an unknown command, with the nearest one suggested', async () => {
    expectUsageError(await run(['verfiy']), /^rack-webhooks: unknown command "verfiy"; did you mean "verify"\?/);
  });

  it('an unknown flag, a flag without its value, a bad value, a stray argument', async () => {
    expectUsageError(await run(['sign', '--kye', 'k']), /^rack-webhooks sign: unknown flag --kye \(did you mean --key\?\)/);
    const dashed = await run(['verify', '--key', '-KEYMARKER', '--header', 'x']);
    expectUsageError(dashed, /^rack-webhooks verify: --key needs a value/);
    expect(dashed.stderr).not.toContain('KEYMARKER');
    expectUsageError(
      await run(['verify', '--key', 'k', '--header', 'x', '--tolerance=-5']),
      /--tolerance must be a whole number of seconds/,
    );
    expectUsageError(
      await run(['sign', '--key', 'k', '--secret-encoding', 'base64']),
      /--secret-encoding must be utf8 or hex, got "base64"$/m,
    );
    // A key pasted into the wrong flag is never echoed.
    const pasted = await run(['sign', '--key', 'k', '--secret-encoding', `KEYMARKER${'ab'.repeat(28)}`]);
    expectUsageError(pasted, /--secret-encoding must be utf8 or hex, got a value of 65 characters \(not shown: it may be a key\)/);
    expect(pasted.stderr).not.toContain('KEYMARKER');
    const stray = await run(['sign', 'KEYMARKER']);
    expectUsageError(stray, /^rack-webhooks sign: unexpected argument/);
    expect(stray.stderr).not.toContain('KEYMARKER');
  });

  it('a key the SDK refuses, and flags send cannot use', async () => {
    expectUsageError(await run(['sign', '--key', 'a,b,c,d,e'], { stdin: '{}' }), /^rack-webhooks sign: sign takes at most 4 secrets/);
    expectUsageError(
      await run(['sign', '--key', 'nothex', '--secret-encoding', 'hex'], { stdin: '{}' }),
      /^rack-webhooks sign: Secret #1 is not an even-length hex string/,
    );
    expectUsageError(
      await run(['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:create', '--set', 'bogus=1']),
      /--set "bogus": write status=VALUE/,
    );
    expectUsageError(
      await run(['send', '--url', 'localhost:3000', '--action', 'app:create']),
      /--url must be an http:\/\/ or https:\/\/ URL/,
    );
    expectUsageError(
      await run(['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:create', '--key', 'nothex', '--secret-encoding', 'hex']),
      /Secret #1 is not an even-length hex string/,
    );
  });
});

describe('flags', { timeout: 60_000 }, () => {
  it('reads --flag=VALUE and -h=VALUE as the flag they name', async () => {
    expectUsageError(await run(['sign', '--help=1']), /^rack-webhooks sign: --help takes no value\n$/);
    expectUsageError(await run(['sign', '-h=x']), /^rack-webhooks sign: --help takes no value\n$/);
    const unknownShort = await run(['sign', '-q=KEYMARKER']);
    expectUsageError(unknownShort, /^rack-webhooks sign: unknown flag -q; see --help\n$/);
    expect(unknownShort.stderr).not.toContain('KEYMARKER');
    // A value that starts with "-" is taken when written with "=".
    expect(await run(['sign', '--key=-dashed', '--timestamp=1'], { stdin: '{}' })).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^t=1,v1=/),
    });
  });

  it('reads a negative number as a flag, and says so (a delivery id is positive)', async () => {
    expectUsageError(
      await run(['inbox', 'show', '-1', '--database', 'postgres://127.0.0.1:9/x']),
      /^rack-webhooks inbox show: -1 is read as a flag, and there is no such flag \(a delivery id is a positive whole number\); see --help\n$/,
    );
  });

  it('does not echo a flag that looks like a pasted key', async () => {
    const pasted = await run(['sign', `--${'ab'.repeat(32)}`]);
    expectUsageError(
      pasted,
      /^rack-webhooks sign: unknown flag \(not shown: it does not look like a flag name, and may be a pasted value\); see --help\n$/,
    );
  });

  it('refuses a single-value flag given twice, and --event with --file', async () => {
    const dir = tempDir();
    const keys = writeTemp(dir, 'keys', 'k\n');
    expectUsageError(
      await run(['sign', '--key', 'k', '--timestamp', '1', '--timestamp', '2'], { stdin: '{}' }),
      /^rack-webhooks sign: --timestamp was given more than once; pass it once\n$/,
    );
    expectUsageError(
      await run(['verify', '--key-file', keys, '--key-file', keys, '--header', 'x'], { stdin: '{}' }),
      /^rack-webhooks verify: --key-file was given more than once; pass it once\n$/,
    );
    expectUsageError(
      await run(['send', '--url', 'http://127.0.0.1:9/', '--url', 'http://127.0.0.1:9/', '--action', 'app:create']),
      /^rack-webhooks send: --url was given more than once/,
    );
    const event = writeTemp(dir, 'event.json', '{}');
    expectUsageError(
      await run(['send', '--url', 'http://127.0.0.1:9/', '--file', event, '--event', event]),
      /^rack-webhooks send: --event and --file are the same flag: pass one of them, once\n$/,
    );
    // --key is the one flag meant to be repeated.
    expect(await run(['sign', '--key', 'a', '--key', 'b', '--timestamp', '1'], { stdin: '{}' })).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^t=1,v1=[0-9a-f]{64},v1=[0-9a-f]{64}\n$/),
    });
  });

  it('refuses a --timestamp of more than 15 digits, which no verifier takes', async () => {
    expect(await run(['sign', '--key', 'k', '--timestamp', '999999999999999'], { stdin: '{}' })).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^t=999999999999999,v1=/),
    });
    expectUsageError(
      await run(['sign', '--key', 'k', '--timestamp', '1000000000000000'], { stdin: '{}' }),
      /^rack-webhooks sign: --timestamp must be unix seconds of at most 15 digits \(a verifier refuses more\), got 16 digits\n$/,
    );
    expectUsageError(
      await run(['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:create', '--key', 'k', '--timestamp', '0000000000000001']),
      /^rack-webhooks send: --timestamp must be unix seconds of at most 15 digits/,
    );
  });

  it('refuses a --header-name that is not an HTTP header name, without echoing it', async () => {
    const reason =
      "--header-name must be an HTTP header name \\(letters, digits and !#\\$%&'\\*\\+-\\.\\^_`\\|~, such as X-Rack-Signature\\), but";
    expectUsageError(
      await run(['listen', '--port', '0', '--key', 'k', '--header-name', '']),
      new RegExp(`^rack-webhooks listen: ${reason} it is empty\\n$`),
    );
    expectUsageError(
      await run(['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:create', '--key', 'k', '--header-name', 'a b']),
      new RegExp(`^rack-webhooks send: ${reason} it contains a space\\n$`),
    );
    const pasted = await run(['verify', '--key', 'k', '--header', 'x', '--header-name', 'Service-Signature: t=1,v1=SIGMARKER'], {
      stdin: '{}',
    });
    expectUsageError(pasted, new RegExp(`^rack-webhooks verify: ${reason} it contains ":"\\n$`));
    expectUsageError(
      await run(['listen', '--port', '0', '--key', 'k', '--header-name', 'X-Sig\u00e9']),
      /but it contains a control or non-ASCII character\n$/,
    );
  });

  it('send refuses an empty key as sign and verify do, instead of dropping it', async () => {
    const args = ['send', '--url', 'http://127.0.0.1:9/', '--action', 'app:create'];
    expectUsageError(await run(args, { env: { RACK_WEBHOOK_SECRETS: 'a,,b' } }), /^rack-webhooks send: Secret #2 is empty\.\n$/);
    expectUsageError(await run([...args, '--key', 'a,']), /^rack-webhooks send: Secret #2 is empty\.\n$/);
    expectUsageError(await run([...args, '--key', 'a', '--key', ' ']), /^rack-webhooks send: Secret #2 is empty\.\n$/);
    expectUsageError(await run(['sign', '--key', 'a,'], { stdin: '{}' }), /^rack-webhooks sign: Secret #2 is empty\.\n$/);
  });
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('help', { timeout: 60_000 }, () => {
  // Every command and subcommand the CLI has, from its own list: a new command is covered here.
  const leaves = COMMANDS.flatMap((command) =>
    'subcommands' in command
      ? command.subcommands.map((sub) => ({ words: [command.name, sub.name], command: sub }))
      : [{ words: [command.name], command }],
  );

  it.each(leaves.map((leaf) => [leaf.words.join(' '), leaf] as const))(
    '%s: every flag is declared with its help, and --help shows that help',
    (_, leaf) => {
      const declared = leaf.command.flags;
      for (const [name, flag] of Object.entries(declared)) {
        // Untyped on purpose: a declaration without help (from JavaScript, or a cast) must fail here.
        const help: unknown = (flag as { help?: unknown }).help;
        if (typeof help === 'string') {
          expect(help.trim(), `--${name}`).not.toBe('');
          const [first] = help.split('\n');
          expect(leaf.command.help, `--${name}`).toMatch(new RegExp(`^  --${name}\\b.* {2}${escape(first!)}$`, 'm'));
        } else {
          // Documented in another flag's line, which names it.
          const host = (help as { in?: string } | undefined)?.in;
          expect(host, `--${name} has no help`).toBeTypeOf('string');
          expect(declared[host!]?.help, `--${name} is documented in --${host}`).toMatch(new RegExp(`--${name}\\b`));
        }
      }
    },
  );

  it('lists every command, and every command has its own --help', async () => {
    const overview = await run(['--help']);
    expect(overview.code).toBe(0);
    for (const command of COMMANDS) expect(overview.stdout).toMatch(new RegExp(`^  ${command.name}\\s+\\S`, 'm'));
    const bare = await run([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Usage: rack-webhooks <command>');
  });

  // In this process (runCli): the test above runs the built CLI for the exit codes and pipes of
  // --help and of a usage error; a process per command would add nothing but 0.3 s each.
  it.each(leaves.map((leaf) => [leaf.words.join(' '), leaf] as const))(
    '%s: --help names every flag it takes; a stray unknown flag is refused',
    async (_, leaf) => {
      const help = await cli(...leaf.words, '--help');
      expect(help.code, help.err).toBe(0);
      expect(help.out).toMatch(new RegExp(`^Usage: rack-webhooks ${leaf.words.join(' ')}\\b`));
      for (const flag of Object.keys(leaf.command.flags)) expect(help.out, `--${flag}`).toMatch(new RegExp(`--${flag}\\b`));
      const refused = await cli(...leaf.words, '--no-such-flag');
      expectUsageError(
        { code: refused.code, stdout: refused.out, stderr: refused.err },
        new RegExp(`^rack-webhooks ${leaf.words.join(' ')}: unknown flag --no-such-flag`),
      );
    },
  );
});
