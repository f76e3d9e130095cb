/** The emulated rack's records, shaped as its API returns them (rack-api.md section 2). */

export const ZERO_TIME = '0001-01-01T00:00:00Z';

export interface BuildRecord {
  id: string;
  app: string;
  description: string;
  entrypoint: string;
  'git-sha': string;
  logs: string;
  manifest: string;
  process: string;
  release: string;
  reason: string;
  repository: string;
  status: 'created' | 'running' | 'complete' | 'failed';
  started: string;
  ended: string;
}

export interface ReleaseRecord {
  id: string;
  app: string;
  build: string;
  env: string;
  manifest: string;
  description: string;
  created: string;
}

export interface ShutdownRecord {
  schemaVersion: number;
  shutdownAt: string | null;
  armedAt: string | null;
  restoredAt: string | null;
  expiredAt: string | null;
  recoveryMode: string;
  shutdownOrder: string;
  shutdownTickId: string;
  manifestSha256: string;
  eligibleServiceCount: number;
  services: unknown[];
  flapSuppressedUntil: string | null;
  armedNotificationFiredAt: string | null;
  firedNotificationFiredAt: string | null;
  noopNotificationFiredAt: string | null;
  cancelledNotificationFiredAt: string | null;
  expiredNotificationFiredAt: string | null;
  flapSuppressedNotificationFiredAt: string | null;
  failedNotificationFiredAt: string | null;
  restoredNotificationFiredAt: string | null;
  failureReason?: string;
}

export interface AppRecord {
  name: string;
  release: string;
  status: 'running' | 'updating' | 'rollback' | 'deleting' | 'unknown';
  locked: boolean;
  generation: string;
  router: string;
  parameters: Record<string, string>;
  builds: BuildRecord[];
  releases: ReleaseRecord[];
  budget: { config: Record<string, unknown> | null; state: Record<string, unknown> | null };
  shutdown: ShutdownRecord | null;
  /** The stored shutdown state no longer parses: the route answers 500 (rack-api.md 1.6). */
  shutdownCorrupt: boolean;
}

/** RFC 3339 in UTC, trailing fraction zeros dropped, as the rack writes times. */
export function rackTime(date: Date): string {
  return date
    .toISOString()
    .replace(/\.?0+Z$/, 'Z')
    .replace(/\.Z$/, 'Z');
}

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** `B` or `R` and 10 random capital letters. */
export function recordId(prefix: 'B' | 'R'): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(10));
  return prefix + Array.from(bytes, (byte) => LETTERS[byte % 26]).join('');
}

export function newShutdown(tickId: string, at: string): ShutdownRecord {
  return {
    schemaVersion: 1,
    shutdownAt: null,
    armedAt: at,
    restoredAt: null,
    expiredAt: null,
    recoveryMode: 'auto-on-reset',
    shutdownOrder: 'largest-cost',
    shutdownTickId: tickId,
    manifestSha256: '0'.repeat(64),
    eligibleServiceCount: 1,
    services: [],
    flapSuppressedUntil: null,
    armedNotificationFiredAt: at,
    firedNotificationFiredAt: null,
    noopNotificationFiredAt: null,
    cancelledNotificationFiredAt: null,
    expiredNotificationFiredAt: null,
    flapSuppressedNotificationFiredAt: null,
    failedNotificationFiredAt: null,
    restoredNotificationFiredAt: null,
  };
}
