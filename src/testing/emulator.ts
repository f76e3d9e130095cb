import { DEFAULT_HEADER_NAME } from '../receiver/create-receiver.js';
import { MAX_SIGNING_SECRETS } from '../signature/limits.js';
import { rackKeyProblems } from '../signature/rack-key-checks.js';
import { sign } from '../signature/sign.js';
import { MAX_TIMER_MS } from '../shared/timers.js';
import { deployedJson } from './deployed-json.js';
import { RackApiEmulator } from './rack-api/api.js';
import { DEFAULT_DISPATCH_TIMEOUT_MS, parseReceiverEntry } from './receiver-config.js';
import type { DispatchResult, RackEmulator, RackEmulatorOptions, WebhooksConfig } from './types.js';

export { DEFAULT_DISPATCH_TIMEOUT_MS, parseReceiverEntry };

/**
 * The keys the rack would sign with, or why it sends unsigned. Split as the rack splits its
 * parameter (comma-separated, each trimmed); more than 4, or (with `keyChecks`) any key failing a
 * deployed rack's checks, turns signing off for every delivery instead of failing.
 */
interface Signing {
  readonly keys: string[];
  /** The rack's log line when signing was turned off. */
  readonly disabled?: string;
}

function signingOf(keys: string | readonly string[] | undefined, keyChecks: boolean): Signing {
  if (keys === undefined || (typeof keys === 'string' && keys.trim() === '')) return { keys: [] };
  const list = (typeof keys === 'string' ? keys.split(',') : [...keys]).map((key) => key.trim());
  if (list.length === 0) return { keys: [] };
  const problems = keyChecks
    ? rackKeyProblems(list)
    : list.length > MAX_SIGNING_SECRETS
      ? rackKeyProblems(list).filter((problem) => problem.check === 'too_many_keys')
      : [];
  if (problems.length === 0) return { keys: keyChecks ? list : list.filter((key) => key !== '') };
  const first = problems[0]!;
  const key = first.keyIndex === undefined ? '' : ` key=${first.keyIndex + 1}`;
  return {
    keys: [],
    disabled: `ns=k8s at=webhook_signing_key result=invalid reason=${first.check}${key} count=${list.length} signing=disabled`,
  };
}

/**
 * What a Node timer can wait: whole milliseconds (a Go duration of `1.5ms` or `5µs` is rounded up,
 * never to 0), and at most 2^31 - 1, past which the timer fires at once; longer waits 24.8 days.
 */
function timerMs(timeoutMs: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(timeoutMs)));
}

/** At most this much of a receiver's answer is read: enough for `{"error":…,"message":…}`. */
const REPLY_LIMIT_BYTES = 4096;

/**
 * `user:pass@` in a receiver URL becomes `Authorization: Basic`, as Go's HTTP client (the rack's)
 * sends it; fetch refuses a URL with credentials.
 */
function withoutCredentials(url: string, headers: Record<string, string>): { url: string; headers: Record<string, string> } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, headers }; // fetch reports it
  }
  if (parsed.username === '' && parsed.password === '') return { url, headers };
  const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  const bytes = new TextEncoder().encode(credentials);
  const basic = btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(''));
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.href, headers: { ...headers, authorization: `Basic ${basic}` } };
}

/** The receiver's JSON answer (`{"status":…}` or `{"error":…,"message":…}`), from its first 4 KiB. */
async function readReply(response: Response): Promise<DispatchResult['reply']> {
  const reader = response.body?.getReader();
  if (reader === undefined) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < REPLY_LIMIT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) bytes.set(chunk, (offset += chunk.byteLength) - chunk.byteLength);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes.subarray(0, REPLY_LIMIT_BYTES)));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const reply: { status?: string; error?: string; message?: string } = {};
  for (const key of ['status', 'error', 'message'] as const) {
    const value = (parsed as Record<string, unknown>)[key];
    if (typeof value === 'string') reply[key] = value;
  }
  return Object.keys(reply).length === 0 ? undefined : reply;
}

