/**
 * The few PostgreSQL wire-protocol (v3) messages the owner's socket needs to frame, answer and
 * read itself: everything else passes to PGlite untouched. Functions over bytes, with Node's
 * Buffer: only the owner, a Node process, frames them.
 */

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;
const PROTOCOL_3 = 196608;
/** Larger than any statement the inbox sends; a client claiming more is cut off. */
const MAX_MESSAGE = 64 * 1024 * 1024;

/** A whole untyped startup packet at the front of `buffer`: its length, or 0 when more must arrive. */
export function startupLength(buffer: Uint8Array): number {
  if (buffer.length < 8) return 0;
  const length = view(buffer).getInt32(0);
  if (length < 8 || length > 10_000) return -1;
  return buffer.length >= length ? length : 0;
}

/** What a startup packet asks: encryption (SSLRequest, GSSENCRequest), a session, or what is not served (CancelRequest, anything else). */
export function startupKind(packet: Uint8Array): 'encryption' | 'startup' | undefined {
  const code = view(packet).getInt32(4);
  if (code === SSL_REQUEST || code === GSS_REQUEST) return 'encryption';
  return code === PROTOCOL_3 ? 'startup' : undefined;
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
  const header = Buffer.alloc(5, type);
  header.writeInt32BE(4 + parts.reduce((sum, part) => sum + part.length, 0), 1);
  return Buffer.concat([header, ...parts]);
}

const cString = (text: string): Uint8Array => Buffer.from(`${text}\0`);

/** Big-endian, as every integer on the wire (a Uint8Array keeps each byte's low 8 bits). */
const int32 = (value: number): Uint8Array => new Uint8Array([value >>> 24, value >>> 16, value >>> 8, value]);

/** AuthenticationOk, the session's parameters, a key and ReadyForQuery: a session is ready. */
export function sessionReady(parameters: Readonly<Record<string, string>>, processId: number, secret: number): Uint8Array {
  return Buffer.concat([
    message('R', int32(0)),
    ...Object.entries(parameters).map(([name, value]) => message('S', cString(name), cString(value))),
    message('K', int32(processId), int32(secret)),
    readyForQuery('I'),
  ]);
}

export function readyForQuery(status: TransactionStatus): Uint8Array {
  return message('Z', Buffer.from(status));
}

/** An ErrorResponse with a severity, a SQLSTATE and a message. */
export function errorResponse(sqlState: string, text: string): Uint8Array {
  return message('E', cString('SERROR'), cString('VERROR'), cString(`C${sqlState}`), cString(`M${text}`), new Uint8Array([0]));
}

export function query(text: string): Uint8Array {
  return message('Q', cString(text));
}

/** The statement text a Query ('Q') or Parse ('P') message carries; undefined for other messages. */
export function statementText(msg: Uint8Array): string | undefined {
  const type = String.fromCharCode(msg[0]!);
  const start = type === 'Q' ? 5 : type === 'P' ? msg.indexOf(0, 5) + 1 : 0; // a Parse names its statement first
  const end = start > 0 ? msg.indexOf(0, start) : -1;
  return end < 0 ? undefined : Buffer.from(msg.buffer, msg.byteOffset + start, end - start).toString();
}

export type TransactionStatus = 'I' | 'T' | 'E';

/**
 * PGlite's answer as the client gets it: less its NotificationResponses (a NOTIFY the guest's
 * statement raised reaches the owner's listeners; the guest never asked for it), with the last
 * ReadyForQuery's transaction status, when the answer holds one.
 */
export function readAnswer(bytes: Uint8Array): { readonly bytes: Uint8Array; readonly status: TransactionStatus | undefined } {
  // The runs between notifications, collected only once there is one: most answers have none.
  const kept: Uint8Array[] = [];
  const lengths = view(bytes);
  let status: TransactionStatus | undefined;
  let offset = 0;
  let keptFrom = 0;
  while (offset + 5 <= bytes.length) {
    const end = offset + 1 + lengths.getInt32(offset + 1);
    if (end > bytes.length) break;
    if (bytes[offset] === 90) status = String.fromCharCode(bytes[offset + 5]!) as TransactionStatus; // 'Z'
    if (bytes[offset] === 65) {
      // 'A'
      kept.push(bytes.subarray(keptFrom, offset));
      keptFrom = end;
    }
    offset = end;
  }
  if (kept.length === 0) return { bytes, status };
  return { bytes: Buffer.concat([...kept, bytes.subarray(keptFrom)]), status };
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
