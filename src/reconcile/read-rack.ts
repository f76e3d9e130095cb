/**
 * Reading the rack for a reconcile: the apps, then per app its builds and releases (asking a
 * `limit` that reaches past the window's start: the lists have no paging), its budget and its
 * auto-shutdown state. Read-only: only GETs, never `POST /events`.
 */
import type { RackClient } from '../rack-api/client.js';
import { RackApiError } from '../rack-api/errors.js';
import type { RackApp } from '../rack-api/types.js';
import type { AppSnapshot, RackSnapshot, ReadList } from './types.js';

/** How deep the lists are read. */
export interface ReadDepth {
  /** The first `limit` asked (up to 50 the rack answers from its cache). */
  readonly firstLimit: number;
  /** The largest `limit` asked; a list still not past the window's start is reported uncovered. */
  readonly maxLimit: number;
  /** How far before the window a build may have started and still end inside it (the longest build). */
  readonly buildLookbackMs: number;
}

/** Asks a larger `limit` until the oldest record is older than `reachMs`, or the list is shorter than asked. */
async function readDeep<T>(
  read: (limit: number) => Promise<T[]>,
  route: (limit: number) => string,
  time: (record: T) => string,
  reachMs: number,
  depth: ReadDepth,
): Promise<ReadList<T>> {
  let limit = Math.min(depth.firstLimit, depth.maxLimit);
  for (;;) {
    const records = await read(limit);
    const oldest = records.at(-1);
    const covered = records.length < limit || (oldest !== undefined && Date.parse(time(oldest)) < reachMs);
    if (covered || limit >= depth.maxLimit) return { route: route(limit), limit, records, covered };
    limit = Math.min(limit * 4, depth.maxLimit);
  }
}

async function readApp(client: RackClient, app: RackApp, since: Date, depth: ReadDepth): Promise<AppSnapshot> {
  const name = encodeURIComponent(app.name);
  const builds = await readDeep(
    (limit) => client.builds(app.name, limit),
    (limit) => `/apps/${name}/builds?limit=${limit}`,
    (build) => build.started,
    since.getTime() - depth.buildLookbackMs,
    depth,
  );
  const releases = await readDeep(
    (limit) => client.releases(app.name, limit),
    (limit) => `/apps/${name}/releases?limit=${limit}`,
    (release) => release.created,
    since.getTime(),
    depth,
  );
  const budget = await client.budget(app.name);
  const shutdown = await client.shutdownState(app.name).catch((error: unknown) => {
    // A corrupt stored state is the rack's 500 "… malformed/invalid": nothing to read there, not a failed reconcile.
    if (
      error instanceof RackApiError &&
      error.code === 'rack_failed' &&
      error.httpStatus === 500 &&
      /shutdown state annotation/.test(error.message)
    )
      return 'corrupt' as const;
    throw error;
  });
  return { app, builds, releases, budget, shutdown };
}

/**
 * The rack as a reconcile needs it. `apps` narrows to these apps (each read with `GET /apps/{name}`,
 * so a missing one fails with `rack_not_found`); otherwise every app of `GET /apps`.
 */
export async function readRack(client: RackClient, since: Date, depth: ReadDepth, apps?: readonly string[]): Promise<RackSnapshot> {
  const readAt = new Date();
  const list = apps === undefined || apps.length === 0 ? await client.apps() : await Promise.all(apps.map((name) => client.app(name)));
  const named = apps !== undefined && apps.length > 0;
  const snapshots: AppSnapshot[] = [];
  const gone: string[] = [];
  // One app at a time: a reconcile is a background check, and the rack's api serves deploys too.
  for (const app of list) {
    try {
      snapshots.push(await readApp(client, app, since, depth));
    } catch (error) {
      // Deleted between the list and its reads (404 app not found): its records went with it.
      // An app the caller named is different: its 404 fails the reconcile.
      if (named || !(error instanceof RackApiError && error.code === 'rack_not_found' && error.httpStatus === 404)) throw error;
      gone.push(app.name);
    }
  }
  return { apps: snapshots, readAt, gone };
}
