/**
 * `inbox forward`'s sending side: each delivery's exact body, signed again with the local key and
 * posted through the rack emulator (as `send` posts), one line per answer. A local receiver that
 * is down or failing (a refused connection, a timeout, a 5xx) is retried with backoff a few times;
 * any other answer is final.
 */
import type { FollowedDelivery, ForwardVerdict } from '../../../inbox/facade/index.js';
import { createRackEmulator } from '../../../testing/emulator.js';
import type { DispatchResult } from '../../../testing/types.js';
import { answerText, clock, oneLine, paint } from '../../format.js';

/** The waits before each retry: four retries, 7.5 s in all, then the delivery is given up. */
export const RETRY_DELAYS_MS: readonly number[] = [500, 1000, 2000, 4000];

export interface ForwarderOptions {
  readonly to: string;
  readonly keys: readonly string[];
  readonly secretEncoding: 'utf8' | 'hex';
  readonly headerName: string | undefined;
  readonly stopOnError: boolean;
  readonly colour: boolean;
  readonly print: (line: string) => void;
  /** Cuts a wait between retries short (the delivery then counts as not answered). */
  readonly signal: AbortSignal;
  readonly retryDelaysMs?: readonly number[];
}

export interface Forwarder {
  forward(delivery: FollowedDelivery): Promise<ForwardVerdict>;
  /** How many deliveries got no 2xx answer in the end. */
  readonly failures: number;
}

function answered(result: DispatchResult): boolean {
  return result.status !== undefined && result.status >= 200 && result.status < 300;
}

/** Local trouble that may pass: nothing listening yet, too slow, or a 5xx. */
function worthRetrying(result: DispatchResult): boolean {
  return result.status === undefined || result.status >= 500;
}

function waitMs(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${ms / 1000} s`;
}

export function createForwarder(options: ForwarderOptions): Forwarder {
  const delays = options.retryDelaysMs ?? RETRY_DELAYS_MS;
  const emulator = createRackEmulator({
    webhooks: { local: options.to },
    signingKeys: options.keys,
    // The keys are the user's own, for their own receiver: signed with exactly these, never switched off.
    keyChecks: false,
    secretEncoding: options.secretEncoding,
    ...(options.headerName === undefined ? {} : { headerName: options.headerName }),
    log: () => {},
  });
  const { colour, print } = options;
  let failures = 0;

  const line = (delivery: FollowedDelivery, result: DispatchResult, note?: string): string =>
    [
      paint(colour, 'dim', clock()),
      `id=${delivery.id}`,
      oneLine(delivery.action),
      `app=${delivery.app === null ? '-' : oneLine(delivery.app)}`,
      answerText(result, colour),
      `${Math.round(result.durationMs)} ms`,
      ...(note === undefined ? [] : [paint(colour, 'yellow', note)]),
    ].join('  ');

  return {
    get failures() {
      return failures;
    },
    async forward(delivery) {
      for (let attempt = 0; ; attempt++) {
        const [result] = await emulator.dispatch(delivery.body);
        if (answered(result!)) {
          print(line(delivery, result!));
          return 'next';
        }
        const delay = delays[attempt];
        if (worthRetrying(result!) && delay !== undefined && !options.signal.aborted) {
          print(line(delivery, result!, `(retry ${attempt + 1} of ${delays.length} in ${seconds(delay)})`));
          await waitMs(delay, options.signal);
          if (!options.signal.aborted) continue;
        }
        failures++;
        const last = worthRetrying(result!) && attempt > 0 ? `(gave up after ${attempt + 1} attempts)` : undefined;
        print(line(delivery, result!, options.stopOnError ? `${last === undefined ? '' : `${last} `}(stopping: --stop-on-error)` : last));
        return options.stopOnError || options.signal.aborted ? 'stop' : 'failed';
      }
    },
  };
}
