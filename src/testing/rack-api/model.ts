/**
 * The emulated rack's state, changed as the rack changes it, each change sending the webhooks the
 * rack sends for it (rack-api.md 3.3), in the rack's order, after writing what the API shows. A
 * test can drop chosen deliveries (`drop`): they are recorded as sent by the rack and lost on the
 * way, which is what a reconciler must then find.
 */
import type { WebhookAction } from '../../events/types.js';
import { createTestEvent, rackTickId } from '../test-event.js';
import { newShutdown, rackTime, recordId, ZERO_TIME, type AppRecord, type BuildRecord, type ReleaseRecord } from './records.js';

/** Which of an operation's events never reach the receivers: all of them, or these actions. */
export type DropChoice = boolean | readonly string[];

/** What every operation takes: when it happened (default: the emulator's clock) and what to drop. */
export interface RackChangeOptions {
  /**
   * When the change happens: its records' times, and the `timestamp` of the events it sends.
   *
   * @defaultValue the emulator's clock (`RackApiOptions.now`)
   */
  at?: Date;
  /**
   * The events to lose on the way: `true` for all the change sends, or a list of actions. They are
   * still recorded in `sent`, with `dropped: true`.
   *
   * @defaultValue `false`: every event is delivered
   */
  drop?: DropChoice;
}

/** One event the emulated rack sent, whether it reached the receivers or was dropped. */
export interface SentEvent {
  /** The event's `action`, such as `build:create`. */
  readonly action: string;
  /** The app the change was made on. */
  readonly app: string;
  /** The event's `data`, as sent (all values strings). */
  readonly data: Readonly<Record<string, string>>;
  /** `true` when the event was dropped (`drop`) and never reached a receiver. */
  readonly dropped: boolean;
}

/** A step of an auto-shutdown lifecycle, as `autoShutdown` takes it: the suffix of `app:budget:auto-shutdown:<step>`. */
export type ShutdownStep = 'armed' | 'fired' | 'failed' | 'expired' | 'restored' | 'cancelled';

type Send = (event: object) => Promise<unknown>;

/** Per step: the state's time, its notification stamp, and the event's field that carries the same time. */
const STEP_FIELDS = {
  fired: { time: 'shutdownAt', stamp: 'firedNotificationFiredAt', field: 'shutdown_at' },
  expired: { time: 'expiredAt', stamp: 'expiredNotificationFiredAt', field: 'expired_at' },
  restored: { time: 'restoredAt', stamp: 'restoredNotificationFiredAt', field: 'recovery_at' },
  cancelled: { time: undefined, stamp: 'cancelledNotificationFiredAt', field: 'cancelled_at' },
} as const;

export class RackModel {
  /** Every app of the emulated rack by name, as stored: the API's routes answer from these records. */
  readonly apps = new Map<string, AppRecord>();
  /** Every event in the order sent; `dropped` ones never reached a receiver. */
  readonly sent: SentEvent[] = [];
  readonly #send: Send;
  readonly #now: () => Date;

  constructor(send: Send, now: () => Date) {
    this.#send = send;
    this.#now = now;
  }

  /** The app's stored record; throws an `Error` when no app has that name (call `createApp` first). */
  app(name: string): AppRecord {
    const app = this.apps.get(name);
    if (app === undefined) throw new Error(`rack emulator: no app ${JSON.stringify(name)} (createApp first)`);
    return app;
  }

