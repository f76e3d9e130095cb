import { DEFAULT_HEADER_NAME } from '../receiver/create-receiver.js';
import { MAX_SIGNING_SECRETS } from '../signature/limits.js';
import { sign } from '../signature/sign.js';
import { MAX_TIMER_MS } from '../shared/timers.js';
import { parseDuration } from './duration.js';
import type { DispatchResult, RackEmulator, RackEmulatorOptions, SkipReason, WebhooksConfig } from './types.js';

/** The rack's default and fallback dispatch timeout. */
export const DEFAULT_DISPATCH_TIMEOUT_MS = 30_000;

/**
 * One `webhooks` entry as the rack parses it.
 *
 * @inline
 */
type ParsedEntry =
  | {
      /** The URL to POST to. */
      url: string;
      /** Its timeout, after the 30 s fallback. */
      timeoutMs: number;
    }
  | {
      /** Why the rack skips it. */
      skipped: SkipReason;
    };

/**
 * One value of the `webhooks` map, parsed the way the rack parses it at dispatch time. A value
 * starting with `{` is JSON and never a URL, even without a `url`.
 */
export function parseReceiverEntry(value: string): ParsedEntry {
  const trimmed = value.trim();
  if (trimmed === '') return { skipped: 'empty_value' };
  if (!trimmed.startsWith('{')) return { url: trimmed, timeoutMs: DEFAULT_DISPATCH_TIMEOUT_MS };
  let parsed: { url?: unknown; timeout?: unknown };
  try {
    parsed = JSON.parse(trimmed) as { url?: unknown; timeout?: unknown };
  } catch {
    return { skipped: 'invalid_json' };
  }
  const url = typeof parsed.url === 'string' ? parsed.url.trim() : '';
  if (url === '') return { skipped: 'empty_url_in_json' };
  // An invalid, missing, zero or negative timeout falls back to 30 s, silently (field notes).
  const timeout = typeof parsed.timeout === 'string' ? parseDuration(parsed.timeout) : undefined;
  return { url, timeoutMs: timeout !== undefined && timeout > 0 ? timeout : DEFAULT_DISPATCH_TIMEOUT_MS };
}

function splitKeys(keys: string | readonly string[] | undefined): string[] {
  if (keys === undefined) return [];
  const list = typeof keys === 'string' ? keys.split(',') : [...keys];
  const trimmed = list.map((key) => key.trim()).filter((key) => key !== '');
  if (trimmed.length > MAX_SIGNING_SECRETS) {
    throw new RangeError(`The rack accepts at most ${MAX_SIGNING_SECRETS} webhook signing keys; got ${trimmed.length}.`);
  }
  return trimmed;
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
 * A rack's sending side, as the spec describes it: reads the `webhooks` map at every dispatch,
 * skips bad entries with the rack's log line, signs with up to 4 keys (or sends unsigned with
 * none), POSTs JSON to every receiver at once with its own timeout, never retries, and reports each
 * receiver's status (which the rack itself ignores).
 *
 * @param options - The `webhooks` map, the signing keys, where log lines go.
 * @returns The emulator: `dispatch(event)` sends to every configured receiver.
 * @throws `RangeError` for more than 4 signing keys.
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
  let keys = splitKeys(options.signingKeys);
  const log = options.log ?? ((line: string) => console.log(line));
  const headerName = options.headerName ?? DEFAULT_HEADER_NAME;
  const secretEncoding = options.secretEncoding ?? 'utf8';

  return {
    setWebhooks(next) {
      webhooks = next;
    },
    setSigningKeys(next) {
      keys = splitKeys(next);
    },
    async dispatch(event, dispatchOptions = {}) {
      const body = typeof event === 'string' ? event : JSON.stringify(event);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (keys.length > 0) {
        headers[headerName] = await sign(body, {
          secrets: keys,
          secretEncoding,
          ...(dispatchOptions.timestamp === undefined ? {} : { timestamp: dispatchOptions.timestamp }),
        });
      }
      const config = typeof webhooks === 'function' ? webhooks() : webhooks;
      return Promise.all(
        Object.entries(config).map(([name, value]) => {
          const entry = parseReceiverEntry(value);
          if ('skipped' in entry) {
            log(`ns=webhook_parse at=skip reason=${entry.skipped} name=${name}`);
            return { name, skipped: entry.skipped, timeoutMs: DEFAULT_DISPATCH_TIMEOUT_MS, durationMs: 0 };
          }
          return deliver(name, entry.url, entry.timeoutMs, body, headers);
        }),
      );
    },
  };
}
