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
  /** A network error or a timeout, as text. */
  error?: string;
  /** True when the receiver did not answer within its timeout. */
  timedOut?: boolean;
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
   * `webhook_signing_key`: one key, the rack's comma-separated form, or an array; at most 4
   * (more is a `RangeError`, as the rack rejects them).
   *
   * @defaultValue none: deliveries are sent unsigned, as by a rack without a key
   */
  signingKeys?: string | readonly string[];
  /**
   * Where the rack's log lines go (`ns=webhook_parse at=skip reason=... name=...`).
   *
   * @defaultValue `console.log`
   */
  log?: (line: string) => void;
  /**
   * The signature header's name.
   *
   * @defaultValue `'Service-Signature'`
   */
  headerName?: string;
  /**
   * How the rack turns its key text into HMAC key bytes (see field notes).
   *
   * @defaultValue `'utf8'`
   */
  secretEncoding?: 'utf8' | 'hex';
}

/** The rack's sending side, as {@link createRackEmulator} returns it. */
export interface RackEmulator {
  /** Replaces the `webhooks` map (or the function that returns it). */
  setWebhooks(webhooks: WebhooksConfig | (() => WebhooksConfig)): void;
  /** Throws RangeError for more than 4 keys, as the rack rejects them. `undefined` or `[]`: unsigned. */
  setSigningKeys(keys: string | readonly string[] | undefined): void;
  /**
   * Sends one event (an object, serialised once, or a raw JSON string sent as is) to every
   * configured receiver at once, each with its own timeout; never retries.
   */
  dispatch(event: object | string, options?: { timestamp?: number }): Promise<DispatchResult[]>;
}
