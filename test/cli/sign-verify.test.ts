import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killChildren, run, tempDir, writeTemp, removeTempDirs } from './helpers.js';

afterEach(killChildren);
afterAll(removeTempDirs);

const BODY =
  '{"action":"app:create","status":"success","timestamp":"2026-04-27T10:30:00.1Z","data":{"name":"café-BODYMARKER","rack":"r","actor":"a"}}';
const KEY = 'supersecret-KEYMARKER';
const OLD_KEY = 'oldsecret-KEYMARKER';

async function signBody(args: string[], body = BODY, env: Record<string, string> = {}): Promise<string> {
  const signed = await run(['sign', ...args], { stdin: body, env });
  expect(signed, signed.stderr).toMatchObject({ code: 0, stderr: '' });
  return signed.stdout.trim();
}

describe('keygen', () => {
  it('prints 32 random bytes as 64 hex characters, different every time', async () => {
    const [a, b, json] = await Promise.all([run(['keygen']), run(['keygen']), run(['keygen', '--json'])]);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/^[0-9a-f]{64}\n$/);
    expect(b.stdout).toMatch(/^[0-9a-f]{64}\n$/);
    expect(a.stdout).not.toBe(b.stdout);
    expect(JSON.parse(json.stdout)).toEqual({ key: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });
});

describe('sign and verify', { timeout: 60_000 }, () => {
  it('round-trips through two processes, the body piped on stdin', async () => {
    const header = await signBody(['--key', KEY]);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const verified = await run(['verify', '--key', KEY, '--header', header], { stdin: BODY });
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/^ok: signature verified with secret #1 of 1 \(secretIndex 0\); signed \d+ s ago \(t=\d+\)\n$/);
  });

  it("signs with every key and reports which of the receiver's keys matched", async () => {
    const header = await signBody(['--key', KEY, '--key', OLD_KEY, '--timestamp', '1777285800']);
    expect(header).toMatch(/^t=1777285800,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    const verified = await run(['verify', '--key', `other,${OLD_KEY}`, '--header', header, '--now', '1777285812'], { stdin: BODY });
    expect(verified.stdout).toBe('ok: signature verified with secret #2 of 2 (secretIndex 1); signed 12 s ago (t=1777285800)\n');
  });

  it('takes the keys from RACK_WEBHOOK_SECRETS and from --key-file, trimmed', async () => {
    const dir = tempDir();
    const keyFile = writeTemp(dir, 'keys', `  ${KEY}\n${OLD_KEY}\n`);
    const header = await signBody([], BODY, { RACK_WEBHOOK_SECRETS: ` ${OLD_KEY} ` });
    const viaFile = await run(['verify', '--key-file', keyFile, '--header', header], { stdin: BODY });
    expect(viaFile.stdout).toMatch(/^ok: .* secret #2 of 2 \(secretIndex 1\)/);
    const bodyFile = writeTemp(dir, 'body.json', BODY);
    const viaEnv = await run(['verify', '--header', header, '--file', bodyFile], { env: { RACK_WEBHOOK_SECRETS: `${KEY},${OLD_KEY}` } });
    expect(viaEnv.stdout).toMatch(/^ok: .* secret #2 of 2 \(secretIndex 1\)/);
  });

  it('fails with exit 1 and one line naming the code, without the key, the signature or the body', async () => {
    const header = await signBody(['--key', KEY]);
    const failed = await run(['verify', '--key', OLD_KEY, '--header', header], { stdin: BODY });
    expect(failed.code).toBe(1);
    const output = failed.stdout + failed.stderr;
    expect(output).toMatch(/^signature_mismatch: No v1 signature \(of 1\) matches any of the 1 configured secret\. [^\n]+\n$/);
    for (const secret of ['KEYMARKER', 'BODYMARKER', header.slice(header.indexOf('v1=') + 3)]) expect(output).not.toContain(secret);
  });

  it('tells the operator when the key is meant to be hex-decoded or quoted, and trims whitespace', async () => {
    const hexKey = (await run(['keygen'])).stdout.trim();
    const header = await signBody(['--key', hexKey, '--secret-encoding', 'hex']);
    const failed = await run(['verify', '--key', hexKey, '--secret-encoding', 'utf8', '--header', header], { stdin: BODY });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(
      'It would verify with secret #1 decoded as hex: pass --secret-encoding hex (this rack hex-decodes webhook_signing_key).',
    );
    expect(failed.stdout).not.toContain(hexKey);
    const fixed = await run(['verify', '--key', hexKey, '--secret-encoding', 'hex', '--header', header], { stdin: BODY });
    expect(fixed.code).toBe(0);
    // Without --secret-encoding, a key of a deployed rack's shape is tried both ways, and the line says which matched.
    const unset = await run(['verify', '--key', hexKey, '--header', header], { stdin: BODY });
    expect(unset).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(
        /^ok: signature verified with secret #1 of 1 \(secretIndex 0\) \(hex-decoded, as a deployed rack uses it\); /,
      ),
    });
    expect(unset.stdout).not.toContain(hexKey);

    // One rule everywhere: --key is trimmed per key, as the key file, the variable and the SDK's string form are.
    const signed = await signBody(['--key', KEY]);
    const padded = await run(['verify', '--key', `${KEY} `, '--header', signed], { stdin: BODY });
    expect(padded).toMatchObject({ code: 0, stdout: expect.stringMatching(/^ok: signature verified with secret #1 of 1/) });
    expect(await run(['verify', '--key', `other, ${KEY}\n`, '--header', signed], { stdin: BODY })).toMatchObject({ code: 0 });
    const quoted = await run(['verify', '--key', `"${KEY}"`, '--header', signed], { stdin: BODY });
    expect(quoted).toMatchObject({
      code: 1,
      stdout: expect.stringMatching(/^signature_mismatch: .*Secret #1 is in quotes .*Remove the quotes\./),
    });
    expect(quoted.stdout).not.toContain(KEY);
  });

  it('reports a stale timestamp and a malformed header by their codes', async () => {
    const header = await signBody(['--key', KEY, '--timestamp', '1000']);
    const stale = await run(['verify', '--key', KEY, '--header', header, '--now', '2000'], { stdin: BODY });
    expect(stale).toMatchObject({
      code: 1,
      stdout: expect.stringMatching(/^timestamp_too_old: Signature timestamp is 1000 s older than now; tolerance is 300 s\./),
    });
    const unchecked = await run(['verify', '--key', KEY, '--header', header, '--now', '2000', '--tolerance', 'Infinity'], { stdin: BODY });
    expect(unchecked.code).toBe(0);
    const malformed = await run(['verify', '--key', KEY, '--header', 't=abc,v1=00'], { stdin: BODY });
    expect(malformed).toMatchObject({ code: 1, stdout: expect.stringMatching(/^malformed_header: /) });
  });

  it('accepts a header pasted with its name, and verifies the exact bytes (a BOM, bytes that are not UTF-8)', async () => {
    const dir = tempDir();
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(BODY), Buffer.from([0xff])]);
    const bodyFile = writeTemp(dir, 'body.bin', bytes);
    const header = (await run(['sign', '--key', KEY, '--file', bodyFile])).stdout.trim();
    const verified = await run(['verify', '--key', KEY, '--header', `Service-Signature: ${header}`], { stdin: bytes });
    expect(verified.code).toBe(0);
  });

  it('accepts a pasted header line of any name, as a deployed rack names it, and still a bare value', async () => {
    const hexKey = (await run(['keygen'])).stdout.trim();
    const header = await signBody(['--key', hexKey, '--secret-encoding', 'hex']);
    for (const pasted of [`Acme-Signature: ${header}`, `acme-signature:${header}`, `  X-Rack-Signature :  ${header}  `, header]) {
      const verified = await run(['verify', '--key', hexKey, '--header', pasted], { stdin: BODY });
      expect(verified, pasted).toMatchObject({ code: 0, stdout: expect.stringMatching(/^ok: signature verified with secret #1 of 1/) });
      expect(verified.stdout + verified.stderr).not.toContain(hexKey);
    }
    const named = await run(['verify', '--key', hexKey, '--header-name', 'Acme-Signature', '--header', `Acme-Signature: ${header}`], {
      stdin: BODY,
    });
    expect(named.code).toBe(0);
    const otherName = await run(
      ['verify', '--key', hexKey, '--header-name', 'Service-Signature', '--header', `Acme-Signature: ${header}`],
      {
        stdin: BODY,
      },
    );
    expect(otherName.code).toBe(2);
    expect(otherName.stderr).toMatch(/--header is a Acme-Signature line but --header-name is Service-Signature/);
    expect(otherName.stdout + otherName.stderr).not.toContain(hexKey);
    expect(otherName.stdout + otherName.stderr).not.toContain(header.slice(header.indexOf('v1=') + 3));
  });
});
