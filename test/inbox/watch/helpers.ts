import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, onTestFinished } from 'vitest';
import type { Alert, Watcher, WatchOptions } from '../../../src/inbox.js';
import { until } from '../../kit/time.js';
import type { InboxHarness } from '../helpers.js';

export const MINUTE = 60_000;

/** Every watch rule off, for a test that watches one thing only (spread it and turn that one on). */
export const NO_RULES = {
  dead: false,
  backlog: false,
  noWorker: false,
  refusals: false,
  silence: false,
  overdueLifecycle: false,
  logGaps: false,
} as const;

/** A clock that moves only when the test says: every bound is measured against it. */
export class TestClock {
  t = Date.now();
  now = () => new Date(this.t);
  advance(ms: number) {
    this.t += ms;
  }
}

export interface WatchedInbox {
  readonly watcher: Watcher;
  /** Every alert onAlert got, in order. */
  readonly alerts: Alert[];
  /** Failures the watcher reported. */
  readonly errors: Error[];
  /** Moves the test's clock by `ms`, then runs one evaluation. */
  later(ms: number): Promise<void>;
}

/**
 * A watcher on the test clock whose own loop never comes round again during a test (it evaluates
 * once at start, then hourly): the test calls check(). Retention off unless asked for. Stopped
 * when the test finishes.
 */
export async function watch(harness: Pick<InboxHarness, 'inbox'>, clock: TestClock, options: WatchOptions = {}): Promise<WatchedInbox> {
  const alerts: Alert[] = [];
  const errors: Error[] = [];
  let reads = 0;
  const watcher = harness.inbox.watch({
    onAlert: (alert) => {
      alerts.push(alert);
    },
    onError: (error) => errors.push(error),
    retention: false,
    intervalMs: 3_600_000,
    now: () => {
      reads++;
      return clock.now();
    },
    ...options,
  });
  onTestFinished(() => watcher.stop());
  // Its first evaluation is on a zero timer: once it has begun (it read the clock), a check runs
  // after it, and every later one is the test's own.
  await until(() => expect(reads).toBeGreaterThan(0));
  await watcher.check();
  const later = async (ms: number) => {
    clock.advance(ms);
    await watcher.check();
  };
  return { watcher, alerts, errors, later };
}

/** `rule status` of each alert: what a pager would see, in order. */
export const told = (alerts: readonly Alert[]) => alerts.map((alert) => `${alert.key} ${alert.status}`);

/** Rules off but the one under test. */
export function only(
  rule: 'dead' | 'backlog' | 'silence' | 'overdueLifecycle' | 'noWorker' | 'refusals' | 'logGaps',
  options: object = {},
) {
  const off = {
    dead: false,
    backlog: false,
    silence: false,
    overdueLifecycle: false,
    noWorker: false,
    refusals: false,
    logGaps: false,
  } as const;
  return { ...off, [rule]: options };
}

/** An HTTP endpoint that takes alerts as httpAlertSink posts them. */
export async function alertEndpoint(): Promise<{ url: string; received: Record<string, unknown>[] }> {
  const received: Record<string, unknown>[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push(JSON.parse(body) as Record<string, unknown>);
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`, received };
}
