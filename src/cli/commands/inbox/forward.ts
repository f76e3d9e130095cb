/** `inbox forward`: a deployed inbox's real deliveries, re-signed and posted to a receiver on this machine. */
import { followInbox, type FollowResult, holdOneConnection, startCursor } from '../../../inbox/facade/index.js';
import { DEFAULT_HEADER_NAME } from '../../../receiver/create-receiver.js';
import { MAX_SIGNING_SECRETS } from '../../../signature/limits.js';
import { describeThrown } from '../../../shared/thrown.js';
import {
  HEADER_NAME_FLAG,
  KEY_FLAGS,
  UsageError,
  flagsHelp,
  headerNameFlag,
  httpUrlProblem,
  signingKeys,
  stringFlag,
  type FlagDeclarations,
  type Flags,
} from '../../args.js';
import type { Command } from '../../command.js';
import { colourEnabled, shortUrl } from '../../format.js';
import { DATABASE_FLAGS, databaseFailure, tableNames, targetFlag } from '../../inbox-session.js';
import { openDatabase } from '../../open-database.js';
import { FILTER_FLAGS, filterFromFlags, momentFlag } from './filter-flags.js';
import { createForwarder, RETRY_DELAYS_MS } from './forward-post.js';

const FLAGS = {
  ...DATABASE_FLAGS,
  to: { type: 'string', value: 'U', help: 'the local receiver to post to (http://localhost:3000/webhooks)' },
  ...KEY_FLAGS,
  'header-name': {
    ...HEADER_NAME_FLAG['header-name'],
    help: `the signature header the local receiver reads (default ${DEFAULT_HEADER_NAME})`,
  },
  action: FILTER_FLAGS.action,
  app: FILTER_FLAGS.app,
  state: { ...FILTER_FLAGS.state, help: `${FILTER_FLAGS.state.help}\n(the state when forward reads the delivery)` },
  since: {
    type: 'string',
    value: 'T',
    help: `first forward the deliveries stored since T: an age (30m, 12h, 2d), a date
(2026-11-23, UTC) or an RFC 3339 time; then follow`,
  },
  'from-id': { type: 'string', value: 'N', help: 'first forward the deliveries from id N on (what the last run printed); then follow' },
  once: { type: 'boolean', help: 'forward what --since or --from-id selects, then exit instead of following' },
  'stop-on-error': {
    type: 'boolean',
    help: `stop at the first delivery the local receiver does not answer 2xx (after the
retries); without it the line is printed and forwarding goes on`,
  },
} as const satisfies FlagDeclarations;

function toFlag(flags: Flags): string {
  const to = stringFlag(flags, 'to');
  if (to === undefined) throw new UsageError('no receiver: pass --to http://localhost:3000/webhooks');
  const problem = httpUrlProblem(to);
  if (problem !== undefined) throw new UsageError(`--to must be an http:// or https:// URL, but ${problem}`);
  return to;
}

function fromIdFlag(flags: Flags): bigint | undefined {
  const text = stringFlag(flags, 'from-id');
  if (text === undefined) return undefined;
  // Not echoed, as no stray argument is: it may be a key pasted in the wrong place.
  if (!/^[1-9][0-9]{0,18}$/.test(text) || BigInt(text) > 2n ** 63n - 1n)
    throw new UsageError('--from-id must be a delivery id, a positive whole number (as the last run printed)');
  return BigInt(text);
}

/** The flags checked before the database is opened: every mistake is one line, exit 2. */
function readFlags(flags: Flags, now: number) {
  const to = toFlag(flags);
  const { keys, encoding } = signingKeys(flags, process.env);
  if (keys.length > MAX_SIGNING_SECRETS)
    throw new UsageError(`at most ${MAX_SIGNING_SECRETS} keys: a receiver reads no more signatures than that`);
  const headerName = headerNameFlag(flags);
  // Only these three: --to here is the receiver, not the list commands' event-time bound.
  const filter = filterFromFlags({ state: flags['state'], action: flags['action'], app: flags['app'] }, now);
  const fromId = fromIdFlag(flags);
  const since = momentFlag(flags, 'since', now);
  if (fromId !== undefined && since !== undefined) throw new UsageError('pass --since or --from-id, not both');
  const once = flags['once'] === true;
  if (once && fromId === undefined && since === undefined)
    throw new UsageError('--once forwards history: say from where with --since T or --from-id N');
  return { to, keys, encoding, headerName, filter, fromId, since, once, stopOnError: flags['stop-on-error'] === true };
}

