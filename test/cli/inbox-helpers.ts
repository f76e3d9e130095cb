/**
 * For the inbox CLI suite: the commands run in this process (test/kit/cli.ts), against real databases, with
 * deliveries stored through the SDK's own receiver and states reached through a real worker.
 */
import { createInbox } from '../../src/inbox.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { createSignedRequestSync } from '../../src/testing/signed-request.js';

export const KEY = 'inbox-cli-test-key';

/**
 * Four deliveries, in event order: one that succeeds, two whose handler fails (dead after one
 * attempt), one of an unknown action (stored as ignored). Odd spacing, non-ASCII text and a
 * trailing line break: only a byte-for-byte copy keeps their signatures valid.
 */
export const BODIES = [
  '{"action":"app:create",  "status":"success","timestamp":"2026-01-01T00:00:00.000000001Z","data":{"name":"alpha","rack":"r","actor":"x"}}',
  '{"action":"app:budget:cap","status":"success","timestamp":"2026-01-02T00:00:00Z","data":{"app":"alpha","rack":"r","actor":"system"}}',
  '{"action":"app:budget:cap","status":"success","timestamp":"2026-01-03T00:00:00Z","data":{"app":"beta","rack":"café","actor":"system"}}\n',
  '{"action":"app:from-the-future","status":"success","timestamp":"2026-01-04T00:00:00Z","data":{"app":"beta"}}',
] as const;

/** What the failing handler throws: a terminal escape sequence a sender could have put there. */
export const HANDLER_ERROR = 'cap handler failed \u001b[31mred';

export { captureOutput, cli, writtenSoFar, type CliResult } from '../kit/cli.js';

/**
 * Stores BODIES through a receiver with the inbox, then runs one worker pass: app:create
 * succeeds (done), app:budget:cap throws (dead, maxAttempts 1), the unknown action stays ignored.
 */
export async function seedDeliveries(database: unknown, table: string): Promise<void> {
  const inbox = createInbox({ database, table, notify: false });
  const receiver = createReceiver({ secrets: KEY, inbox });
  for (const body of BODIES) {
    const { outcome } = await receiver.receive(createSignedRequestSync(body, { secrets: KEY }));
    if (outcome !== 'accepted' && outcome !== 'ignored') throw new Error(`seeding: ${outcome}`);
  }
  receiver.on('app:create', () => {});
  receiver.on('app:budget:cap', () => {
    throw new Error(HANDLER_ERROR);
  });
  const worker = inbox.work(receiver, { maxAttempts: 1, listen: false, workerId: 'cli-test-worker', concurrency: 1 });
  await worker.drain();
  await worker.stop();
}

/** An export line made by hand, signed at `t` and received at `receivedAt`. */
export function exportLineFor(body: string, t: number, receivedAt: Date, secret = KEY): string {
  const { headers } = createSignedRequestSync(body, { secrets: secret, timestamp: t });
  return JSON.stringify({ received_at: receivedAt.toISOString(), signature: headers['service-signature'], body });
}
