/**
 * The owner serves its PGlite to other processes and threads on the directory's socket, over the
 * PostgreSQL wire protocol, so `pg` connects to it as to any server (host: the directory). PGlite is
 * one session: each guest gets it exclusively from its first message until PGlite is idle again
 * (ReadyForQuery 'I'), so a guest's transaction never interleaves with the owner's or another
 * guest's. The owner's own queries queue behind it as they queue behind each other.
 *
 * What the shared session cannot give each guest on its own is refused: LISTEN and UNLISTEN (they
 * would change what the owner listens to), so guests poll, and pg_sleep (guest-session.ts). A NOTIFY
 * a guest's statement raises reaches the owner's listeners (PGlite hands them over itself) and is
 * taken out of the guest's answer, which never asked for it. The session state a guest changes
 * (settings, role, temporary tables) is put back when it lets PGlite go (guest-session.ts). A guest
 * that goes away mid-transaction is rolled back; one that holds the session idle in a transaction
 * for `idleInTransactionMs`, or at all for `holdMs`, is cut off and rolled back: the owner's
 * deliveries wait for a guest's transaction, and past 20 s (storeRetry.maxWaitMs) they are lost.
 * Each guest is a guest-connection.ts `Guest`.
 */
import type * as NodeNet from 'node:net';
import type { Claim } from './claim.js';
import { Guest, type GuestLimits, type ServablePGlite } from './guest-connection.js';
import { errorResponse } from './wire.js';

export type { ServablePGlite } from './guest-connection.js';

/**
 * Bounds well under storeRetry.maxWaitMs (20 s), which the owner's deliveries wait at most: the
 * longest a guest may leave its transaction idle, and hold PGlite from its first statement to the
 * end of its transaction, in ms.
 */
const GUEST_LIMITS: GuestLimits = { idleInTransactionMs: 5_000, holdMs: 10_000 };
/** How long close() lets a guest finish the statement or transaction it is in before cutting it off. */
const CLOSE_GRACE_MS = 5_000;
/** What a session reports once ready, as PostgreSQL's ParameterStatus messages (pg reads them). */
const SESSION_PARAMETERS = `SELECT current_setting('server_version') AS server_version, 'UTF8' AS server_encoding,
  'UTF8' AS client_encoding, current_setting('DateStyle') AS "DateStyle", current_setting('TimeZone') AS "TimeZone",
  'on' AS integer_datetimes, 'on' AS standard_conforming_strings`;

/**
 * Serves `opened` (PGlite, once it is ready) on `server` from now on: a guest that connects while
 * PGlite still loads is held until it is ready (its own connect timeout bounds the wait), never
 * left without an answer. Call it as soon as the directory is claimed.
 */
export function servePGlite(opened: Promise<ServablePGlite>, server: NodeNet.Server, limits: Partial<GuestLimits> = {}) {
  const guests = new Set<Guest>();
  let closing = false;
  opened.catch(() => {}); // a PGlite that failed to open: its guests are cut off, the opener reports it
  let parameters: Promise<Record<string, string>> | undefined;
  const sessionParameters = () =>
    (parameters ??= opened.then(async (db) => (await db.query(SESSION_PARAMETERS)).rows[0] as Record<string, string>));
  server.on('connection', (socket) => {
    // Closing: PGlite is about to close and the directory to change hands. A retryable answer
    // (SQLSTATE 57P03), told apart from a stuck owner's silence: the guest connects to the next owner.
    if (closing) {
      socket.on('error', () => {});
      socket.resume(); // read to its end: a socket never read would keep the server from closing
      socket.setTimeout(2_000, () => socket.destroy()); // nor would a peer that never closes its side
      return void socket.end(
        errorResponse('57P03', 'the owner of this PGlite directory is closing it: connect again to reach the next owner'),
      );
    }
    const guest = new Guest(opened, socket, sessionParameters, { ...GUEST_LIMITS, ...limits });
    guests.add(guest);
    socket.once('close', () => guests.delete(guest));
  });
  return {
    /**
     * Refuses new guests, lets each guest finish what it is in (bounded), then rolls back and closes
     * them; resolves once PGlite is the owner's alone. The server keeps listening: the socket is the
     * proof of ownership, and it must outlive PGlite's open files (claim.release() ends it after).
     */
    async close(): Promise<void> {
      closing = true;
      await Promise.all([...guests].map((guest) => guest.finish(CLOSE_GRACE_MS)));
    },
  };
}

/**
 * Ends what the owner serves on `claim`: its guests (servePGlite's close), then PGlite (`closePGlite`),
 * and only then gives the directory up: the socket that proves ownership outlives PGlite's open
 * files, so no newcomer opens them while they are still being written.
 */
export async function closeServed(
  serving: ReturnType<typeof servePGlite>,
  claim: Pick<Claim & { role: 'owner' }, 'closing' | 'release'>,
  closePGlite: () => Promise<unknown>,
): Promise<void> {
  try {
    await serving.close();
    await claim.closing();
    await closePGlite();
  } finally {
    await claim.release();
  }
}
