/**
 * The few PostgreSQL wire-protocol (v3) messages the owner's socket needs to frame, answer and
 * read itself: everything else passes to PGlite untouched. Pure functions over bytes.
 */

/** What a client sends first, before any typed message. */
export type StartupPacket =
  | { readonly kind: 'ssl' }
  | { readonly kind: 'gss' }
  | { readonly kind: 'cancel' }
  | { readonly kind: 'startup' }
  | { readonly kind: 'unknown'; readonly code: number };

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
/** Larger than any statement the inbox sends; a client claiming more is cut off. */
export const MAX_MESSAGE = 64 * 1024 * 1024;

/** A whole untyped startup packet at the front of `buffer`: its length, or 0 when more must arrive. */
export function startupLength(buffer: Uint8Array): number {
  if (buffer.length < 8) return 0;
  const length = view(buffer).getInt32(0);
  if (length < 8 || length > 10_000) return -1;
  return buffer.length >= length ? length : 0;
}

export function readStartup(packet: Uint8Array): StartupPacket {
  const code = view(packet).getInt32(4);
  if (code === SSL_REQUEST) return { kind: 'ssl' };
  if (code === GSS_REQUEST) return { kind: 'gss' };
  if (code === CANCEL_REQUEST) return { kind: 'cancel' };
  if (code === PROTOCOL_3) return { kind: 'startup' };
  return { kind: 'unknown', code };
}

/** A whole typed message at the front of `buffer`: its length (type byte included), 0 when more must arrive, -1 when it cannot be one. */
export function messageLength(buffer: Uint8Array): number {
  if (buffer.length < 5) return 0;
  const length = view(buffer).getInt32(1);
  if (length < 4 || length > MAX_MESSAGE) return -1;
  return buffer.length >= length + 1 ? length + 1 : 0;
}

/** One typed message: its type byte and body. */
export function message(type: string, ...parts: Uint8Array[]): Uint8Array {
  const size = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(5 + size);
  out[0] = type.charCodeAt(0);
  view(out).setInt32(1, 4 + size);
  let offset = 5;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function cString(text: string): Uint8Array {
  return encoder.encode(`${text}\0`);
}

function int32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  view(out).setInt32(0, value);
  return out;
}

/** AuthenticationOk, the session's parameters, a key and ReadyForQuery: a session is ready. */
export function sessionReady(parameters: Readonly<Record<string, string>>, processId: number, secret: number): Uint8Array {
  return concat([
    message('R', int32(0)),
    ...Object.entries(parameters).map(([name, value]) => message('S', cString(name), cString(value))),
    message('K', int32(processId), int32(secret)),
    readyForQuery('I'),
  ]);
}

export function readyForQuery(status: TransactionStatus): Uint8Array {
  return message('Z', encoder.encode(status));
}

/** An ErrorResponse with a severity, a SQLSTATE and a message. */
export function errorResponse(sqlState: string, text: string): Uint8Array {
  return message('E', cString('SERROR'), cString('VERROR'), cString(`C${sqlState}`), cString(`M${text}`), new Uint8Array([0]));
}

/** A simple-protocol Query message. */
export function query(text: string): Uint8Array {
  return message('Q', cString(text));
}

/** The statement text a Query ('Q') or Parse ('P') message carries; undefined for other messages. */
export function statementText(msg: Uint8Array): string | undefined {
  const type = String.fromCharCode(msg[0]!);
  if (type === 'Q') return readCString(msg, 5);
  if (type !== 'P') return undefined;
  const nameEnd = msg.indexOf(0, 5);
  return nameEnd < 0 ? undefined : readCString(msg, nameEnd + 1);
}

function readCString(bytes: Uint8Array, start: number): string | undefined {
  const end = bytes.indexOf(0, start);
  return end < 0 ? undefined : decoder.decode(bytes.subarray(start, end));
}

export type TransactionStatus = 'I' | 'T' | 'E';

export interface Notification {
  readonly channel: string;
  readonly payload: string;
}

/** What came back from PGlite: the bytes for the client, less notifications, which are returned apart. */
export interface Answer {
  readonly bytes: Uint8Array;
  /** The last ReadyForQuery's transaction status, when the answer holds one. */
  readonly status: TransactionStatus | undefined;
  readonly notifications: readonly Notification[];
}

/** Walks PGlite's answer: notes the last ReadyForQuery status and takes NotificationResponses out. */
export function readAnswer(bytes: Uint8Array): Answer {
  const kept: Uint8Array[] = [];
  const notifications: Notification[] = [];
  let status: TransactionStatus | undefined;
  let offset = 0;
  let keptFrom = 0;
  while (offset + 5 <= bytes.length) {
    const type = String.fromCharCode(bytes[offset]!);
    const end = offset + 1 + view(bytes).getInt32(offset + 1);
    if (end > bytes.length) break;
    if (type === 'Z') status = String.fromCharCode(bytes[offset + 5]!) as TransactionStatus;
    if (type === 'A') {
      kept.push(bytes.subarray(keptFrom, offset));
      const channelAt = offset + 9; // type, length, the notifying backend's pid
      const channelEnd = bytes.indexOf(0, channelAt);
      notifications.push({
        channel: decoder.decode(bytes.subarray(channelAt, channelEnd)),
        payload: decoder.decode(bytes.subarray(channelEnd + 1, end - 1)),
      });
      keptFrom = end;
    }
    offset = end;
  }
  if (notifications.length === 0) return { bytes, status, notifications };
  kept.push(bytes.subarray(keptFrom));
  return { bytes: concat(kept), status, notifications };
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
