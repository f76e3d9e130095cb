/**
 * The console's two readers of new rows, over a real inbox: the apps index across batches and id
 * digit boundaries, and the change feed through an outage (told once, one polling loop however
 * often pages reconnect).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { AppsIndex } from '../../src/console/server/api/apps.js';
import { ChangeFeed } from '../../src/console/server/api/changes.js';
import { composeInbox } from '../../src/inbox/create-inbox.js';
import type { InboxOperator } from '../../src/inbox/operator.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { createSignedRequestSync } from '../../src/testing/signed-request.js';
import { createTestEvent, rackTimestamp } from '../../src/testing/test-event.js';
import { openDatabase, type TestDatabase } from '../inbox/databases.js';
import { deferred, flush, ManualClock, until, type Deferred, type ManualTimer } from '../kit/time.js';

const opened: TestDatabase[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
});

async function filledInbox(count: number, appOf: (index: number) => string): Promise<{ db: TestDatabase<'pg'>; operator: InboxOperator }> {
  const db = await openDatabase('pg');
  opened.push(db);
  const { inbox, operator } = composeInbox({ database: db.database, table: db.table });
  await inbox.migrate();
  const receiver = createReceiver({ secrets: 'feeds-test', inbox });
  for (let index = 0; index < count; index++) {
    const event = createTestEvent('app:budget:threshold', {
      timestamp: rackTimestamp(new Date(Date.UTC(2026, 10, 23, 0, 0, index))),
      data: { app: appOf(index) },
    });
    const request = createSignedRequestSync(event, { secrets: 'feeds-test' });
    expect((await receiver.receive({ body: request.bytes, headers: request.headers })).outcome).toBe('accepted');
  }
  return { db, operator };
}

describe('the apps index', () => {
  it('folds every row across batches and the 99 -> 100 id boundary, and only new ones afterwards', async () => {
    const { operator } = await filledInbox(130, (index) => (index % 2 === 0 ? 'even-api' : 'odd-api'));
    const reads: string[] = [];
    const counting: InboxOperator = {
      ...operator,
      idsAfter: (after, limit) => {
        reads.push(String(after));
        return operator.idsAfter(after, limit);
      },
    };
    const index = new AppsIndex(counting, 7);
    const { apps } = await index.summaries();
    // Before the fix the batches sorted ids as text ("99" after "130") and lost rows.
    expect(Object.fromEntries(apps.map((app) => [app.app, app.events]))).toEqual({ 'even-api': 65, 'odd-api': 65 });
    reads.length = 0;
    await index.summaries();
    // A second look starts just below the highest id seen, not from the beginning.
    expect(reads.map(Number).every((from) => from >= 130 - 256)).toBe(true);
    expect((await index.summaries()).apps.map((app) => app.events)).toEqual([65, 65]);
  }, 60_000);

  it('says which table is missing instead of a bare SQL error', async () => {
    const { operator, db } = await filledInbox(1, () => 'one-api');
    await db.query(`DROP TABLE ${db.table} CASCADE`);
    await expect(new AppsIndex(operator).summaries()).rejects.toMatchObject({
      code: 'inbox_not_migrated',
      status: 500,
    });
  }, 30_000);
});

describe('the change feed', () => {
  /** A real response object on a real socket, held open as the feed holds it. */
  async function listener(): Promise<{ response: ServerResponse; close(): void }> {
    let resolveResponse: (res: ServerResponse) => void = () => {};
    const response = new Promise<ServerResponse>((resolve) => (resolveResponse = resolve));
    const server = createServer((_req, res) => resolveResponse(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const controller = new AbortController();
    void fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { signal: controller.signal }).catch(() => {});
    const res = await response;
    return {
      response: res,
      close() {
        controller.abort();
        res.destroy();
        server.close();
        server.closeAllConnections();
      },
    };
  }

  /** The feed's poll timer, on the test's clock (the heartbeat is the other one). */
  const isPoll = (pollMs: number) => (timer: ManualTimer) => timer.ms === pollMs;

  it('reports an outage once, and the next one once again', async () => {
    const { operator } = await filledInbox(1, () => 'one-api');
    let broken = false;
    let reads = 0;
    const lost = Object.assign(new Error('connection lost'), { code: 'ECONNRESET' });
    const guarded: InboxOperator = {
      ...operator,
      changeFingerprint: () => {
        reads++;
        return broken ? Promise.reject(lost) : operator.changeFingerprint();
      },
    };
    const errors: unknown[] = [];
    const clock = new ManualClock();
    const feed = new ChangeFeed(guarded, 10, (error) => errors.push(error), clock);
    const client = await listener();
    await feed.subscribe(client.response);
    /** One poll: its timer fired, its read done and the next one set. */
    const poll = async () => {
      const before = reads;
      expect(clock.fireNext(isPoll(10))).toBeDefined();
      await until(() => expect(reads > before && clock.live.some(isPoll(10))).toBe(true));
    };
    broken = true;
    for (let i = 0; i < 3; i++) await poll();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBe(lost);
    broken = false;
    await poll();
    broken = true;
    for (let i = 0; i < 3; i++) await poll();
    expect(errors).toHaveLength(2);
    feed.close();
    client.close();
  }, 30_000);

  it('runs one polling loop however often pages reconnect', async () => {
    const { operator } = await filledInbox(1, () => 'one-api');
    // A poll the test holds until the page has gone and another has come: the loop it belonged to must end with it.
    let holding: Deferred<void> | undefined;
    let polls = 0;
    const held: InboxOperator = {
      ...operator,
      changeFingerprint: async () => {
        if (holding !== undefined) {
          polls++;
          await holding.promise;
        }
        return operator.changeFingerprint();
      },
    };
    const clock = new ManualClock();
    const feed = new ChangeFeed(held, 20, () => {}, clock);
    const loops = () => clock.live.filter(isPoll(20)).length;
    let client = await listener();
    await feed.subscribe(client.response);
    for (let round = 0; round < 10; round++) {
      const gate = deferred<void>();
      holding = gate;
      clock.fireNext(isPoll(20));
      await until(() => expect(polls).toBe(round + 1)); // under way
      holding = undefined;
      const closed = once(client.response, 'close');
      client.close();
      await closed;
      expect(loops()).toBe(0);
      client = await listener();
      await feed.subscribe(client.response);
      expect(loops()).toBe(1);
      // The poll of the page that went ends now: it sets no timer of its own.
      gate.resolve();
      await flush(5);
      expect(loops()).toBe(1);
    }
    feed.close();
    client.close();
    expect(loops()).toBe(0);
  }, 30_000);
});
