/** The emulated rack's records, shaped as its API returns them (rack-api.md section 2). */

export const ZERO_TIME = '0001-01-01T00:00:00Z';

/**
 * A build as the emulated rack stores it and `GET /apps/{app}/builds` returns it. Times are RFC 3339
 * in UTC. The emulator's own object: a test may change it, and the API answers what it holds.
 */
export interface BuildRecord {
  /** `B` and 10 random capital letters. */
  id: string;
  /** The app's name. */
  app: string;
  /** Always `""` in the emulator. */
  description: string;
  /** Always `""` in the emulator. */
  entrypoint: string;
  /** Always `""` in the emulator. */
  'git-sha': string;
  /** The build log's rack-internal URL; `""` until the build ends. */
  logs: string;
  /** The manifest text. */
  manifest: string;
  /** The build process's id; `""` for an archive import (no process ran). */
  process: string;
  /** The release the build made; `""` until it completes. */
  release: string;
  /** A failure reason, as image imports record it; `""` otherwise. */
  reason: string;
  /** Always `""`, as the rack reads it back. */
  repository: string;
  /** `running` while it runs, then `complete` or `failed`. */
  status: 'created' | 'running' | 'complete' | 'failed';
  /** When the build started. */
  started: string;
  /** When it ended; `0001-01-01T00:00:00Z` while it runs. */
  ended: string;
}

/** A release as the emulated rack stores it and `GET /apps/{app}/releases` returns it, `env` included. */
export interface ReleaseRecord {
  /** `R` and 10 random capital letters. */
  id: string;
  /** The app's name. */
  app: string;
  /** The build it was made from; `""` for an env change on an app with no build. */
  build: string;
  /** The app's environment as `KEY=value` lines: a fake secret, so a test can check it is never stored. */
  env: string;
  /** Copied from the build; `""` in the emulator. */
  manifest: string;
  /** Always `""` in the emulator. */
  description: string;
  /** When the release was created (RFC 3339, UTC). */
  created: string;
}

/**
 * An auto-shutdown lifecycle as the emulated rack stores it and `GET /apps/{app}/budget/shutdown-state`
 * returns it (camelCase keys). Times are RFC 3339 in UTC, `null` until set.
 */
export interface ShutdownRecord {
  /** Always `1`. */
  schemaVersion: number;
  /** When the shutdown fired. */
  shutdownAt: string | null;
  /** When it was armed: set from the start. */
  armedAt: string | null;
  /** When the app was restored. */
  restoredAt: string | null;
  /** When the lifecycle expired. */
  expiredAt: string | null;
  /** Always `auto-on-reset` in the emulator. */
  recoveryMode: string;
  /** Always `largest-cost` in the emulator. */
  shutdownOrder: string;
  /** The lifecycle's `tick_id`, shared by all its events but the new-id ones. */
  shutdownTickId: string;
  /** 64 zeros in the emulator. */
  manifestSha256: string;
  /** Always `1` in the emulator. */
  eligibleServiceCount: number;
  /** Always empty in the emulator. */
  services: unknown[];
  /** Always `null` in the emulator. */
  flapSuppressedUntil: string | null;
  /** Stamped with `armedAt` when armed, before `:armed` is sent. */
  armedNotificationFiredAt: string | null;
  /** Stamped before `:fired` is sent. */
  firedNotificationFiredAt: string | null;
  /** Never set by the emulator. */
  noopNotificationFiredAt: string | null;
  /** Stamped before `:cancelled` is sent; the state is deleted right after. */
  cancelledNotificationFiredAt: string | null;
  /** Stamped before `:expired` is sent. */
  expiredNotificationFiredAt: string | null;
  /** Never set by the emulator. */
  flapSuppressedNotificationFiredAt: string | null;
  /** Stamped before `:failed` is sent. */
  failedNotificationFiredAt: string | null;
  /** Stamped before `:restored` is sent. */
  restoredNotificationFiredAt: string | null;
  /** The `failure_reason` of the last `:failed` (`k8s-api-failure` unless the test chose one). */
  failureReason?: string;
}

/**
 * An app of the emulated rack and everything stored for it: what its API routes answer from. The
 * emulator's own object: a test may change it (say, `status`), and the routes answer what it holds.
 */
export interface AppRecord {
  /** The app's name. */
  name: string;
  /** The current release's id; `""` until the first promote. */
  release: string;
  /** `running` unless a test sets another. */
  status: 'running' | 'updating' | 'rollback' | 'deleting' | 'unknown';
  /** `false` unless a test sets it. */
  locked: boolean;
  /** Always `"3"`, as the rack sends it. */
  generation: string;
  /** The router host, `router.<name>.example`. */
  router: string;
  /** The app's parameters; `{}` in the emulator. */
  parameters: Record<string, string>;
  /** Its builds, in the order they were made (the routes answer newest `started` first). */
  builds: BuildRecord[];
  /** Its releases, in the order they were made (the routes answer newest `created` first). */
  releases: ReleaseRecord[];
  /** `GET /apps/{app}/budget`'s answer, kebab-case keys; both `null` until the first `budgetAlert`. */
  budget: {
    /** The budget as set; `budgetAlert` sets a $100 cap with `auto-shutdown` when there is none. */
    config: Record<string, unknown> | null;
    /** The accumulator's state, with the `alert-fired-at-*` stamps. */
    state: Record<string, unknown> | null;
  };
  /** The auto-shutdown lifecycle stored; `null` before `armed` and after `cancelled`. */
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
