import { onTestFinished } from 'vitest';
import type { Receiver } from '../../src/index.js';
import { createInbox, type Inbox, type InboxOptions, type Worker, type WorkOptions } from '../../src/inbox.js';
import { createSignedRequestSync } from '../../src/testing/index.js';
import { openDatabase, type ClientKind, type TestDatabase } from '../inbox/databases.js';
import type { TestSdk } from './otel-sdk.js';

/** What the inbox telemetry tests share: an inbox on a fresh table, its workers stopped after the test. */
export const SECRET = 'telemetry-inbox-secret';

export const FAST: WorkOptions = { pollIntervalMs: 20, backoff: { baseMs: 10, jitter: 'none' } };

export function event(action: string, tick: string, app = 'billing-api') {
  return {
    action,
    status: 'success',
    timestamp: new Date().toISOString(),
    data: { app, rack: 'example-rack', actor: 'system', tick_id: tick },
  };
}

export async function setup(kind: ClientKind, inboxOptions: Partial<InboxOptions<unknown>> = {}) {
  const db: TestDatabase = await openDatabase(kind, { migrated: true });
  const workers: Worker[] = [];
  onTestFinished(async () => {
    await Promise.allSettled(workers.map((worker) => worker.stop()));
    await db.close();
  });
  const inbox: Inbox<unknown> = createInbox({ database: db.database as unknown, table: db.table, ...inboxOptions });
  await inbox.migrate();
  return {
    db,
    inbox,
    work(receiver: Receiver<unknown>, options: WorkOptions = {}) {
      const worker = inbox.work(receiver, { ...FAST, ...options });
      workers.push(worker);
      return worker;
    },
    deliver: (receiver: Receiver<unknown>, body: object) =>
      receiver.receive(createSignedRequestSync(body, { secrets: SECRET, timestamp: Math.floor(Date.now() / 1000) })),
  };
}

/** Delivers inside an HTTP server span, as an app with HTTP instrumentation does. */
export async function deliverInServerSpan(sdk: TestSdk, deliver: () => Promise<unknown>) {
  const { span, result } = sdk.inServerSpan(deliver);
  await result;
  span.end();
  return span.spanContext();
}
