/** One-line output: colours only for a person at a terminal, plain text for pipes and files. */
import type { DispatchResult } from '../testing/types.js';

type Colour = 'green' | 'yellow' | 'red' | 'dim';
const CODES: Record<Colour, string> = { green: '32', yellow: '33', red: '31', dim: '2' };

/** https://no-color.org: any non-empty NO_COLOR turns colour off; a pipe or file never gets any. */
export function colourEnabled(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env['NO_COLOR'] ?? '') === '';
}

export function paint(enabled: boolean, colour: Colour, text: string): string {
  return enabled ? `\u001b[${CODES[colour]}m${text}\u001b[0m` : text;
}

/** Local wall-clock time, to the millisecond: enough to match a line with the rack's log. */
export function clock(date = new Date()): string {
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/** What `listen` prints for an accepted (or duplicate) delivery. */
export interface AcceptedLine {
  outcome: 'processed' | 'accepted' | 'ignored' | 'duplicate';
  action: string;
  data: Record<string, unknown>;
  /** With an inbox: the stored row's id (`-` for a duplicate, whose copy is stored already). */
  id?: string;
}

function field(data: Record<string, unknown>, name: string): string {
  const value = data[name];
  return typeof value === 'string' || typeof value === 'number' ? oneLine(String(value)) : '-';
}

export function acceptedLine(line: AcceptedLine, colour: boolean, now = new Date()): string {
  const tint: Colour = line.outcome === 'processed' || line.outcome === 'accepted' ? 'green' : 'yellow';
  return [
    paint(colour, 'dim', clock(now)),
    paint(colour, tint, line.outcome.padEnd(9)),
    oneLine(line.action),
    // app:create names the new app in `name`; every other event in `app`.
    `app=${field(line.data, line.action === 'app:create' ? 'name' : 'app')}`,
    `tick_id=${field(line.data, 'tick_id')}`,
    ...(line.id === undefined ? [] : [`id=${line.id}`]),
  ].join('  ');
}

/** A refused request: status and code, and the SDK's reason (its messages never hold a secret or a body). */
export function rejectedLine(status: number, code: string, reason: string | undefined, colour: boolean, now = new Date()): string {
  const head = paint(colour, 'red', `${status} ${code}`);
  return [paint(colour, 'dim', clock(now)), reason === undefined ? head : `${head}: ${inFlagTerms(oneLine(reason))}`].join('  ');
}

/** The SDK's messages name its options; at the command line the fix is a flag. */
export function inFlagTerms(message: string): string {
  return message.replace(/set secretEncoding: '(hex|utf8)'/g, 'pass --secret-encoding $1');
}

/**
 * A webhook URL as the rack itself reports one (field notes: webhook_url is shortened to scheme
 * and host). The user:pass@, the path (/services/T000/B000/TOKEN) and the query (?token=...) are
 * where receivers keep their credential, so only scheme://host[:port] is shown, and "/…" when
 * there was more.
 */
export function shortUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return '(not a URL)';
  }
  const more = url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '';
  return `${url.protocol}//${url.host}${more ? '/…' : ''}`;
}

/** fetch's errors quote the URL they were given ("... includes credentials: http://user:pass@..."). */
export function withoutUrl(message: string, url: string): string {
  let parsedHref: string | undefined;
  try {
    parsedHref = new URL(url).href;
  } catch {
    parsedHref = undefined;
  }
  const short = shortUrl(url);
  // The longer spelling first, so a raw URL inside its normalised form is not half-replaced.
  const spellings = [url, parsedHref]
    .filter((text): text is string => text !== undefined && text !== '')
    .sort((a, b) => b.length - a.length);
  return spellings.reduce((scrubbed, spelling) => scrubbed.split(spelling).join(short), message);
}

/** What `send` prints per receiver: name, shortened url, what came back, and how long it took. */
/** What the receiver said beyond its status: ` processed`, ` signature_mismatch (No signature matched…)`. */
function replyText(reply: DispatchResult['reply']): string {
  if (reply === undefined) return '';
  const word = reply.status ?? reply.error;
  const text = [word, reply.message === undefined ? undefined : `(${reply.message})`].filter((part) => part !== undefined).join(' ');
  // A receiver's message is shown on one line and cut: it is the receiver's text, not ours.
  const line = oneLine(text);
  return line === '' ? '' : ` ${line.length > 300 ? `${line.slice(0, 299)}…` : line}`;
}

/** What came back: `200 processed`, `401 signature_mismatch (…)`, a timeout or the error (without the URL). */
export function answerText(result: DispatchResult, colour: boolean): string {
  const answered = result.status !== undefined && result.status >= 200 && result.status < 300;
  const error = result.error === undefined || result.url === undefined ? result.error : withoutUrl(result.error, result.url);
  if (result.skipped !== undefined) return paint(colour, 'yellow', `skipped (${result.skipped})`);
  if (result.timedOut === true) return paint(colour, 'red', `timeout after ${result.timeoutMs} ms`);
  if (result.status !== undefined) return `${paint(colour, answered ? 'green' : 'red', String(result.status))}${replyText(result.reply)}`;
  return paint(colour, 'red', `error (${oneLine(error ?? 'no response')})`);
}

export function dispatchLine(result: DispatchResult, colour: boolean): string {
  const outcome = answerText(result, colour);
  return [oneLine(result.name), result.url === undefined ? '-' : shortUrl(result.url), outcome, `${Math.round(result.durationMs)} ms`].join(
    '  ',
  );
}

/**
 * Messages are printed on one line: output is read line by line, by people and by scripts. Other
 * control characters (terminal escape sequences in a sender's field) are shown as U+FFFD, never
 * passed to the terminal.
 */
export function oneLine(text: string): string {
  return (
    text
      .replace(/\s*[\r\n]+\s*/g, ' ')
      .replace(/\t/g, ' ')
      // eslint-disable-next-line no-control-regex -- control characters are exactly what it removes
      .replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd')
  );
}

export function verifiedLine(secretIndex: number, keyCount: number, timestamp: number, nowSeconds: number): string {
  const skew = nowSeconds - timestamp;
  const when = skew >= 0 ? `signed ${skew} s ago` : `signed ${-skew} s in the future`;
  return `ok: signature verified with secret #${secretIndex + 1} of ${keyCount} (secretIndex ${secretIndex}); ${when} (t=${timestamp})`;
}

/** A duration for people: "850 ms", "42 s", "4 min 12 s", "3 h 5 min", "2 d 4 h". */
export function formatAge(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}
