import { describeThrown } from '../../shared/thrown.js';
import type { Alert } from './types.js';

/** Options of {@link httpAlertSink}. */
export interface HttpAlertSinkOptions {
  /**
   * Headers sent with each POST (an `authorization` token, a routing key). Never logged.
   *
   * @defaultValue none beyond `content-type: application/json`
   */
  headers?: Readonly<Record<string, string>>;
  /**
   * Per attempt, in ms.
   *
   * @defaultValue `5000`
   */
  timeoutMs?: number;
  /**
   * Attempts after the first, on a network error, a timeout, 408, 429 or 5xx, `retryDelayMs` apart.
   *
   * @defaultValue `1`
   */
  retries?: number;
  /** @defaultValue `1000` */
  retryDelayMs?: number;
  /**
   * Turns an alert into the JSON body sent, e.g. `(alert) => ({ text: alert.summary })` for a chat
   * incoming webhook.
   *
   * @defaultValue the alert itself (dates as ISO strings)
   */
  body?: (alert: Alert) => unknown;
  /** Told when the endpoint did not accept an alert after every attempt. @defaultValue one line on stderr (the URL's origin only) */
  onError?: (error: Error, alert: Alert) => void;
  /** The fetch to use. @defaultValue `globalThis.fetch` */
  fetch?: typeof fetch;
}

const retryable = (status: number) => status === 408 || status === 429 || status >= 500;

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!Number.isFinite(resolved) || resolved < 0) throw new RangeError(`${name} must be a finite number >= 0, got ${String(value)}`);
  return resolved;
}

/**
 * An `onAlert` that POSTs each alert as JSON to `url`, with a timeout and a retry. It never
 * throws: an alert the endpoint did not take is reported to `onError`, and the watcher's loop goes
 * on. Error messages name the URL's origin only (a chat webhook's path is its secret).
 *
 * @example
 * ```ts
 * import { httpAlertSink } from 'rack-webhooks/inbox';
 *
 * const token = process.env.PAGER_TOKEN!;
 * inbox.watch({ onAlert: httpAlertSink(process.env.PAGER_URL!, { headers: { authorization: `Token ${token}` } }) });
 * ```
 */
export function httpAlertSink(url: string | URL, options: HttpAlertSinkOptions = {}): (alert: Alert) => Promise<void> {
  if (!URL.canParse(url)) throw new TypeError('httpAlertSink expects an http(s) URL');
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new TypeError(`httpAlertSink expects an http(s) URL, got ${target.protocol}`);
  const timeoutMs = nonNegative('timeoutMs', options.timeoutMs, 5000);
  const retries = Math.floor(nonNegative('retries', options.retries, 1));
  const retryDelayMs = nonNegative('retryDelayMs', options.retryDelayMs, 1000);
  const send = options.fetch ?? globalThis.fetch;
  const toBody = options.body ?? ((alert: Alert) => alert);
  const onError = options.onError ?? ((error: Error) => console.error(`[rack-webhooks] alert sink ${target.origin}: ${error.message}`));
  const headers = { 'content-type': 'application/json', ...options.headers };

  return async (alert) => {
    let failure = 'no attempt made';
    try {
      const body = JSON.stringify(toBody(alert));
      for (let attempt = 0; attempt <= retries; attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, retryDelayMs));
        try {
          const response = await send(target, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
          await response.body?.cancel().catch(() => {});
          if (response.ok) return;
          failure = `answered HTTP ${response.status}`;
          if (!retryable(response.status)) break;
        } catch (error) {
          failure =
            error instanceof Error && error.name === 'TimeoutError'
              ? `no answer within ${timeoutMs} ms`
              : `request failed (${describeThrown(error)})`;
        }
      }
    } catch (error) {
      failure = `could not build the body (${describeThrown(error)})`;
    }
    try {
      onError(new Error(`alert ${alert.key} (${alert.status}) not delivered: ${failure}`), alert);
    } catch {
      // onError must not throw into the loop either.
    }
  };
}
