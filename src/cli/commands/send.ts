import { WEBHOOK_ACTIONS } from '../../generated/catalog.js';
import { createRackEmulator } from '../../testing/emulator.js';
import { rackTimestamp } from '../../testing/test-event.js';
import {
  HEADER_NAME_FLAG,
  INPUT_LIMIT_BYTES,
  KEY_FLAGS,
  UsageError,
  assertUsableKeys,
  flagsHelp,
  headerNameFlag,
  httpUrlProblem,
  readUserFile,
  resolveKeys,
  secretEncoding,
  stringFlag,
  timestampFlag,
  type FlagDeclarations,
  type Flags,
} from '../args.js';
import type { Command } from '../command.js';
import { eventFromFile, eventFromFlags, parseJsonFile } from '../event-source.js';
import { colourEnabled, dispatchLine } from '../format.js';

const note = (line: string) => process.stderr.write(`rack-webhooks send: ${line}\n`);

/** The rack's `webhooks` map: from --config (values as strings, or JSON objects for convenience), or one --url. */
function webhooksConfig(flags: Flags): Record<string, string> {
  const url = stringFlag(flags, 'url');
  const path = stringFlag(flags, 'config');
  if (url !== undefined && path !== undefined) throw new UsageError('pass --url or --config, not both');
  if (url !== undefined) {
    // A typo in --url is the caller's mistake (exit 2); a bad URL inside --config is skipped or
    // fails at dispatch, as on the rack.
    const problem = httpUrlProblem(url);
    if (problem !== undefined) throw new UsageError(`--url must be an http:// or https:// URL, but ${problem}`);
    return { [stringFlag(flags, 'name') ?? 'default']: url };
  }
  if (path === undefined) throw new UsageError('no receiver: pass --url U or --config webhooks.json');
  const config = parseJsonFile(readUserFile(path, '--config', INPUT_LIMIT_BYTES), '--config', path);
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new UsageError(`--config ${JSON.stringify(path)} must be a JSON object of name -> URL or JSON value`);
  }
  const entries = Object.entries(config).map(([name, value]): [string, string] => {
    if (typeof value === 'string') return [name, value];
    if (typeof value === 'object' && value !== null) return [name, JSON.stringify(value)];
    throw new UsageError(`--config entry ${JSON.stringify(name)} must be a string (a URL or JSON) or an object`);
  });
  if (entries.length === 0) throw new UsageError(`--config ${JSON.stringify(path)} has no receivers`);
  return Object.fromEntries(entries);
}

function eventToSend(flags: Flags): object | string | Uint8Array {
  if (stringFlag(flags, 'event') !== undefined && stringFlag(flags, 'file') !== undefined) {
    throw new UsageError('--event and --file are the same flag: pass one of them, once');
  }
  const raw = stringFlag(flags, 'body');
  if (raw !== undefined) {
    if (stringFlag(flags, 'event') !== undefined || stringFlag(flags, 'file') !== undefined || stringFlag(flags, 'action') !== undefined)
      throw new UsageError('--body is the whole body: it cannot be combined with --event, --file or --action');
    // Any bytes at all, JSON or not: a receiver's answer to a bad body is what is being tested.
    return new Uint8Array(readUserFile(raw, '--body', INPUT_LIMIT_BYTES));
  }
  const file = stringFlag(flags, 'event') ?? stringFlag(flags, 'file');
  const action = stringFlag(flags, 'action');
  const sets = (flags['set'] as string[] | undefined) ?? [];
  if (file !== undefined) {
    if (action !== undefined || sets.length > 0)
      throw new UsageError('--event is sent byte for byte: it cannot be combined with --action or --set');
    return eventFromFile(file, stringFlag(flags, 'event') === undefined ? '--file' : '--event');
  }
  if (action === undefined) throw new UsageError('nothing to send: pass --action A (a test event), --event file.json or --body file');
  if (flags['unknown-action'] === true) return unknownActionEvent(action, sets);
  try {
    return eventFromFlags(action, sets, note);
  } catch (error) {
    if (error instanceof UsageError && error.message.startsWith('unknown action'))
      throw new UsageError(`${error.message}; --unknown-action sends it anyway, as a newer rack would`);
    throw error;
  }
}

/**
 * An action the catalog does not have, as a newer rack could send it: the envelope (action,
 * status `success` unless set, timestamp) and the --set data fields, strings as every rack value.
 */
