import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * `@opentelemetry/api` is an optional peer: an application without it receives, refuses and serves
 * exactly as with it. The built package in a child process where the module cannot be resolved.
 */
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('without @opentelemetry/api installed', () => {
  it('the receiver, its refusals, observeReceivers() and the Node adapter all work, and nothing is printed', () => {
    const child = spawnSync(process.execPath, ['--import', pathToFileURL(fixture('hide-otel-api.mjs')).href, fixture('without-api.mjs')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('ok without @opentelemetry/api');
    expect(child.status).toBe(0);
  });
});