  async #emit(
    action: string,
    app: string,
    data: Record<string, string>,
    at: Date,
    options: RackChangeOptions,
    status?: string,
  ): Promise<void> {
    const drop = options.drop === true || (Array.isArray(options.drop) && options.drop.includes(action));
    const event = createTestEvent(action as WebhookAction, {
      timestamp: rackTime(at),
      data: data as never,
      ...(status === undefined ? {} : { status: status as never }),
    });
    this.sent.push({ action, app, data: event.data as Record<string, string>, dropped: drop });
    if (!drop) await this.#send(event);
  }

  /**
   * A new app, `running` with no release: sends `release:promote` (status `start`, `id` `""`), then
   * `app:create` with `data.name`, as the rack does. Returns its stored record.
   */
  async createApp(name: string, options: RackChangeOptions = {}): Promise<AppRecord> {
    const at = options.at ?? this.#now();
    const app: AppRecord = {
      name,
      release: '',
      status: 'running',
      locked: false,
      generation: '3',
      router: `router.${name}.example`,
      parameters: {},
      builds: [],
      releases: [],
      budget: { config: null, state: null },
      shutdown: null,
      shutdownCorrupt: false,
    };
    this.apps.set(name, app);
    await this.#emit('release:promote', name, { app: name, id: '' }, at, options, 'start');
    await this.#emit('app:create', name, { name }, at, options);
    return app;
  }

  #newRelease(app: AppRecord, build: string, at: Date): ReleaseRecord {
    const release: ReleaseRecord = {
      id: recordId('R'),
      app: app.name,
      build,
      env: 'SECRET_TOKEN=do-not-store\n',
      manifest: '',
      description: '',
      created: rackTime(at),
    };
    app.releases.push(release);
    return release;
  }

  #newBuild(app: AppRecord, started: Date, process: string): BuildRecord {
    const build: BuildRecord = {
      id: recordId('B'),
      app: app.name,
      description: '',
      entrypoint: '',
      'git-sha': '',
      logs: '',
      manifest: 'services: {}',
      process,
      release: '',
      reason: '',
      repository: '',
      status: 'running',
      started: rackTime(started),
      ended: ZERO_TIME,
    };
    app.builds.push(build);
    return build;
  }

  /** A source build still running (owes no event). */
  startBuild(appName: string, options: { started?: Date } = {}): BuildRecord {
    return this.#newBuild(this.app(appName), options.started ?? this.#now(), `build-${recordId('B').toLowerCase()}`);
  }

  /**
   * A source build that ends at `at`: `complete` (a release, `release:create`, then `build:create`
   * with `release_id`) or `failed` (`build:create` with status `error`, then the failed record).
   */
  async build(
    appName: string,
    options: RackChangeOptions & { started?: Date; outcome?: 'complete' | 'failed' } = {},
  ): Promise<{
    /** The ended build's stored record. */
    build: BuildRecord;
    /** The release it made; `undefined` for a `failed` build. */
    release: ReleaseRecord | undefined;
  }> {
    const app = this.app(appName);
    const at = options.at ?? this.#now();
    const build = this.#newBuild(app, options.started ?? new Date(at.getTime() - 60_000), `build-${recordId('B').toLowerCase()}`);
    build.ended = rackTime(at);
    build.logs = `object:///${app.name}/build/${build.id}/logs`;
    if (options.outcome === 'failed') {
      await this.#emit('build:create', app.name, { app: app.name, id: build.id, message: 'build failed' }, at, options, 'error');
      build.status = 'failed';
      return { build, release: undefined };
    }
    const release = this.#newRelease(app, build.id, at);
    await this.#emit('release:create', app.name, { app: app.name, id: release.id }, at, options);
    build.release = release.id;
    build.status = 'complete';
    await this.#emit('build:create', app.name, { app: app.name, id: build.id, release_id: release.id }, at, options);
    return { build, release };
  }

  /** An archive import: a `complete` build no process ran, a release, and only `release:create`. */
  async importArchive(
    appName: string,
    options: RackChangeOptions = {},
  ): Promise<{
    /** The imported build's stored record: `complete`, with `process` `""`. */
    build: BuildRecord;
    /** The release made from it. */
    release: ReleaseRecord;
  }> {
    const app = this.app(appName);
    const at = options.at ?? this.#now();
    const build = this.#newBuild(app, at, '');
    const release = this.#newRelease(app, build.id, at);
    Object.assign(build, { status: 'complete', release: release.id, ended: rackTime(at) });
    await this.#emit('release:create', app.name, { app: app.name, id: release.id }, at, options);
    return { build, release };
  }

  /** An env change: a release without a build of its own, and `release:create`. */
  async changeEnv(appName: string, options: RackChangeOptions = {}): Promise<ReleaseRecord> {
    const app = this.app(appName);
    const at = options.at ?? this.#now();
    const release = this.#newRelease(app, app.releases.at(-1)?.build ?? '', at);
    await this.#emit('release:create', app.name, { app: app.name, id: release.id }, at, options);
    return release;
  }

  /** A promote that completes: `App.release` moves, `release:promote` then `app:promote:completed`. */
  async promote(appName: string, releaseId: string, options: RackChangeOptions = {}): Promise<void> {
    const app = this.app(appName);
    const at = options.at ?? this.#now();
    app.release = releaseId;
    await this.#emit('release:promote', app.name, { app: app.name, id: releaseId }, at, options, 'start');
    await this.#emit('app:promote:completed', app.name, { app: app.name, id: releaseId }, at, options);
  }

  /** The accumulator tick firing an alert: the stamp is written, then the event sent. */
  async budgetAlert(appName: string, kind: 'threshold' | 'cap', options: RackChangeOptions = {}): Promise<string> {
    const app = this.app(appName);
    const at = rackTime(options.at ?? this.#now());
    app.budget.config ??= { 'monthly-cap-usd': 100, 'alert-threshold-percent': 80, 'at-cap-action': 'auto-shutdown' };
    const monthStart = `${at.slice(0, 8)}01T00:00:00Z`;
    app.budget.state ??= {
      'month-start': monthStart,
      'current-month-spend-usd': 0,
      'current-month-spend-as-of': at,
      'alert-fired-at-threshold': ZERO_TIME,
      'alert-fired-at-cap': ZERO_TIME,
      'circuit-breaker-ack-at': ZERO_TIME,
    };
    app.budget.state[`alert-fired-at-${kind}`] = at;
    app.budget.state['current-month-spend-as-of'] = at;
    await this.#emit(`app:budget:${kind}`, app.name, { app: app.name }, new Date(Date.parse(at)), options);
    return at;
  }

  /**
   * One step of an auto-shutdown lifecycle: `armed` starts one (a new `tick_id`); the others reuse
   * its `tick_id`, stamp their `…NotificationFiredAt` and send; `cancelled` sends and then deletes
   * the state (the route answers `null`), as the rack does.
   */
  async autoShutdown(appName: string, step: ShutdownStep, options: RackChangeOptions & { failureReason?: string } = {}): Promise<string> {
    const app = this.app(appName);
    const date = options.at ?? this.#now();
    const at = rackTime(date);
    const prefix = 'app:budget:auto-shutdown:';
    if (step === 'armed') {
      app.shutdown = newShutdown(rackTickId(date), at);
      await this.#emit(
        `${prefix}armed`,
        app.name,
        { app: app.name, tick_id: app.shutdown.shutdownTickId, scheduled_at: at },
        date,
        options,
      );
      return app.shutdown.shutdownTickId;
    }
    const state = app.shutdown;
    if (state === null) throw new Error(`rack emulator: ${step} needs an armed auto-shutdown on ${app.name}`);
    const tick = state.shutdownTickId;
    const data: Record<string, string> = { app: app.name, tick_id: tick };
    if (step === 'failed') {
      const reason = options.failureReason ?? 'k8s-api-failure';
      Object.assign(state, { failedNotificationFiredAt: at, failureReason: reason });
      Object.assign(data, { failed_at: at, failure_reason: reason });
    } else {
      const { time, stamp, field } = STEP_FIELDS[step];
      Object.assign(state, { [stamp]: at, ...(time === undefined ? {} : { [time]: at }) });
      data[field] = at;
    }
    await this.#emit(`${prefix}${step}`, app.name, data, date, options);
    if (step === 'cancelled') app.shutdown = null;
    return tick;
  }
}
