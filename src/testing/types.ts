import type { RackApiEmulator, RackApiOptions } from './rack-api/api.js';

/** The rack's `webhooks` configuration map: receiver name to value (a plain URL, or JSON `{ url, timeout }`). */
export type WebhooksConfig = Readonly<Record<string, string>>;

/** Why the rack skips a `webhooks` entry, as its log line says (`ns=webhook_parse at=skip reason=…`). */
export type SkipReason = 'empty_value' | 'invalid_json' | 'empty_url_in_json';

/** What happened to one receiver on one dispatch. */
export interface DispatchResult {
  /** The receiver's name in the configuration map. */
  name: string;
  /** The URL dispatched to; absent when the entry was skipped. */
  url?: string;
  /** Set when the entry was skipped, as the rack does, with the reason it logs. */
  skipped?: SkipReason;
  /** The receiver's HTTP status. The rack ignores it (and never retries); it is reported for tests. */
  status?: number;
  /**
   * What the receiver answered, from a JSON reply's first 4 KiB: `status` (`processed`,
   * `accepted`…) or `error` (its code) and `message`. The rack ignores it; it is reported for tests.
   */
  reply?: {
    /** The answer's `status` (`processed`, `accepted`, `duplicate`...). */
    status?: string;
    /** The refusal's `error` code. */
    error?: string;
    /** The refusal's `message`. */
    message?: string;
  };
  /** A network error or a timeout, as text. */
  error?: string;
  /** True when the receiver did not answer within its timeout. */
  timedOut?: boolean;
  /** Whether the delivery carried a signature header; absent when the entry was skipped. */
  signed?: boolean;
  /**
   * Set when keys are configured but the rack turned signing off (more than 4, or with `keyChecks`
   * a key failing a deployed rack's checks): the rack's log line, which the emulator also logs when
   * the keys are set (`ns=k8s at=webhook_signing_key result=invalid reason=too_short key=1 count=1 signing=disabled`).
   */
  signingDisabled?: string;
  /** The timeout this entry was dispatched with, after the 30 s fallback. */
  timeoutMs: number;
  /** Milliseconds from the dispatch to the receiver's answer (or the error). */
  durationMs: number;
}

/** Options of {@link createRackEmulator}. */
export interface RackEmulatorOptions {
  /**
   * The `webhooks` map, or a function returning it: read again on every dispatch, as the rack does.
   *
   * @defaultValue `{}`: no receiver
   */
  webhooks?: WebhooksConfig | (() => WebhooksConfig);
  /**
   * `webhook_signing_key`: one key, the rack's comma-separated form, or an array. With more than 4,
   * or (under `keyChecks`) any key failing a deployed rack's checks, the emulator sends unsigned,
   * as a deployed rack does, logs the rack's `ns=k8s at=webhook_signing_key result=invalid …
   * signing=disabled` line and reports `signingDisabled` in each result.
   *
   * @defaultValue none: deliveries are sent unsigned, as by a rack without a key
   */
  signingKeys?: string | readonly string[];
  /**
   * Check each key as a deployed rack does (no empty entry, at most 4,096 characters, even length,
   * at least 64 characters, lowercase hex, not a placeholder, enough entropy) and send unsigned when
   * one fails.
   *
   * @defaultValue `true` with `secretEncoding: 'hex'` (a deployed rack), `false` otherwise (the spec takes any key)
   */
  keyChecks?: boolean;
  /**
   * How an event object is serialised. `'deployed'`: as a deployed rack's sender writes it, compact,
   * `data` keys sorted, `<`, `>`, `&` escaped as `\u003c`, `\u003e`, `\u0026`. `'plain'`:
   * `JSON.stringify`. A string event is always sent as is.
   *
   * @defaultValue `'deployed'`
   */
  json?: 'deployed' | 'plain';
  /**
   * Where the rack's log lines go: `ns=webhook_parse at=skip reason=... name=` for a skipped entry
   * (the name is empty on the dispatch path, as a deployed rack logs it; the result names the
   * entry), `ns=event_dispatch at=non2xx url_host=... status=N` for an answer of 400 or more, and
   * `ns=k8s at=webhook_signing_key result=invalid ... signing=disabled` when signing is turned off.
   *
   * @defaultValue `console.log`
   */
  log?: (line: string) => void;
  /**
   * The signature header's name. A deployed rack uses `<Vendor>-Signature` (`'Acme-Signature'`).
   *
   * @defaultValue `'Service-Signature'` (the spec's)
   */
  headerName?: string;
  /**
   * How the rack turns its key text into HMAC key bytes: `'utf8'` as the spec says, `'hex'` as a
   * deployed rack does (which also turns `keyChecks` on).
   *
   * @defaultValue `'utf8'`
   */
  secretEncoding?: 'utf8' | 'hex';
  /**
   * The rack's read API (`emulator.api`): its password and clock.
   *
   * @defaultValue `{}`: no password (only minted tokens), the system clock
   */
  api?: RackApiOptions;
}

/** The rack's sending side, as {@link createRackEmulator} returns it. */
export interface RackEmulator {
  /** Replaces the `webhooks` map (or the function that returns it). */
  setWebhooks(webhooks: WebhooksConfig | (() => WebhooksConfig)): void;
  /** Replaces the keys. More than 4, or a key failing `keyChecks`: unsigned, as a deployed rack does. `undefined` or `[]`: unsigned. */
  setSigningKeys(keys: string | readonly string[] | undefined): void;
  /**
   * Sends one event (an object, serialised once, or a raw body, a string or bytes, sent as is) to
   * every configured receiver at once, each with its own timeout; never retries. `user:pass@` in a
   * receiver's URL is sent as basic auth, as the rack's HTTP client does.
   */
  dispatch(event: object | string | Uint8Array, options?: { timestamp?: number }): Promise<DispatchResult[]>;
  /**
   * The rack's state and read API (rack-api.md): changes that send their webhooks through
   * `dispatch` (or drop chosen ones), and `handle(request)` answering the API's routes from that state.
   */
  readonly api: RackApiEmulator;
}