function summary(result: FollowResult): string {
  const what =
    result.forwarded === 0
      ? 'forwarded no delivery'
      : `forwarded ${result.forwarded} deliver${result.forwarded === 1 ? 'y' : 'ies'}, the last id ${result.lastId}`;
  const gaveUp = result.failed === 0 ? '' : `; gave up on ${result.failed}, the first id ${result.firstFailedId}`;
  return `${what}${gaveUp}; continue with --from-id ${result.resumeFrom}`;
}

export const forward: Command = {
  name: 'forward',
  summary: "post an inbox's real deliveries, signed with a local key, to a receiver on this machine",
  help: `Usage: rack-webhooks inbox forward --database D --to http://localhost:3000/webhooks --key K
       rack-webhooks inbox forward --database D --to U --since 2h --action app:budget:* --once

Follows an inbox (a deployed receiver's: every real delivery it stored) and posts each delivery's
exact body to --to, signed again with the local key, under the header the local receiver reads:
the production key never leaves production. Deliveries go one at a time in the order they were
stored: those stored since --since or from --from-id first, then each new one as it is stored
(woken by the inbox's NOTIFY, with a poll each second). Prints one line per delivery: time, id,
action, app, the local answer and the time it took.

Read-only: it runs SELECTs and LISTEN on one connection, in batches of 200 rows, changes no row
and claims none, so a role with SELECT on the table is enough (docs/cli.md has the GRANT). The
local receiver's dedup answers a delivery sent twice "duplicate": sending is at least once.

A refused connection, a timeout or a 5xx is printed and retried ${RETRY_DELAYS_MS.length} times, after ${RETRY_DELAYS_MS.map((ms) => ms / 1000).join(', ')} s;
then it is given up and forwarding goes on (--stop-on-error stops instead). Ctrl-C stops after the
delivery in flight. On stopping it prints, on stderr, the last id forwarded, those given up, and the --from-id that
goes on from there (from the first one given up: it is sent again). Exits 0 when every delivery was answered 2xx, 1 otherwise or when the database failed.

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  async run(flags) {
    const options = readFlags(flags, Date.now());
    const target = targetFlag(flags, 'database');
    const names = tableNames(flags);
    const note = (line: string) => process.stderr.write(`rack-webhooks inbox forward: ${line}\n`);
    const database = await openDatabase(target, { create: false, poolSize: 1 });
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
    let held;
    try {
      held = await holdOneConnection(database.client, (text, params) => database.query(text, params));
      const after = await startCursor(held.source, names, {
        ...(options.fromId === undefined ? {} : { fromId: options.fromId }),
        ...(options.since === undefined ? {} : { since: options.since }),
      });
      const forwarder = createForwarder({
        to: options.to,
        keys: options.keys,
        secretEncoding: options.encoding,
        headerName: options.headerName,
        stopOnError: options.stopOnError,
        colour: colourEnabled(process.stdout, process.env),
        print: (line) => process.stdout.write(`${line}\n`),
        signal: stop.signal,
      });
      const result = await followInbox(
        held.source,
        {
          names,
          filter: options.filter,
          after,
          once: options.once,
          signal: stop.signal,
          onReady: () =>
            note(`forwarding deliveries from id ${after + 1n} of ${names.display} at ${target.shown} to ${shortUrl(options.to)}`),
          onListenRefused: (error) => note(`cannot LISTEN (${describeThrown(error)}): polling each second instead`),
          onGone: (id) => note(`id ${id} was pruned before its turn: skipped`),
        },
        (delivery) => forwarder.forward(delivery),
      );
      note(summary(result));
      if (result.error !== undefined) throw databaseFailure(result.error, target, names);
      return result.stoppedBy === 'forward' || forwarder.failures > 0 ? 1 : 0;
    } catch (error) {
      throw databaseFailure(error, target, names);
    } finally {
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
      held?.release();
      await database.close().catch(() => {});
    }
  },
};
