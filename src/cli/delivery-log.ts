/** `listen --log`: every accepted payload, one per line, on disk before the 200 goes out. */
import { closeSync, fdatasyncSync, fstatSync, openSync, writeSync } from 'node:fs';
import { UsageError } from './args.js';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export interface DeliveryLog {
  /** Appends one payload as one line and waits for the disk; throws when it cannot. */
  append(raw: Uint8Array | string): void;
  close(): void;
}

/**
 * The line for one payload: its raw bytes exactly as they arrived, so a line can be re-verified
 * against its signature later. Only a body holding a raw line break (legal JSON whitespace) would
 * span lines; that one is re-serialised compactly instead, the one case where the line is not
 * the received bytes (and then cannot be re-verified, but every line stays one JSON document).
 */
export function logLine(raw: Uint8Array | string): Buffer {
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (!bytes.includes(NEWLINE) && !bytes.includes(CARRIAGE_RETURN)) return Buffer.concat([bytes, Buffer.from('\n')]);
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return Buffer.from(`${JSON.stringify(JSON.parse(text))}\n`, 'utf8');
}

export function openDeliveryLog(path: string): DeliveryLog {
  let fd: number;
  let syncsToDisk: boolean;
  try {
    // Opened once, in append mode: each line is one write at the end, even with other writers.
    fd = openSync(path, 'a');
    // Only a regular file has a disk to sync to. A pipe, a terminal or /dev/null (`--log
    // /dev/stdout`, `--log >(jq ...)`) refuses fdatasync with EINVAL, which would fail every
    // delivery with a 500; there the write itself is all the durability on offer, so it is
    // written and not synced. Decided once here, so a failed sync later is a real failure.
    syncsToDisk = fstatSync(fd).isFile();
  } catch (error) {
    throw new UsageError(`cannot open --log ${JSON.stringify(path)} (${(error as { code?: string }).code ?? 'error'})`);
  }
  return {
    append(raw) {
      const line = logLine(raw);
      let written = 0;
      while (written < line.length) written += writeSync(fd, line, written, line.length - written);
      // The rack never retries: once we answer 200 the payload must survive a crash or power loss.
      if (syncsToDisk) fdatasyncSync(fd);
    },
    close() {
      closeSync(fd);
    },
  };
}
