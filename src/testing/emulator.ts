import { DEFAULT_HEADER_NAME } from '../receiver/create-receiver.js';
import { MAX_SIGNING_SECRETS } from '../signature/limits.js';
import { rackKeyProblems } from '../signature/rack-key-checks.js';
import { sign } from '../signature/sign.js';
import { MAX_TIMER_MS } from '../shared/timers.js';
import { deployedJson } from './deployed-json.js';
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

async function deliver(
  name: string,
  url: string,
  timeoutMs: number,
  body: string,
  headers: Record<string, string>,
): Promise<DispatchResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timerMs(timeoutMs)) });
    // The rack only logs the status: the reply body is dropped unread, however long it runs.
    await response.body?.cancel().catch(() => undefined);
    return { name, url, status: response.status, timeoutMs, durationMs: elapsed() };
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

  return {
    setWebhooks(next) {
      webhooks = next;
    },
    setSigningKeys(next) {
      signing = setKeys(next);
    },
    async dispatch(event, dispatchOptions = {}) {
      const body = typeof event === 'string' ? event : serialize(event);
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
            log(`ns=webhook_parse at=skip reason=${entry.skipped} name=${name}`);
            return { name, skipped: entry.skipped, timeoutMs: DEFAULT_DISPATCH_TIMEOUT_MS, durationMs: 0 };
          }
          return { ...(await deliver(name, entry.url, entry.timeoutMs, body, headers)), signed: keys.length > 0, ...unsigned };
        }),
      );
    },
  };
}