/** The receiver's host (and port) for the rack's `at=non2xx` line: never its credentials, path or query. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

async function deliver(
  name: string,
  url: string,
  timeoutMs: number,
  body: string | Uint8Array,
  headers: Record<string, string>,
  log: (line: string) => void,
): Promise<DispatchResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const request = withoutCredentials(url, headers);
  try {
    const signal = AbortSignal.timeout(timerMs(timeoutMs));
    const payload = typeof body === 'string' ? body : new Uint8Array(body);
    const response = await fetch(request.url, { method: 'POST', headers: request.headers, body: payload, signal });
    const durationMs = elapsed();
    // A deployed rack logs an answer of 400 or more, and nothing else about it (field notes).
    if (response.status >= 400) log(`ns=event_dispatch at=non2xx url_host=${hostOf(request.url)} status=${response.status}`);
    // The rack only logs the status; the answer's first 4 KiB are read for the report, within the
    // same timeout, and the rest dropped unread.
    const reply = await readReply(response).catch(() => undefined);
    return { name, url, status: response.status, ...(reply === undefined ? {} : { reply }), timeoutMs, durationMs };
  } catch (error) {
    const timedOut = (error as { name?: string }).name === 'TimeoutError';
    const message = timedOut
      ? `timed out after ${timeoutMs} ms`
      : error instanceof Error
        ? error.cause instanceof Error
          ? error.cause.message
          : error.message
        : String(error);
    return { name, url, error: message, ...(timedOut ? { timedOut } : {}), timeoutMs, durationMs: elapsed() };
  }
}

/**
 * A rack's sending side, as the spec and the field notes describe it: reads the `webhooks` map at
 * every dispatch, parsing each value as a deployed rack does and skipping bad entries with its log
 * line; signs with up to 4 keys (more, or a key failing a deployed rack's checks under
 * `keyChecks`, sends unsigned and says so, as a deployed rack does); serialises events as the
 * deployed sender does; POSTs to every receiver at once with its own timeout, never retries, and
 * reports each receiver's status (which the rack itself ignores).
 *
 * @param options - The `webhooks` map, the signing keys and how they are used, where log lines go.
 * @returns The emulator: `dispatch(event)` sends to every configured receiver.
 *
 * @example
 * ```ts
 * import { createRackEmulator, createTestEvent } from 'rack-webhooks/testing';
 *
 * const rack = createRackEmulator({
 *   webhooks: { pager: 'http://127.0.0.1:3000/webhooks', chat: '{"url":"http://127.0.0.1:3001/hook","timeout":"5s"}' },
 *   signingKeys: 'new-key,old-key',
 * });
 * const results = await rack.dispatch(createTestEvent('app:budget:auto-shutdown:fired'));
 * // [{ name: 'pager', url, status: 200, timeoutMs: 30000, durationMs: 4 }, { name: 'chat', ... }]
 * ```
 */
export function createRackEmulator(options: RackEmulatorOptions = {}): RackEmulator {
  let webhooks: WebhooksConfig | (() => WebhooksConfig) = options.webhooks ?? {};
  const log = options.log ?? ((line: string) => console.log(line));
  const headerName = options.headerName ?? DEFAULT_HEADER_NAME;
  const secretEncoding = options.secretEncoding ?? 'utf8';
  const keyChecks = options.keyChecks ?? secretEncoding === 'hex';
  const serialize = options.json === 'plain' ? (event: object) => JSON.stringify(event) : deployedJson;
  const setKeys = (next: string | readonly string[] | undefined): Signing => {
    const result = signingOf(next, keyChecks);
    if (result.disabled !== undefined) log(result.disabled);
    return result;
  };
  let signing = setKeys(options.signingKeys);

  const emulator: RackEmulator = {
    setWebhooks(next) {
      webhooks = next;
    },
    setSigningKeys(next) {
      signing = setKeys(next);
    },
    async dispatch(event, dispatchOptions = {}) {
      const body = typeof event === 'string' || event instanceof Uint8Array ? event : serialize(event);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const { keys, disabled } = signing;
      if (keys.length > 0) {
        headers[headerName] = await sign(body, {
          secrets: keys,
          secretEncoding,
          ...(dispatchOptions.timestamp === undefined ? {} : { timestamp: dispatchOptions.timestamp }),
        });
      }
      const unsigned = disabled === undefined ? {} : { signingDisabled: disabled };
      const config = typeof webhooks === 'function' ? webhooks() : webhooks;
      return Promise.all(
        Object.entries(config).map(async ([name, value]): Promise<DispatchResult> => {
          const entry = parseReceiverEntry(value);
          if ('skipped' in entry) {
            // On the dispatch path a deployed rack logs the line with an empty name (field notes);
            // the result says which entry it was.
            log(`ns=webhook_parse at=skip reason=${entry.skipped} name=`);
            return { name, skipped: entry.skipped, timeoutMs: DEFAULT_DISPATCH_TIMEOUT_MS, durationMs: 0 };
          }
          return { ...(await deliver(name, entry.url, entry.timeoutMs, body, headers, log)), signed: keys.length > 0, ...unsigned };
        }),
      );
    },
    // Replaced below: the API sends through this emulator's dispatch.
    api: undefined as unknown as RackApiEmulator,
  };
  (emulator as { api: RackApiEmulator }).api = new RackApiEmulator((event) => emulator.dispatch(event), options.api);
  return emulator;
}
