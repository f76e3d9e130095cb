import type { HealthCheckState } from './checks.js';

/** One record of {@link healthHandler}'s log: a probe's verdict changed. */
export interface HealthLogRecord {
  /** `'warn'` when the probe now answers with something to look at (503, or a warning), `'info'` when it is all ok again. */
  readonly level: 'info' | 'warn';
  /** `probe_changed`: the probe's status or one of its checks changed since the last record. */
  readonly event: 'probe_changed';
  /** Which probe: `ready` or `health`. */
  readonly probe: 'ready' | 'health';
  /** What the probe answers now: `ready`/`not_ready`, or `ok`/`warning`/`unhealthy`/`unreachable`. */
  readonly status: string;
  /** Each check's state, as the probe shows it to anyone. */
  readonly checks: Readonly<Record<string, HealthCheckState>>;
  /** The detail the probe does not show to anyone: one sentence per finding, passwords in URLs masked. */
  readonly reasons: readonly string[];
  /** One line for people. */
  readonly message: string;
}

/** Where {@link HealthLogRecord}s go: a function, or `false` for nowhere. */
export type HealthLogger = ((record: HealthLogRecord) => void) | false;

/** The password of a `scheme://user:password@host` URL and of a `password=...` setting, as `***`. */
export function maskPasswords(text: string): string {
  return text
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*:)[^@\s]*@/gi, '$1***@')
    .replace(/(\bpassword\s*=\s*)('[^']*'|"[^"]*"|[^\s&;,)]+)/gi, '$1***');
}

/** The default: one line on stderr (container logs), written only when a verdict changes. */
const consoleLogger = (record: HealthLogRecord) =>
  (record.level === 'warn' ? console.warn : console.info)(`[rack-webhooks] ${record.message}`);

/**
 * Logs a probe's verdict when it changes (status or a check's state), not on every probe: a probe
 * every few seconds during an outage makes one record, and one more when it ends. The first
 * verdict is logged only when it is not all ok.
 */
export function verdictLog(probe: 'ready' | 'health', logger: HealthLogger | undefined) {
  const write = logger === false ? undefined : (logger ?? consoleLogger);
  let last: string | undefined;
  return (status: string, allOk: boolean, checks: Readonly<Record<string, HealthCheckState>>, reasons: readonly string[]): void => {
    const signature = `${status} ${JSON.stringify(checks)}`;
    const unchanged = signature === last || (last === undefined && allOk);
    last = signature;
    if (write === undefined || unchanged) return;
    const masked = reasons.map(maskPasswords);
    const failing = Object.entries(checks)
      .filter(([, state]) => state !== 'ok')
      .map(([name, state]) => `${name} ${state}`);
    const message =
      `${probe} probe: ${status}` +
      (failing.length > 0 ? ` (${failing.join(', ')})` : '') +
      (masked.length > 0 ? `: ${masked.join('; ')}` : '');
    try {
      write({ level: allOk ? 'info' : 'warn', event: 'probe_changed', probe, status, checks, reasons: masked, message });
    } catch {
      // A broken logger must not turn a probe into a failure.
    }
  };
}
