// The inbox part of `npm run demo`: rack-webhooks/inbox on PGlite (Postgres in WebAssembly, data in
// a temporary directory, nothing to install), behind a real HTTP receiver. One line per step:
// accepted, duplicate, a handler that fails twice and succeeds on its third attempt, its effect
// committed once through context.transaction, a replay, and the inbox as a table. Prints no key,
// signature or body. Resolves with the number of steps that did not go as expected.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ACTION = 'app:budget:auto-shutdown:fired';
const FAILING_ATTEMPTS = 2; // the "pager" is down for the first two attempts
const BACKOFF = { baseMs: 200, jitter: 'none' }; // seconds in total, not the default minutes
const STEP_TIMEOUT_MS = 5000;

/**
 * `keep: true` (npm run demo -- --console): a few more deliveries for the console to show (an app
 * armed now, a shutdown whose handler keeps failing until it is dead), and the PGlite directory is
 * left in place; the caller opens the console on it and removes it.
 */
export async function runInboxDemo({ keep = false } = {}) {
  let openPGlite, createReceiver, createInbox, createNodeHandler, createSignedRequest, createTestEvent;
  try {
    await import('@electric-sql/pglite'); // an optional peer: its absence is said below
    ({ createReceiver } = await import('rack-webhooks'));
    ({ createInbox, openPGlite } = await import('rack-webhooks/inbox'));
    ({ createNodeHandler } = await import('rack-webhooks/node'));
    ({ createSignedRequest, createTestEvent } = await import('rack-webhooks/testing'));
  } catch (error) {
    console.error(`demo: cannot load the inbox demo's modules (${error.code ?? error.message}); run npm ci and npm run build`);
    return 1;
  }

  const started = Date.now();
  const say = (text) => console.log(`  ${((Date.now() - started) / 1000).toFixed(2).padStart(5)} s  ${text}`);
  let problems = 0;
  const expect = (ok, what) => {
    if (!ok) {
      problems++;
      console.log(`  FAIL: ${what}`);
    }
    return ok;
  };

  const key = randomBytes(32).toString('hex');
  const directory = mkdtempSync(join(tmpdir(), 'rack-webhooks-demo-'));
  let directoryHandle, db;
  let server, worker;

  // Worker records arrive through the receiver's logger; steps wait for the one they expect.
  const waiters = new Set();
  const nextRecord = (matches, what) => {
    const waiter = { matches };
    const promise = new Promise((resolve, reject) => {
      waiter.resolve = (record) => {
        clearTimeout(waiter.timer);
        resolve(record);
      };
      waiter.timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`no ${what} within ${STEP_TIMEOUT_MS / 1000} s`));
      }, STEP_TIMEOUT_MS);
    });
    promise.catch(() => {}); // reported where it is awaited; never an unhandled rejection
    waiters.add(waiter);
    return promise;
  };

  const pagesRows = async () => (await db.query('SELECT delivery_id::text AS delivery, attempt FROM pages ORDER BY delivery_id')).rows;

  try {
    console.log('\ninbox demo: rack-webhooks/inbox on PGlite (Postgres in WebAssembly, no server), data in a temporary directory\n');
    // openPGlite: this process owns the directory (other processes reach it through this one).
    directoryHandle = await openPGlite(directory);
    db = directoryHandle.client;
    say('PGlite started (a fresh data directory is initialised on first use)');
    const inbox = createInbox({ database: directoryHandle });
    const migrated = await inbox.migrate();
    say(`migrate(): schema version ${migrated.version} (applied: ${migrated.applied.join(', ') || 'none'})`);
    // The application's own table, in the same database: the handler's effect.
    await db.exec('CREATE TABLE pages (delivery_id bigint PRIMARY KEY, app text NOT NULL, attempt integer NOT NULL)');

    const receiver = createReceiver({
      secrets: key,
      inbox,
      logger(record) {
        for (const waiter of waiters) {
          if (waiter.matches(record)) {
            waiters.delete(waiter);
            waiter.resolve(record);
          }
        }
      },
    });
    receiver.on(ACTION, async (event, { delivery, transaction }) => {
      // Written first, inside the transaction that marks the delivery done: a failure below rolls it
      // back. Keyed on delivery.id, so a replay does not page twice.
      await transaction.query('INSERT INTO pages (delivery_id, app, attempt) VALUES ($1, $2, $3) ON CONFLICT (delivery_id) DO NOTHING', [
        delivery.id,
        event.data.app,
        delivery.attempt,
      ]);
      if (delivery.attempt <= FAILING_ATTEMPTS) throw new Error('pager unreachable');
    });

    server = createServer(createNodeHandler(receiver));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${server.address().port}/webhooks`;
    say(
      `receiver with the inbox on ${url}; its ${ACTION} handler pages through context.transaction; the pager is down for its first ${FAILING_ATTEMPTS} attempts`,
    );

    // What the rack sends: the event's bytes and a signature over them, POSTed once.
    const request = await createSignedRequest(createTestEvent(ACTION, { data: { app: 'billing-api' } }), { secrets: key });
    const send = async () => {
      const response = await fetch(url, { method: 'POST', headers: request.headers, body: request.body });
      return { status: response.status, text: await response.text() };
    };

    // Expected worker records, registered before the delivery so none is missed.
    const attempts = [1, 2, 3].map((attempt) =>
      nextRecord(
        (record) => record.attempt === attempt && ['retried', 'processed', 'dead'].includes(record.event),
        `record of attempt ${attempt}`,
      ).then((record) => {
        if (record.event === 'retried')
          say(
            `attempt ${attempt} failed (pager unreachable): its pages row rolled back; retry in ${BACKOFF.baseMs * 2 ** (attempt - 1)} ms`,
          );
        else if (record.event === 'processed')
          say(`attempt ${attempt} succeeded: delivery ${record.deliveryId} done, its pages row committed`);
        else say(`attempt ${attempt}: delivery ${record.deliveryId} is ${record.event}`);
        return record;
      }),
    );

    const first = await send();
    const stored = (await inbox.list()).deliveries;
    const id = stored[0]?.id;
    if (
      expect(
        first.status === 200 && first.text === '{"status":"accepted"}' && stored.length === 1,
        `first delivery: got ${first.status} ${first.text}, ${stored.length} rows`,
      )
    ) {
      say(`sent ${ACTION}: ${first.status} ${first.text}, stored as delivery ${id}`);
    }

    const copy = await send();
    const afterCopy = (await inbox.stats()).total;
    if (
      expect(
        copy.status === 200 && copy.text === '{"status":"duplicate"}' && afterCopy === 1,
        `copy: got ${copy.status} ${copy.text}, ${afterCopy} rows`,
      )
    ) {
      say(`sent the same delivery again: ${copy.status} ${copy.text}, still ${afterCopy} row`);
    }

    // Started after the two sends so the lines read in order; it could as well be another process.
    worker = inbox.work(receiver, { backoff: BACKOFF, maxAttempts: 5 });
    say(`inbox.work(receiver): worker started (backoff ${BACKOFF.baseMs} ms, doubling, no jitter)`);
    const outcomes = (await Promise.all(attempts)).map((record) => record.event);
    expect(outcomes.join(',') === 'retried,retried,processed', `attempts ended ${outcomes.join(', ')}`);
    const pages = await pagesRows();
    if (expect(pages.length === 1 && pages[0].delivery === id && pages[0].attempt === 3, `pages table: ${JSON.stringify(pages)}`)) {
      say(`pages table: 1 row, written by attempt 3 (attempts 1 and 2 left none)`);
    }

    const replayedRecord = nextRecord(
      (record) => record.deliveryId === id && ['replayed', 'processed', 'retried', 'dead'].includes(record.event),
      'record of the replay',
    );
    const replayed = await inbox.replay({ action: 'app:budget:*' });
    expect(replayed === 1, `replay moved ${replayed} deliveries`);
    say(`inbox.replay({ action: 'app:budget:*' }): ${replayed} delivery back to pending`);
    const replay = await replayedRecord;
    const afterReplay = await pagesRows();
    if (
      expect(
        replay.event === 'replayed' && afterReplay.length === 1 && afterReplay[0].attempt === 3,
        `replay: ${replay.event}, pages ${JSON.stringify(afterReplay)}`,
      )
    ) {
      say(`replayed: attempt ${replay.attempt} ran the handler again and succeeded; pages table still 1 row (keyed on delivery.id)`);
    }

    if (keep) await addConsoleDeliveries();

    await worker.stop();
    worker = undefined;
    if (!keep) printInbox(await inbox.list(), await inbox.stats());

    function printInbox({ deliveries }, stats) {
      const table = [['id', 'state', 'attempts', 'action'], ...deliveries.map((d) => [d.id, d.state, String(d.attempts), d.action])];
      const widths = table[0].map((_, column) => Math.max(...table.map((row) => row[column].length)));
      console.log('\ninbox.list():');
      for (const row of table)
        console.log(
          `  ${row
            .map((cell, column) => cell.padEnd(widths[column]))
            .join('  ')
            .trimEnd()}`,
        );
      console.log(
        `inbox.stats(): pending ${stats.pending}, running ${stats.running}, done ${stats.done}, dead ${stats.dead}, ignored ${stats.ignored}, total ${stats.total}`,
      );
      expect(
        deliveries.length === 1 && deliveries[0].state === 'done' && deliveries[0].attempts === 4 && stats.done === 1 && stats.total === 1,
        'final state: expected one delivery, done after 4 attempts',
      );
    }

    async function addConsoleDeliveries() {
      const now = Date.now();
      const minute = 60_000;
      const stamp = (ms) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
      const armedAt = now - 5 * minute;
      const tick = `tick-${stamp(armedAt)}-${randomBytes(16).toString('hex')}`;
      const events = [
        createTestEvent('app:budget:cap', { timestamp: new Date(armedAt - minute).toISOString(), data: { app: 'payments-api' } }),
        createTestEvent('app:budget:auto-shutdown:armed', {
          timestamp: new Date(armedAt).toISOString(),
          data: { app: 'payments-api', tick_id: tick, scheduled_at: stamp(armedAt), expected_shutdown_at: stamp(armedAt + 60 * minute) },
        }),
        createTestEvent('app:budget:auto-shutdown:failed', { data: { app: 'billing-api' } }),
      ];
      // The chat channel is down for good: this one ends dead, for the console's Retry button.
      receiver.on('app:budget:auto-shutdown:failed', () => {
        throw new Error('chat webhook unreachable (503)');
      });
      const dead = nextRecord((record) => record.event === 'dead', 'a dead delivery');
      for (const event of events) {
        const signedEvent = await createSignedRequest(event, { secrets: key });
        const response = await fetch(url, { method: 'POST', headers: signedEvent.headers, body: signedEvent.body });
        expect(response.status === 200, `console delivery: ${response.status}`);
      }
      await dead;
      say(
        `3 more deliveries for the console: payments-api armed (countdown running), billing-api's shutdown failed (its handler is down: dead)`,
      );
    }
  } catch (error) {
    // One line, no stack: the step that broke and why.
    problems++;
    console.log(
      `  FAIL: ${String(error?.message ?? error)
        .split(key)
        .join('<key>')}`,
    );
  } finally {
    for (const waiter of waiters) clearTimeout(waiter.timer); // a failed step leaves nothing ticking
    await worker?.stop().catch(() => {});
    if (server !== undefined) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await directoryHandle?.close().catch(() => {});
    if (!keep) rmSync(directory, { recursive: true, force: true });
  }
  if (keep) return { problems, directory };
  console.log(
    problems === 0
      ? '\nevery inbox step went as expected (temporary directory removed)'
      : `\n${problems} inbox step${problems === 1 ? '' : 's'} did not go as expected`,
  );
  return problems;
}
