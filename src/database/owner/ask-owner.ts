/**
 * What a guest asks of its directory's owner, and what it says when the owner does not answer.
 * A live owner's process may stop answering without going away (SIGSTOP, a debugger, a hang): its
 * socket still accepts (the kernel does that), so it is still the owner, nobody can take the
 * directory over, and its guests must fail in a bounded time with a reason that names it.
 */
import { connectOnce, pidFile, type NodeParts } from './claim.js';

export type Answer = 'serving' | 'closing' | 'silent';

/** How long an owner may take to answer an SSLRequest before it counts as silent (its event loop is not turning). */
export const ASK_TIMEOUT_MS = 5_000;
const SSL_REQUEST = new Uint8Array([0, 0, 0, 8, 4, 210, 22, 47]);

/**
 * What the socket answers an SSLRequest: 'N' (no SSL) from an owner that serves or still loads
 * PGlite; an ErrorResponse from one that is closing; nothing from a socket gone or stuck.
 */
export function askOwner(parts: NodeParts, path: string, timeoutMs = ASK_TIMEOUT_MS): Promise<Answer> {
  return connectOnce<Answer>(parts, path, timeoutMs, 'silent', (socket, done) => {
    socket.once('connect', () => socket.write(SSL_REQUEST));
    socket.once('data', (chunk: Uint8Array) => done(chunk[0] === 78 ? 'serving' : chunk[0] === 69 ? 'closing' : 'silent'));
    socket.once('error', () => done('silent'));
    socket.once('close', () => done('silent'));
  });
}

/** What the owner of `socketPath` wrote beside it (claim.ts): its pid, and whether PGlite is loading or closing. */
export async function ownerState(parts: NodeParts, socketPath: string): Promise<{ readonly pid?: number; readonly loading: boolean }> {
  const [first = '', second = ''] = (await parts.fs.readFile(pidFile(socketPath), 'utf8').catch(() => '')).split('\n');
  const pid = Number.parseInt(first, 10);
  return { ...(Number.isInteger(pid) && pid > 0 && { pid }), loading: second === 'loading' || second === 'closing' };
}

/** A guest's error when its owner is alive and silent: `code` `'pglite_owner_unreachable'`, the owner's pid when known. */
export function ownerUnreachable(
  dir: string,
  path: string,
  pid: number | undefined,
  silentMs: number,
): Error & { code: string; pid?: number } {
  const who = pid === undefined ? 'its owner (pid unknown)' : `its owner, pid ${pid},`;
  const resume = pid === undefined ? 'resume that process' : `resume it (kill -CONT ${pid})`;
  return Object.assign(
    new Error(
      `pglite_owner_unreachable: the PGlite directory ${dir} is owned by a live process that has not answered${silentMs >= 1000 ? ` for ${Math.round(silentMs / 1000)} s` : ''}: ` +
        `${who} accepts connections on ${path} and answers nothing (stopped, hung or overloaded); no other process can open the directory ` +
        `while it lives: ${resume} or stop it, and its guests take the directory over`,
    ),
    { code: 'pglite_owner_unreachable', ...(pid !== undefined && { pid }) },
  );
}
