// scripts/demo.mjs (`npm run demo`): runs examples/express.mjs and checks six deliveries.
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt, runToExit, stopAllExamples } from './helpers.js';

afterEach(stopAllExamples);

describe('scripts/demo.mjs', () => {
  it('exits 0 and prints one ok row per delivery, and never the key', { timeout: 20_000 }, async () => {
    assertBuilt();
    const result = await runToExit(['scripts/demo.mjs'], {}, 15_000);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const rows = result.stdout.split('\n').map((line) => line.trim().split(/\s{2,}/));
    const row = (name: string) => rows.find((cells) => cells[0] === name);
    expect(row('delivery')).toEqual(['delivery', 'expected', 'got', 'result']);
    expect(row('fired')).toEqual(['fired', '200 processed', '200 processed', 'ok']);
    expect(row('failed')).toEqual(['failed', '200 processed', '200 processed', 'ok']);
    expect(row('cap')).toEqual(['cap', '200 processed', '200 processed', 'ok']);
    expect(row('unsigned')).toEqual(['unsigned', '401 missing_header', '401 missing_header', 'ok']);
    expect(row('forged')).toEqual(['forged', '401 signature_mismatch', '401 signature_mismatch', 'ok']);
    expect(row('replayed')).toEqual(['replayed', '200 duplicate', '200 duplicate', 'ok']);
    expect(result.stdout).not.toMatch(/ FAIL$/m);
    expect(result.stdout).not.toMatch(/[0-9a-f]{64}/i); // no key, no signature
    expect(result.stdout).toContain('auto-shutdown fired: app=billing-api');
  });
});
