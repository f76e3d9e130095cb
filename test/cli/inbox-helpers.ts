/**
 * For the inbox CLI suite: the commands run in this process through runCli (so coverage sees
 * them; helpers.ts runs the built CLI as a real process), against real databases, with
 * deliveries stored through the SDK's own receiver and states reached through a real worker.
 */
import { afterEach, beforeEach, vi } from 'vitest';
import { runCli } from '../../src/cli/cli.js';
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

let output = { stdout: '', stderr: '' };

/** For the suite: captures what runCli writes (call at the top level of the test file). */
export function captureOutput(): void {
  beforeEach(() => {
    output = { stdout: '', stderr: '' };
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((output.stdout += String(chunk)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((output.stderr += String(chunk)), true));
    delete process.env['RACK_WEBHOOK_SECRETS'];
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
}

export function writtenSoFar(): { stdout: string; stderr: string } {
  return output;
}

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** One command in this process: its exit code and only the output it wrote. */
export async function cli(...args: string[]): Promise<CliResult> {
  const [outStart, errStart] = [output.stdout.length, output.stderr.length];
  const code = await runCli(args);
  return { code, out: output.stdout.slice(outStart), err: output.stderr.slice(errStart) };
}

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
