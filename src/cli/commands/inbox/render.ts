/**
 * How stored deliveries are printed: a line each for people (every field from the sender passed
 * through oneLine), one JSON object each for scripts. The signature header is only ever in the
 * JSON of `show`; the human view says it is there and how long it is.
 */
import {
  attemptJson,
  type DeliveryAttempt,
  deliveryJson,
  type InboxStats,
  type StoredDelivery,
  type StoredDeliveryDetail,
} from '../../../inbox/facade/index.js';

export { deliveryJson };
import { formatAge, oneLine } from '../../format.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as text when it is UTF-8 (it is whenever it parsed as JSON), else undefined. */
export function bodyText(body: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(body);
  } catch {
    return undefined;
  }
}

/** `show --json`: everything `inbox.get()` gives, the raw body as text (or base64 when it is not UTF-8). */
export function detailJson(delivery: StoredDeliveryDetail): Record<string, unknown> {
  const text = bodyText(delivery.body);
  return {
    ...deliveryJson(delivery),
    signature: delivery.signature,
    ...(text === undefined ? { bodyBase64: Buffer.from(delivery.body).toString('base64') } : { body: text }),
    event: delivery.event ?? null,
    attemptLog: delivery.attemptLog.map(attemptJson),
  };
}

function table(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd(),
  );
}

/** `list`: a header and one aligned line per delivery. */
export function deliveryTable(deliveries: readonly StoredDelivery[]): string[] {
  // An ORIGIN column only on a page that holds a reconciled delivery (rebuilt from the rack's API, unsigned).
  const origin = deliveries.some((delivery) => delivery.origin === 'reconciled');
  const rows = deliveries.map((delivery) => [
    delivery.id,
    delivery.state,
    String(delivery.attempts),
    oneLine(delivery.eventTime),
    oneLine(delivery.action),
    delivery.app === null ? '-' : oneLine(delivery.app),
    ...(origin ? [delivery.origin] : []),
  ]);
  return table([['ID', 'STATE', 'ATTEMPTS', 'EVENT TIME', 'ACTION', 'APP', ...(origin ? ['ORIGIN'] : [])], ...rows]);
}

/** `show` of a reconciled delivery: what it is and what proves it, in place of the signature's facts. */
function reconciledFields(delivery: StoredDeliveryDetail): [string, string][] {
  const proof = delivery.evidence;
  return [
    ['origin', 'reconciled (unsigned, rebuilt from the rack API by inbox reconcile --record)'],
    ['evidence', proof === null ? '-' : oneLine(`GET ${proof.route} ${proof.field}=${proof.value} (at ${proof.at})`)],
  ];
}

function when(date: Date | null): string {
  return date === null ? '-' : date.toISOString();
}

/**
 * The event, indented. JSON.stringify escapes C0 controls but not DEL and the C1 range, which
 * some terminals act on (U+009B opens an escape sequence): those are escaped here too.
 */
export function prettyEvent(event: unknown): string {
  return escapeControls(JSON.stringify(event, null, 2));
}

/** One JSON document on one line (`--json`), with the same escapes. */
export function jsonLine(value: unknown): string {
  return escapeControls(JSON.stringify(value));
}

function escapeControls(json: string): string {
  return json.replace(/[\u007f-\u009f\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function attemptLine(attempt: DeliveryAttempt): string {
  const outcome = attempt.outcome ?? 'running';
  const thrownAs = attempt.errorClass === null ? '' : `${oneLine(attempt.errorClass)}: `;
  const error = attempt.error === null ? '' : `  ${thrownAs}${oneLine(attempt.error)}`;
  return `  #${attempt.attempt}  ${outcome.padEnd(9)}  ${oneLine(attempt.worker)}  ${when(attempt.startedAt)} -> ${when(attempt.finishedAt)}${error}`;
}

/** The stack of the latest attempt that has one, frame by frame (its first line repeats the message). */
function stackLines(attempts: readonly DeliveryAttempt[]): string[] {
  const last = [...attempts].reverse().find((attempt) => attempt.errorStack !== null);
  if (last === undefined) return [];
  const frames = last.errorStack!.split('\n').filter((line) => /^\s*at\s/.test(line));
  return frames.length === 0 ? [] : [`stack of attempt #${last.attempt}:`, ...frames.map((line) => `    ${oneLine(line.trim())}`)];
}

/** `show`: every fact about one delivery, then its attempts, then the event. */
export function deliveryDetail(delivery: StoredDeliveryDetail): string[] {
  const fields: [string, string][] = [
    ['state', delivery.state],
    ['action', oneLine(delivery.action)],
    ['app', delivery.app === null ? '-' : oneLine(delivery.app)],
    ['tick_id', delivery.tickId === null ? '-' : oneLine(delivery.tickId)],
    ...(delivery.duplicateOf === null
      ? []
      : [['duplicate of', `delivery ${delivery.duplicateOf} (the same event; no handler ran for this one)`] as [string, string]]),
    ['event time', oneLine(delivery.eventTime)],
    ['received at', when(delivery.receivedAt)],
    ...(delivery.origin === 'reconciled'
      ? reconciledFields(delivery)
      : ([
          ['signed at', `t=${delivery.signedAt} (${new Date(delivery.signedAt * 1000).toISOString()})`],
          ['secret', `#${delivery.secretIndex + 1} in the receiver's list (secretIndex ${delivery.secretIndex})`],
          // Only its length: the header is a valid signature of this body, and terminals end up in logs.
          ['signature', `present (${Buffer.byteLength(delivery.signature)} bytes)`],
        ] as [string, string][])),
    ['body', `${delivery.body.byteLength} bytes`],
    ['attempts', String(delivery.attempts)],
    // Only a pending delivery waits for a run; for the others run_at is a leftover.
    ...(delivery.state === 'pending' ? [['next run', when(delivery.runAt)] as [string, string]] : []),
    ['last error', delivery.lastError === null ? '-' : oneLine(delivery.lastError)],
    ['done at', when(delivery.doneAt)],
    ['replayed at', when(delivery.replayedAt)],
  ];
  const width = Math.max(...fields.map(([name]) => name.length));
  return [
    `delivery ${delivery.id}`,
    ...fields.map(([name, value]) => `  ${name.padEnd(width)}  ${value}`),
    delivery.attemptLog.length === 0 ? 'attempt log: none yet' : 'attempt log:',
    ...delivery.attemptLog.map(attemptLine),
    ...stackLines(delivery.attemptLog),
    delivery.event === undefined ? 'event: the stored body no longer parses' : 'event:',
    ...(delivery.event === undefined ? [] : prettyEvent(delivery.event).split('\n')),
  ];
}

/** `stats`: one count per line, then the age of the oldest pending delivery. */
export function statsLines(stats: InboxStats): string[] {
  const counts: [string, number][] = [
    ['pending', stats.pending],
    ['running', stats.running],
    ['done', stats.done],
    ['dead', stats.dead],
    ['ignored', stats.ignored],
    ['duplicate', stats.duplicate],
    ['total', stats.total],
  ];
  const width = Math.max(...counts.map(([name]) => name.length));
  const oldest =
    stats.oldestPendingAgeMs === null ? 'oldest pending: none' : `oldest pending: received ${formatAge(stats.oldestPendingAgeMs)} ago`;
  return [...counts.map(([name, count]) => `${name.padEnd(width)}  ${count}`), oldest];
}

/** "1 delivery", "3 deliveries". */
export function deliveries(count: number): string {
  return `${count} ${count === 1 ? 'delivery' : 'deliveries'}`;
}
