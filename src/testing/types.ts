/** The rack's `webhooks` configuration map: receiver name to value (a plain URL, or JSON `{ url, timeout }`). */
export type WebhooksConfig = Readonly<Record<string, string>>;

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
  timedOut?: boolean;
  /** The timeout this entry was dispatched with, after the 30 s fallback. */
  timeoutMs: number;
  durationMs: number;
}

export interface RackEmulatorOptions {
  /** The `webhooks` map, or a function returning it: read again on every dispatch, as the rack does. */
  webhooks?: WebhooksConfig | (() => WebhooksConfig);
  /** `webhook_signing_key`: one key, the rack's comma-separated form, or an array; at most 4. None: unsigned. */
  signingKeys?: string | readonly string[];
  /** Where the rack's log lines go (`ns=webhook_parse at=skip reason=... name=...`); default stdout. */
  log?: (line: string) => void;
  /** The signature header's name; default `Service-Signature`. */
  headerName?: string;
  /** How the rack turns its key text into HMAC key bytes; default `'utf8'` (see field notes). */
  secretEncoding?: 'utf8' | 'hex';
}

export interface RackEmulator {
  setWebhooks(webhooks: WebhooksConfig | (() => WebhooksConfig)): void;
  /** Throws RangeError for more than 4 keys, as the rack rejects them. `undefined` or `[]`: unsigned. */
  setSigningKeys(keys: string | readonly string[] | undefined): void;
  /**
   * Sends one event (an object, serialised once, or a raw JSON string sent as is) to every
   * configured receiver at once, each with its own timeout; never retries.
   */
  dispatch(event: object | string, options?: { timestamp?: number }): Promise<DispatchResult[]>;
}
