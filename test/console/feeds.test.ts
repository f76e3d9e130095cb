/**
 * The console's two readers of new rows, over a real inbox: the apps index across batches and id
 * digit boundaries, and the change feed through an outage (told once, one polling loop however
 * often pages reconnect).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AppsIndex } from '../../src/console/server/api/apps.js';
import { ChangeFeed } from '../../src/console/server/api/changes.js';
import { composeInbox } from '../../src/inbox/create-inbox.js';
import type { InboxOperator } from '../../src/inbox/operator.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { createSignedRequestSync } from '../../src/testing/signed-request.js';
import { createTestEvent, rackTimestamp } from '../../src/testing/test-event.js';
import { openDatabase, type TestDatabase } from '../inbox/databases.js';

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

  it('reports an outage once, and the next one once again', async () => {
    const { operator } = await filledInbox(1, () => 'one-api');
    let broken = false;
    const lost = Object.assign(new Error('connection lost'), { code: 'ECONNRESET' });
    const guarded: InboxOperator = {
      ...operator,
      changeFingerprint: () => (broken ? Promise.reject(lost) : operator.changeFingerprint()),
    };
    const errors: unknown[] = [];
    const feed = new ChangeFeed(guarded, 10, (error) => errors.push(error));
    const client = await listener();
    await feed.subscribe(client.response);
    broken = true;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBe(lost);
    broken = false;
    await new Promise((resolve) => setTimeout(resolve, 100));
    broken = true;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(errors).toHaveLength(2);
    feed.close();
    client.close();
  }, 30_000);

  it('runs one polling loop however often pages reconnect', async () => {
    const { operator } = await filledInbox(1, () => 'one-api');
    let polls = 0;
    // Each poll takes about as long as the interval, so a loop left over from a reconnect overlaps the new one.
    const slow: InboxOperator = {
      ...operator,
      changeFingerprint: async () => {
        polls++;
        await new Promise((resolve) => setTimeout(resolve, 20));
        return operator.changeFingerprint();
      },
    };
    const feed = new ChangeFeed(slow, 20, () => {});
    for (let round = 0; round < 10; round++) {
      const client = await listener();
      await feed.subscribe(client.response);
      await new Promise((resolve) => setTimeout(resolve, 25));
      client.close();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const client = await listener();
    await feed.subscribe(client.response);
    await new Promise((resolve) => setTimeout(resolve, 100));
    polls = 0;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // One loop: a poll every 40 ms or so (20 ms query + 20 ms wait): about 25 a second. Several loops: 50 and more.
    expect(polls).toBeLessThan(38);
    expect(polls).toBeGreaterThan(5);
    feed.close();
    client.close();
  }, 30_000);
});
