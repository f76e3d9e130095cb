/**
 * The records of the rack's read API (rack-api.md section 2), as the client returns them: what a
 * reconciler reads. A release's `env` (the app's full environment, secrets included) is dropped
 * when the answer is parsed and never reaches these types.
 */

/** `GET /apps`, `GET /apps/{name}`. Apps carry no creation time. */
export interface RackApp {
  readonly name: string;
  /** The release being rolled out or running; `""` before the first promote. */
  readonly release: string;
  readonly status: string;
  readonly locked: boolean;
}

/** `GET /apps/{app}/builds`: newest `started` first. */
export interface RackBuild {
  readonly id: string;
  readonly app: string;
  /** `created`, `running`, `complete` or `failed`. */
  readonly status: string;
  /** The release this build made; `""` until it succeeds. */
  readonly release: string;
  /** The build process's id; `""` for a build no process ran (an import). */
  readonly process: string;
  /** A failure reason: image imports only. */
  readonly reason: string;
  readonly started: string;
  /** `0001-01-01T00:00:00Z` until the build ends. */
  readonly ended: string;
}

/** `GET /apps/{app}/releases`: newest `created` first. No `env`: it is dropped on parse. */
export interface RackRelease {
  readonly id: string;
  readonly app: string;
  /** The build it was made from; `""` for an env-only release on an app with no build. */
  readonly build: string;
  readonly created: string;
}

/** `GET /apps/{app}/budget`: both `null` when the app has no budget. Kebab-case keys, as sent. */
export interface RackBudget {
  readonly config: Readonly<Record<string, unknown>> | null;
  readonly state: RackBudgetState | null;
}

/** The budget state fields a reconciler reads; the rest as sent. */
export interface RackBudgetState extends Readonly<Record<string, unknown>> {
  readonly 'month-start'?: string;
  readonly 'alert-fired-at-threshold'?: string;
  readonly 'alert-fired-at-cap'?: string;
}

/** `GET /apps/{app}/budget/shutdown-state`: `null` when no auto-shutdown lifecycle is stored. CamelCase keys, as sent. */
export interface RackShutdownState extends Readonly<Record<string, unknown>> {
  readonly shutdownTickId: string;
  readonly armedAt: string | null;
  readonly shutdownAt: string | null;
  readonly restoredAt: string | null;
  readonly expiredAt: string | null;
  readonly armedNotificationFiredAt: string | null;
  readonly firedNotificationFiredAt: string | null;
  readonly failedNotificationFiredAt: string | null;
  readonly expiredNotificationFiredAt: string | null;
  readonly restoredNotificationFiredAt: string | null;
  readonly cancelledNotificationFiredAt: string | null;
  readonly noopNotificationFiredAt: string | null;
  readonly flapSuppressedNotificationFiredAt: string | null;
  readonly failureReason?: string;
  readonly recoveryBannerDismissedAt?: string;
}

/** `GET /system`. */
export interface RackSystem {
  readonly name: string;
  readonly provider: string;
  readonly version: string;
  readonly 'rack-domain': string;
}

/** What a read token says about itself (its payload, decoded without the rack's key). */
export interface RackTokenClaims {
  /** `system-read`, `system-write` or `system-admin`. */
  readonly user: string;
  /** `r`, `rw` or `rwa`. */
  readonly role: string;
  /** Unix seconds. */
  readonly expiresAt: number;
}

/** The rack's "unset" for a non-nullable time. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';
