/**
 * A console whose inbox has gaps of both kinds, found by a real inbox.watch() on a test clock: the
 * emulator's rack sends to the console fixture's receiver, drops a release:create (a log gap, as
 * its build:create names it, and a reconcile gap) and an auto-shutdown :armed (a reconcile gap),
 * and its read API proves both. The :armed gap is then marked recorded, as `reconcile --record`
 * (issue 39 point 2) leaves a gap it stored: `recorded: { id }` naming a delivery.
 */
import type pg from 'pg';
import { resolveTableNames } from '../../src/inbox/schema/table-name.js';
import { expect } from 'vitest';
import { until } from '../kit/time.js';
import { watchTables } from '../../src/inbox/schema/table-name.js';
import { createRackClient } from '../../src/rack-api/client.js';
import { createRackEmulator } from '../../src/testing/emulator.js';
import { MINUTE, NO_RULES, TestClock } from '../inbox/watch/helpers.js';
import { inProcessFetch } from '../kit/rack-api.js';
import { openConsoleFixture, type ConsoleFixture, type FixtureOptions } from './console-fixture.js';

export interface GapsFixture {
  readonly fixture: ConsoleFixture;
  /** The release whose release:create was dropped. */
  readonly releaseId: string;
  /** The delivery of the build:create that names it (the log gap's evidence). */
  readonly buildDeliveryId: string;
  /** The countdown whose :armed was dropped. */
  readonly tick: string;
  /** The delivery the :armed gap is marked recorded as. */
  readonly recordedId: string;
  close(): Promise<void>;
}

const ago = (ms: number) => new Date(Date.now() - ms);

export async function openGapsFixture(options: FixtureOptions = {}): Promise<GapsFixture> {
  const fixture = await openConsoleFixture(options);
  const rack = createRackEmulator({ webhooks: { console: fixture.receiverUrl }, signingKeys: fixture.key, log: () => {} });
  const api = rack.api;
  await api.createApp('web', { at: ago(72 * 60 * MINUTE) });
  const build = await api.build('web', { at: ago(10 * MINUTE), drop: ['release:create'] });
  const tick = await api.autoShutdown('web', 'armed', { at: ago(7 * MINUTE), drop: true });
  const clock = new TestClock();
  let reads = 0;
  const watcher = fixture.inbox.watch({
    onAlert: () => {},
    retention: false,
    intervalMs: 3_600_000,
    now: () => (reads++, clock.now()),
    rules: { ...NO_RULES, logGaps: { graceMs: 0 } },
    reconcile: { client: createRackClient({ url: 'https://api.rack.example', token: api.mintToken(), fetch: inProcessFetch(api) }) },
  });
  // Its first evaluation is on a zero timer: once it has begun (it read the clock), a check runs after it.
  await until(() => expect(reads).toBeGreaterThan(0));
  await watcher.check();
  await watcher.stop();

  const [buildDelivery] = (await fixture.inbox.list({ action: 'build:create' })).deliveries;
  const [recorded] = (await fixture.inbox.list({ action: 'app:create' })).deliveries;
  const incidents = watchTables(resolveTableNames(fixture.db.table)).incidents;
  const pool = fixture.db.database as pg.Pool;
  const key = `reconcile_gap:web:app:budget:auto-shutdown:armed:${tick}`;
  const { rows } = await pool.query<{ fields: string }>(`SELECT fields FROM ${incidents} WHERE key = $1 AND resolved_at IS NULL`, [key]);
  if (rows.length !== 1) throw new Error(`the watcher opened no incident ${key}`);
  const fields = { ...(JSON.parse(rows[0]!.fields) as object), recorded: { id: recorded!.id } };
  await pool.query(`UPDATE ${incidents} SET fields = $2 WHERE key = $1 AND resolved_at IS NULL`, [key, JSON.stringify(fields)]);
  return {
    fixture,
    releaseId: build.release!.id,
    buildDeliveryId: buildDelivery!.id,
    tick,
    recordedId: recorded!.id,
    close: () => fixture.close(),
  };
}
