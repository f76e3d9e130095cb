// scripts/demo.mjs (`npm run demo`, after the build `npm test` runs first): the Express example with
// six deliveries, then the inbox on PGlite (scripts/demo-inbox.mjs), run as `node scripts/demo.mjs`.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt, ROOT, runToExit, stopAllExamples } from './helpers.js';
import { until } from '../kit/time.js';

const ACTION = 'app:budget:auto-shutdown:fired';
let scratch: string | undefined;

afterEach(async () => {
  await stopAllExamples();
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/** The inbox part's step lines: `<elapsed> s  <text>`. */
function steps(stdout: string): { seconds: number; text: string }[] {
  return [...stdout.matchAll(/^\s+(\d+\.\d\d) s {2}(.+)$/gm)].map((match) => ({ seconds: Number(match[1]), text: match[2]! }));
}

describe('scripts/demo.mjs', () => {
  it(
    'exits 0 on its own, shows every delivery and inbox step as expected, never the key, and leaves no data directory',
    { timeout: 45_000 },
    async () => {
      assertBuilt();
      for (const entry of ['inbox', 'testing']) expect(existsSync(`${ROOT}dist/${entry}.js`), `dist/${entry}.js is built`).toBe(true);
      // The demo's PGlite directory goes under TMPDIR: a directory of our own shows it was removed.
      scratch = mkdtempSync(join(tmpdir(), 'demo-test-'));
      // Bounded well above the demo's few seconds: PGlite's first start is slow on a loaded machine.
      const result = await runToExit(['scripts/demo.mjs'], { TMPDIR: scratch }, 40_000);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const out = result.stdout;

      // Part 1: examples/express.mjs.
      const rows = out.split('\n').map((line) => line.trim().split(/\s{2,}/));
      const row = (name: string) => rows.find((cells) => cells[0] === name);
      expect(row('delivery')).toEqual(['delivery', 'expected', 'got', 'result']);
      expect(row('fired')).toEqual(['fired', '200 processed', '200 processed', 'ok']);
      expect(row('failed')).toEqual(['failed', '200 processed', '200 processed', 'ok']);
      expect(row('cap')).toEqual(['cap', '200 processed', '200 processed', 'ok']);
      expect(row('unsigned')).toEqual(['unsigned', '401 missing_header', '401 missing_header', 'ok']);
      expect(row('forged')).toEqual(['forged', '401 signature_mismatch', '401 signature_mismatch', 'ok']);
      expect(row('replayed')).toEqual(['replayed', '200 duplicate', '200 duplicate', 'ok']);
      expect(out).toContain('auto-shutdown fired: app=billing-api');
      expect(out).toContain('every delivery got the expected answer');

      // Part 2: the inbox on PGlite, one line per step, in this order.
      const texts = steps(out).map((step) => step.text);
      const accepted = new RegExp(`^sent ${ACTION}: 200 \\{"status":"accepted"\\}, stored as delivery (\\d+)$`);
      const id = texts.map((text) => accepted.exec(text)?.[1]).find((match) => match !== undefined);
      expect(id, `an accepted line in:\n${out}`).toMatch(/^\d+$/);
      const expected = [
        accepted,
        /^sent the same delivery again: 200 \{"status":"duplicate"\}, still 1 row$/,
        /^inbox\.work\(receiver\): worker started/,
        /^attempt 1 failed \(pager unreachable\): its pages row rolled back; retry in 200 ms$/,
        /^attempt 2 failed \(pager unreachable\): its pages row rolled back; retry in 400 ms$/,
        new RegExp(`^attempt 3 succeeded: delivery ${id} done, its pages row committed$`),
        /^pages table: 1 row, written by attempt 3/,
        /^inbox\.replay\(\{ action: 'app:budget:\*' \}\): 1 delivery back to pending$/,
        /^replayed: attempt 4 ran the handler again and succeeded; pages table still 1 row/,
      ];
      const positions = expected.map((pattern) => texts.findIndex((text) => pattern.test(text)));
      expect(
        positions.every((position) => position >= 0),
        `every step line in:\n${out}`,
      ).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      // The backoff was waited out (a floor, not a speed bound): 200 ms, then 400 ms.
      const at = (pattern: RegExp) => steps(out).find((step) => pattern.test(step.text))!.seconds;
      expect(at(expected[4]!) - at(expected[3]!)).toBeGreaterThanOrEqual(0.19);
      expect(at(expected[5]!) - at(expected[4]!)).toBeGreaterThanOrEqual(0.39);

      const list = out
        .slice(out.indexOf('inbox.list():'))
        .split('\n')
        .slice(1, 3)
        .map((line) => line.trim().split(/\s{2,}/));
      expect(list).toEqual([
        ['id', 'state', 'attempts', 'action'],
        [id, 'done', '4', ACTION],
      ]);
      expect(out).toMatch(/^inbox\.stats\(\): pending 0, running 0, done 1, dead 0, ignored 0, total 1$/m);
      expect(out).toContain('every inbox step went as expected (temporary directory removed)');
      expect(out).not.toMatch(/ FAIL$|^\s*FAIL:/m);

      // No key (32 random bytes as hex), no signature, no body.
      expect(out).not.toMatch(/[0-9a-f]{64}/i);
      expect(out).not.toMatch(/v1=|t=\d{9,}/);
      expect(out).not.toMatch(/"action"|"data"|"tick_id"/);
      // The PGlite data directory was removed.
      expect(readdirSync(scratch)).toEqual([]);
    },
  );
});

describe('scripts/demo.mjs --console', () => {
  it('keeps the demo inbox open in the console until Ctrl-C, then removes its directory', { timeout: 90_000 }, async () => {
    assertBuilt();
    scratch = mkdtempSync(join(tmpdir(), 'demo-console-test-'));
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['scripts/demo.mjs', '--console'], {
      cwd: ROOT,
      env: { ...process.env, TMPDIR: scratch },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await until(() => expect(stdout.includes('Ctrl-C to stop\n') || child.exitCode !== null).toBe(true), 75_000, 100).catch(() => {});
      const url = /^open (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/m.exec(stdout)?.[1];
      expect(url, `stdout: ${stdout}\nstderr: ${stderr}`).toBeDefined();
      expect(stdout).toMatch(/3 more deliveries for the console/);
      const token = new URL(url!).searchParams.get('token')!;
      const overview = await fetch(new URL('/api/overview', url), { headers: { authorization: `Bearer ${token}` } });
      expect(await overview.json()).toMatchObject({ stats: { total: 4, done: 3, dead: 1, pending: 0 } });
      const apps = await fetch(new URL('/api/apps', url), { headers: { authorization: `Bearer ${token}` } });
      const payments = ((await apps.json()) as { apps: { app: string; phase: string }[] }).apps.find((app) => app.app === 'payments-api');
      expect(payments?.phase).toBe('armed');
      // Ctrl-C: the demo passes it on to the console, waits for it, and removes the inbox's directory.
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(readdirSync(scratch).filter((name) => name.startsWith('rack-webhooks-demo-'))).toEqual([]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
