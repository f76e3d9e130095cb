/**
 * The records of the rack's read API (rack-api.md section 2), as the client returns them: what a
 * reconciler reads. A release's `env` (the app's full environment, secrets included) is dropped
 * when the answer is parsed and never reaches these types.
 */

/** `GET /apps`, `GET /apps/{name}`. Apps carry no creation time. */
export interface RackApp {
  /** The app's name, unique on the rack: the `app` of its events (`name` for `app:create`). */
  readonly name: string;
  /** The release being rolled out or running; `""` before the first promote. */
  readonly release: string;
  /** `running`, `updating`, `rollback`, `deleting` or `unknown`, as the rack maps its rollout state. */
  readonly status: string;
  /** The rack's `locked` flag, as sent (`false` when absent); the rack's read API does not say more. */
  readonly locked: boolean;
}

/** `GET /apps/{app}/builds`: newest `started` first. */
export interface RackBuild {
  /** `B` and 10 random letters, upper case as the rack returns it; random, so order by `started`. */
  readonly id: string;
  /** The app the build belongs to. */
  readonly app: string;
  /** `created`, `running`, `complete` or `failed`. */
  readonly status: string;
  /** The release this build made; `""` until it succeeds. */
  readonly release: string;
  /** The build process's id; `""` for a build no process ran (an import). */
  readonly process: string;
  /** A failure reason: image imports only. */
  readonly reason: string;
  /** When the build record was created: RFC 3339, UTC. */
  readonly started: string;
  /** `0001-01-01T00:00:00Z` until the build ends. */
  readonly ended: string;
}

/** `GET /apps/{app}/releases`: newest `created` first. No `env`: it is dropped on parse. */
export interface RackRelease {
  /** `R` and 10 random letters, upper case as the rack returns it; random, so order by `created`. */
  readonly id: string;
  /** The app the release belongs to. */
  readonly app: string;
  /** The build it was made from; `""` for an env-only release on an app with no build. */
  readonly build: string;
  /** When the release was created: RFC 3339, UTC. */
  readonly created: string;
}

/** `GET /apps/{app}/budget`: both `null` when the app has no budget. Kebab-case keys, as sent. */
export interface RackBudget {
  /** The budget as set (`monthly-cap-usd`, `at-cap-action`, ...); `null` when the app has no budget. */
  readonly config: Readonly<Record<string, unknown>> | null;
  /** The accumulator's state; `null` when the app has no budget or no tick has written it yet. */
  readonly state: RackBudgetState | null;
}

/** The budget state fields a reconciler reads; the rest as sent. */
export interface RackBudgetState extends Readonly<Record<string, unknown>> {
  /** Start of the budget period: 00:00 UTC on day 1, or the time of a period reset (RFC 3339). */
  readonly 'month-start'?: string;
  /** When this period's threshold alert fired (RFC 3339); `0001-01-01T00:00:00Z` if it has not. */
  readonly 'alert-fired-at-threshold'?: string;
  /** When this period's cap alert fired (RFC 3339); `0001-01-01T00:00:00Z` if it has not. */
  readonly 'alert-fired-at-cap'?: string;
}

/** `GET /apps/{app}/budget/shutdown-state`: `null` when no auto-shutdown lifecycle is stored. CamelCase keys, as sent. */
export interface RackShutdownState extends Readonly<Record<string, unknown>> {
  /** The lifecycle's id, `tick-<time>-<32 hex>`: the `data.tick_id` of its auto-shutdown events. */
  readonly shutdownTickId: string;
  /** When the shutdown was armed (RFC 3339); set in every valid state. */
  readonly armedAt: string | null;
  /** When the shutdown fired (RFC 3339); `null` until it has. */
  readonly shutdownAt: string | null;
  /** When the app was restored (RFC 3339); `null` until it has been. */
  readonly restoredAt: string | null;
  /** When the lifecycle expired (RFC 3339); `null` until it has. */
  readonly expiredAt: string | null;
  /** When the rack stamped its `:armed` send (RFC 3339), written just before it; `null` if not sent. */
  readonly armedNotificationFiredAt: string | null;
  /** When the rack stamped its `:fired` send (RFC 3339), written just before it; `null` if not sent. */
  readonly firedNotificationFiredAt: string | null;
  /** When the rack stamped its tick `:failed` send (RFC 3339), written just before it; `null` if not sent. */
  readonly failedNotificationFiredAt: string | null;
  /** When the rack stamped its `:expired` send (RFC 3339), written just before it; `null` if not sent. */
  readonly expiredNotificationFiredAt: string | null;
  /** When the rack stamped its `:restored` send (RFC 3339), written just before it; `null` if not sent. */
  readonly restoredNotificationFiredAt: string | null;
  /** When the rack stamped its `:cancelled` send (RFC 3339); rarely seen, the state is deleted right after. */
  readonly cancelledNotificationFiredAt: string | null;
  /** When the rack stamped a `:noop` send (RFC 3339); `null` if none. */
  readonly noopNotificationFiredAt: string | null;
  /** When the rack stamped a `:flap-suppressed` send (RFC 3339); `null` if none. */
  readonly flapSuppressedNotificationFiredAt: string | null;
  /** Why the shutdown failed, such as `k8s-api-failure`: the `failure_reason` of `:failed`; absent unless it failed. */
  readonly failureReason?: string;
  /** When the recovery banner was dismissed (RFC 3339): the `dismissed_at` of `:dismissed`; absent if never. */
  readonly recoveryBannerDismissedAt?: string;
}

/** `GET /system`. */
export interface RackSystem {
  /** The rack's configured name (normally equal to the `data.rack` of its events). */
  readonly name: string;
  /** `aws`, `azure`, `do`, `gcp`, `local` or `metal`. */
  readonly provider: string;
  /** The rack's version; `dev` when unset. */
  readonly version: string;
  /** The API host, `api.<domain>` without a scheme: the base URL is `https://` + this. */
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