function unknownActionEvent(action: string, sets: readonly string[]): object {
  if (!/^[a-z0-9][a-z0-9_.-]*(:[a-z0-9][a-z0-9_.-]*)+$/.test(action))
    throw new UsageError('--action must look like an action (lowercase words joined by ":", such as app:future:event)');
  if ((WEBHOOK_ACTIONS as readonly string[]).includes(action))
    throw new UsageError(`--unknown-action is for actions outside the catalog; ${JSON.stringify(action)} is in it (drop the flag)`);
  const event: { action: string; status: string; timestamp: string; data: Record<string, string> } = {
    action,
    status: 'success',
    timestamp: rackTimestamp(),
    data: {},
  };
  for (const assignment of sets) {
    const equals = assignment.indexOf('=');
    const name = equals === -1 ? assignment : assignment.slice(0, equals);
    if (equals === -1 || !/^(status|timestamp|data\.[^.]+)$/.test(name))
      throw new UsageError(`--set ${JSON.stringify(name)}: write status=VALUE, timestamp=VALUE or data.FIELD=VALUE`);
    const value = assignment.slice(equals + 1);
    if (name === 'status' || name === 'timestamp') event[name] = value;
    else event.data[name.slice('data.'.length)] = value;
  }
  return event;
}

const FLAGS = {
  url: { type: 'string', value: 'U', help: 'one receiver' },
  name: { type: 'string', value: 'N', help: 'its name in the output (default "default")' },
  config: {
    type: 'string',
    value: 'F',
    help: `the rack's webhooks map as JSON: {"name": "https://...", "other":
"{\\"url\\":\\"https://...\\",\\"timeout\\":\\"5s\\"}"}; bad entries are
skipped as the rack skips them`,
  },
  action: { type: 'string', value: 'A', help: 'send a realistic test event for this action (fresh timestamp, tick_id)' },
  set: { type: 'string', multiple: true, value: 'K=V', help: 'override status=..., timestamp=... or data.FIELD=... (repeatable)' },
  'unknown-action': {
    type: 'boolean',
    help: `send --action even though the catalog lacks it (a newer rack's action):
the envelope and the --set fields only`,
  },
  event: {
    type: 'string',
    value: 'F',
    help: `send this JSON file as the body, byte for byte (--file F: the same;
at most 16 MiB, as is --config)`,
  },
  file: { type: 'string', help: { in: 'event' } },
  body: { type: 'string', value: 'F', help: 'send this file as the body, byte for byte, JSON or not (a bad body)' },
  ...KEY_FLAGS,
  ...HEADER_NAME_FLAG,
  timestamp: { type: 'string', value: 'T', help: 'sign with this unix time instead of now (a stale delivery)' },
  verbose: { type: 'boolean', help: "print the rack's own log lines (skipped entries) on stderr" },
} as const satisfies FlagDeclarations;

export const send: Command = {
  name: 'send',
  summary: 'deliver a signed test event to receivers, as the rack does',
  help: `Usage: rack-webhooks send --url U --key K --action A [--set data.FIELD=VALUE ...]
       rack-webhooks send --config webhooks.json --event event.json

Dispatches one event the way the rack does: signed with every key (none: unsigned, as a rack
without webhook_signing_key), POSTed to every receiver at once, each with its own timeout, never
retried. Prints one line per receiver: name, url, HTTP status and the receiver's answer (its status,
or its error code and message), or why it was skipped, or the error, and the time taken. URLs are shown as the rack logs them, scheme://host[:port] and "/…"
when there is more: a path, query or user:pass@ may hold the receiver's credential. A user:pass@
in a URL (--url or --config) is sent as basic auth, as the rack does. Exits 0 only when every
receiver answered 2xx.

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  async run(flags) {
    const keys = resolveKeys(flags, process.env);
    const encoding = secretEncoding(flags);
    // The emulator, like the rack, trims each key and drops the empty ones; sign and verify refuse
    // an empty key (`a,,b`, `a,`), so send checks the keys it would sign with the same way.
    if (keys !== undefined)
      assertUsableKeys(
        keys.map((key) => key.trim()),
        encoding,
      );
    const timestamp = timestampFlag(flags);
    const headerName = headerNameFlag(flags);
    const webhooks = webhooksConfig(flags);
    const event = eventToSend(flags);
    if (keys === undefined)
      note('note: no key (--key, --key-file or RACK_WEBHOOK_SECRETS): sending unsigned, as a rack without webhook_signing_key does');
    const emulator = createRackEmulator({
      webhooks,
      ...(keys === undefined ? {} : { signingKeys: keys }),
      ...(headerName === undefined ? {} : { headerName }),
      secretEncoding: encoding,
      log: (line) => {
        if (flags['verbose'] === true) process.stderr.write(`${line}\n`);
      },
    });
    const results = await emulator.dispatch(event, timestamp === undefined ? {} : { timestamp });
    // A deployed rack (hex keys) sends unsigned when a key fails its checks: say so, never the key.
    const disabled = results.find((result) => result.signingDisabled !== undefined)?.signingDisabled;
    if (disabled !== undefined) note(`note: sent unsigned, as a deployed rack does with such keys (${disabled})`);
    const colour = colourEnabled(process.stdout, process.env);
    for (const result of results) process.stdout.write(`${dispatchLine(result, colour)}\n`);
    return results.every((result) => result.status !== undefined && result.status >= 200 && result.status < 300) ? 0 : 1;
  },
};
