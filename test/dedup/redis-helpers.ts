import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import { waitFor } from '../kit/time.js';

export const REDIS_URL = 'redis://127.0.0.1:6379';

export function reachable(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    socket.setTimeout(500);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

/**
 * Whether the Redis tests run. In CI an unreachable Redis is a failure; elsewhere the suite is
 * skipped with a line nobody can miss.
 */
export async function redisAvailable(): Promise<boolean> {
  if (await reachable(6379)) return true;
  if (process.env['CI']) throw new Error('Redis is not reachable on 127.0.0.1:6379; CI requires it (.ci/run starts it).');
  console.warn('\n!!! SKIPPING the Redis tests: nothing listens on 127.0.0.1:6379 (start redis-server to run them) !!!\n');
  return false;
}

/** A private redis-server this test can stop mid-run without disturbing the shared one. */
export async function startPrivateRedis(): Promise<{ port: number; stop: () => Promise<void> }> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  await waitFor(
    () => reachable(port),
    10_000,
    () => `private redis-server to listen on ${port}`,
    50,
  );
  return {
    port,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}
