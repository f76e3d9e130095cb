/**
 * Bounded reads of what the user hands the CLI: files named by flags, and the body on stdin. A
 * device (`/dev/zero`) or an endless pipe must end in a clear error, not fill the memory.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { UsageError } from './usage-error.js';

/** A key file holds a few keys of tens of bytes: anything near this size is the wrong file. */
export const KEY_FILE_LIMIT_BYTES = 64 * 1024;
/** Bodies, events and configs: far above any delivery (receivers refuse more than 1 MiB by default). */
export const INPUT_LIMIT_BYTES = 16 * 1024 * 1024;

const CHUNK_BYTES = 64 * 1024;
/** A pipe (`--key-file <(pass show rack-key)`) gets this long for its writer to finish. */
const PIPE_WAIT_MS = 10_000;
/** A named FIFO nobody has opened for writing yet reads as empty: give a writer this long to appear. */
const PIPE_WRITER_WAIT_MS = 2_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms: number): void => void Atomics.wait(sleeper, 0, 0, ms);

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`;
}

function overLimit(what: string, limitBytes: number): UsageError {
  return new UsageError(`${what} is over the ${sizeText(limitBytes)} limit`);
}

function cannotRead(path: string, flag: string, error: unknown): UsageError {
  const code = (error as { code?: string }).code ?? 'unreadable';
  return new UsageError(`cannot read ${flag} ${JSON.stringify(path)} (${code})`);
}

/** Reads to the end, or throws once more than `limitBytes` arrived: never more than that is kept. */
function readAtMost(fd: number, limitBytes: number, onOverLimit: () => UsageError): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    const read = readSync(fd, chunk, 0, CHUNK_BYTES, null);
    if (read === 0) return Buffer.concat(chunks, total);
    total += read;
    // /proc files and files still being written report a size that is not theirs: count the bytes.
    if (total > limitBytes) throw onOverLimit();
    chunks.push(chunk.subarray(0, read));
  }
}

/**
 * A pipe opened non-blocking: EAGAIN means the writer has not written yet, 0 bytes before anything
 * arrived means no writer has opened it yet. Both are waited for, within bounds; a synchronous
 * sleep is fine in a command-line tool that has nothing else to do.
 */
function readPipeAtMost(fd: number, limitBytes: number, what: string, onOverLimit: () => UsageError): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  const started = Date.now();
  for (;;) {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let read: number;
    try {
      read = readSync(fd, chunk, 0, CHUNK_BYTES, null);
    } catch (error) {
      if ((error as { code?: string }).code !== 'EAGAIN') throw error;
      if (Date.now() - started > PIPE_WAIT_MS)
        throw new UsageError(`${what} is a pipe that sent nothing more for ${PIPE_WAIT_MS / 1000} s`);
      sleep(5);
      continue;
    }
    if (read === 0) {
      if (total > 0 || Date.now() - started > PIPE_WRITER_WAIT_MS) return Buffer.concat(chunks, total);
      sleep(5);
      continue;
    }
    total += read;
    if (total > limitBytes) throw onOverLimit();
    chunks.push(chunk.subarray(0, read));
  }
}

/**
 * Reads a regular file or a pipe the user named, of at most `limitBytes`. The reason names the
 * flag, the file and the error code or limit, never the contents.
 */
export function readUserFile(path: string, flag: string, limitBytes: number): Buffer {
  let fd: number;
  try {
    // Non-blocking, so opening a FIFO never waits for a writer; a regular file ignores the flag.
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw cannotRead(path, flag, error);
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw cannotRead(path, flag, { code: 'EISDIR' });
    const tooBig = () => overLimit(`${flag} ${JSON.stringify(path)}`, limitBytes);
    if (stat.isFIFO()) return readPipeAtMost(fd, limitBytes, `${flag} ${JSON.stringify(path)}`, tooBig);
    if (!stat.isFile()) throw new UsageError(`${flag} ${JSON.stringify(path)} is neither a regular file nor a pipe`);
    if (stat.size > limitBytes) throw tooBig();
    return readAtMost(fd, limitBytes, tooBig);
  } catch (error) {
    throw error instanceof UsageError ? error : cannotRead(path, flag, error);
  } finally {
    closeSync(fd);
  }
}

function stdinIsDirectory(): boolean {
  try {
    return fstatSync(0).isDirectory();
  } catch {
    return false; // no fd 0 to ask about: reading it will say what it holds
  }
}

/** stdin up to `limitBytes`; past that the stream is destroyed, so a writer like `cat /dev/zero` stops too. */
async function readStdin(limitBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    total += (chunk as Buffer).length;
    // Leaving the loop by a throw destroys the stream: nothing more is read.
    if (total > limitBytes) throw overLimit('the body on stdin', limitBytes);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, total);
}

/**
 * The body to sign or verify: --file, else stdin (refused when stdin is a terminal, not to hang).
 * An empty body is refused: no rack sends one, and verifying it would only blame the key.
 */
export async function readBody(file: string | undefined): Promise<Buffer> {
  if (file !== undefined) {
    const body = readUserFile(file, '--file', INPUT_LIMIT_BYTES);
    if (body.length === 0) throw new UsageError(`no body: --file ${JSON.stringify(file)} is empty`);
    return body;
  }
  if (process.stdin.isTTY === true) throw new UsageError('no body: pipe it on stdin or pass --file F');
  if (stdinIsDirectory()) throw new UsageError('no body: stdin is a directory; pass a file with --file F or pipe the body in');
  const body = await readStdin(INPUT_LIMIT_BYTES);
  if (body.length === 0) throw new UsageError('no body: stdin was empty; pipe the body in or pass --file F');
  return body;
}
