// What a user sees when their app crashes inside the package: Node prints the source line of the
// throw and the stack. The built files are readable, so that is a few hundred bytes that start with
// the useful line, not a 13 KB minified line of dist/inbox.js (issue 28).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { assertBuilt, ROOT } from './helpers.js';

describe('an uncaught error from the built package', () => {
  it('prints a short, readable report: the throw, the message, then the stack, every line short', () => {
    assertBuilt();
    const dir = mkdtempSync(join(tmpdir(), 'rw-uncaught-'));
    try {
      const script = join(dir, 'app.mjs');
      const inbox = pathToFileURL(join(ROOT, 'dist/inbox.js')).href;
      writeFileSync(script, `import { createInbox } from ${JSON.stringify(inbox)};\ncreateInbox({ database: 42 });\n`);
      const { status, stderr } = spawnSync(process.execPath, [script], { encoding: 'utf8' });
      expect(status).toBe(1);
      expect(stderr.length).toBeLessThan(2000);
      const lines = stderr.split('\n');
      expect(Math.max(...lines.map((line) => line.length))).toBeLessThan(300);
      expect(lines[0]).toMatch(/dist\/inbox\.js:\d+$/);
      expect(lines[1]).toMatch(/throw new TypeError\(/);
      expect(stderr).toMatch(/\nTypeError: createInbox: database must be a pg Pool or Client, .* got number\n {4}at /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ships no source maps: the readable files are what a stack points to', () => {
    assertBuilt();
    expect(readdirSync(join(ROOT, 'dist')).filter((file) => file.endsWith('.map'))).toEqual([]);
  });
});
