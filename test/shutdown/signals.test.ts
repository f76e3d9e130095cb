/**
 * createShutdown's signals in a real process (the built package, as a user runs it): SIGTERM shuts
 * down and exits 0 even with a timer left open; a failed step exits 1; the same signal again exits
 * at once with 128 + its number; another signal meanwhile is ignored.
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt, ROOT } from '../examples/helpers.js';
import { waitFor } from '../kit/time.js';

const SCRIPT = `
import { createServer } from 'node:http';
import { createShutdown } from 'rack-webhooks/node';
const server = createServer((req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port));
createShutdown(server, {
  drainMs: Number(process.env.DRAIN_MS),
  close: () => {
    if (process.env.FAIL_STEP === '1') throw new Error('pool boom');
    console.log('pool ended');
  },
  logger: (record) => console.log(record.message),
});
setInterval(() => {}, 60_000); // left open, as applications do: the exit must not wait for it
`;

const running = new Set<ReturnType<typeof spawn>>();
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

async function start(env: Record<string, string>) {
  assertBuilt();
  const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const output = () => stdout;
  await waitFor(
    () => output().includes('listening'),
    60_000,
    () => `no listening line: ${output()}`,
  );
  return { child, output, exited };
}

describe('createShutdown and signals', () => {
  it('shuts down on SIGTERM and exits 0, though a timer is still open', { timeout: 120_000 }, async () => {
    const { child, output, exited } = await start({ DRAIN_MS: '100', FAIL_STEP: '0' });
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(output()).toContain('SIGTERM: not ready; taking deliveries for 100 ms more\n');
    expect(output()).toMatch(/pool ended\ndone in \d+ ms\n$/);
  });

  it('exits 1 when a step failed', { timeout: 120_000 }, async () => {
    const { child, output, exited } = await start({ DRAIN_MS: '0', FAIL_STEP: '1' });
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 1, signal: null });
    expect(output()).toContain('shutdown step close[0] failed: pool boom\n');
  });

  it('ignores another signal during the shutdown, and exits at once (143) on the same signal again', { timeout: 120_000 }, async () => {
    const { child, output, exited } = await start({ DRAIN_MS: '600000', FAIL_STEP: '0' });
    child.kill('SIGTERM');
    await waitFor(
      () => output().includes('SIGTERM: not ready'),
      60_000,
      () => `no drain line: ${output()}`,
    );
    child.kill('SIGINT');
    await waitFor(
      () => output().includes('SIGINT ignored'),
      60_000,
      () => `SIGINT not reported: ${output()}`,
    );
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 143, signal: null });
    expect(output()).toContain('SIGINT ignored: the shutdown started by SIGTERM is under way\nSIGTERM again: exiting now\n');
    expect(output()).not.toContain('pool ended');
  });
});
