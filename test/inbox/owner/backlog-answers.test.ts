/**
 * PGlite runs in the owner's main thread and answers without a turn of the event loop: a worker
 * draining a backlog kept the process from accepting any connection until the queue was empty
 * (22 s for 15,000 deliveries: HTTP deliveries, probes, guests). Issue 38, point 4.
 */
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createReceiver } from '../../../src/index.js';
import { createInbox } from '../../../src/inbox/create-inbox.js';
import { openPGlite } from '../../../src/database/owner/open.js';
import { createSignedRequestSync } from '../../../src/testing/signed-request.js';
import { pgliteDirectory } from '../../kit/pglite-directory.js';

const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => fs.rm(dir, { recursive: true, force: true }))), 60_000);

const BACKLOG = 600;
/** Far above a probe's answer on a loaded machine (under 0.5 s), far below the drain without turns (the whole drain, 10 s and more). */
const BOUND_MS = 4_000;

describe('the owner of a PGlite directory', () => {
  it(`answers HTTP while its worker drains a backlog of ${BACKLOG} deliveries: every probe within ${BOUND_MS} ms`, async () => {
    const parent = mkdtempSync(join(tmpdir(), 'rwt-backlog-'));
    made.push(parent);
    const database = await openPGlite(pgliteDirectory(join(parent, 'db')));
    const inbox = createInbox({ database, table: 'deliveries' });
    await inbox.migrate();
    const receiver = createReceiver({ secrets: 'k', inbox });
    for (let i = 0; i < BACKLOG; i++) {
      const body = JSON.stringify({
        action: 'app:create',
        status: 'success',
        timestamp: `2026-01-01T00:00:00.${String(i).padStart(6, '0')}Z`,
        data: { name: `a${i}`, rack: 'r', actor: 'x' },
      });
      const request = createSignedRequestSync(body, { secrets: 'k' });
      await receiver.receive({ body: request.bytes, headers: request.headers });
    }
    let ran = 0;
    receiver.on('app:create', () => void (ran += 1));
    const server = createServer((_request, response) => response.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    await (await fetch(url)).text(); // the HTTP client loaded before the clock starts

    const worker = inbox.work(receiver);
    const probes: number[] = [];
    while (ran < BACKLOG) {
      const started = Date.now();
      expect(await (await fetch(url)).text()).toBe('ok');
      probes.push(Date.now() - started);
    }
    await worker.stop();
    expect(await inbox.stats()).toMatchObject({ done: BACKLOG, pending: 0 });
    expect(probes.filter((ms) => ms > BOUND_MS)).toEqual([]);
    expect(probes.length).toBeGreaterThan(1); // answered during the drain, not once after it
    await new Promise((resolve) => server.close(resolve));
    await database.close();
  }, 180_000);
});
