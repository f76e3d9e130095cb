/** The three commands that change rows: retry (dead -> pending), replay (done -> pending), prune. */
import type { DeliveryFilter } from '../../../inbox/facade/index.js';
import { UsageError, flagsHelp, type FlagDeclarations, type Flags } from '../../args.js';
import type { Command } from '../../command.js';
import { beforeFlag, filterFlagsFor, filterFromFlags, idArgument, isEmptyFilter } from './filter-flags.js';
import { deliveries } from './render.js';
import { liveWorkers } from '../../../console/server/api/workers.js';
import { DATABASE_FLAGS, notifyWorkers, withInbox, type InboxSession } from '../../inbox-session.js';

/**
 * What moved runs only when a worker does: with no live worker (no heartbeat), say so, as the
 * console does, or the operator waits for something that never happens. Undefined otherwise.
 */
async function noWorkerNote(session: InboxSession, moved: number): Promise<string | undefined> {
  if (moved === 0 || (await liveWorkers(session.monitor)) !== 0) return undefined;
  return `note: no worker is running, so nothing runs ${moved === 1 ? 'it' : 'them'} until one starts (inbox.work(receiver) in your app)\n`;
}

/**
 * Runs a move, wakes the workers of other processes when rows moved, and notes when no worker
 * runs. A delivery named by id that did not move is an error naming the state it is in.
 */
async function moveRows(
  session: InboxSession,
  id: string | undefined,
  move: () => Promise<number>,
  notMoved: (state: string) => string,
): Promise<{ moved: number; note: string | undefined }> {
  const moved = await move();
  if (moved > 0) await notifyWorkers(session);
  const note = await noWorkerNote(session, moved);
  if (moved === 0 && id !== undefined) {
    const delivery = await session.operator.get(id);
    if (delivery === undefined) throw new Error(`no delivery with id ${id}`);
    throw new Error(`delivery ${id} is ${delivery.state}, ${notMoved(delivery.state)}`);
  }
  return { moved, note };
}

/**
 * The filter for a bulk change: at least one filter flag, or --all, so a forgotten flag never
 * requeues the whole table. --state may only name the one state the command moves.
 */
function bulkFilter(flags: Flags, command: 'retry' | 'replay', from: 'dead' | 'done'): DeliveryFilter {
  const filter = filterFromFlags(flags);
  const states = filter.state === undefined ? [] : [filter.state].flat();
  // retry also moves duplicates, but only when --state duplicate names them.
  const allowed: readonly string[] = command === 'retry' ? ['dead', 'duplicate'] : [from];
  if (states.some((state) => !allowed.includes(state)))
    throw new UsageError(
      `${command} moves ${allowed.join(' and ')} deliveries only: leave out --state, or pass --state ${allowed.join(' or ')}`,
    );
  if (!states.includes('duplicate')) delete filter.state; // the inbox narrows to `from` itself
  if (isEmptyFilter(filter) && states.length === 0 && flags['all'] !== true) {
    throw new UsageError(`say which deliveries: pass filter flags (--action, --app, --from, --to), or --all for every ${from} one`);
  }
  return filter;
}

/** The one delivery a command names by id, or the many its filter flags name (`filter`): never both. */
function target(
  flags: Flags,
  positionals: readonly string[],
  command: 'retry' | 'replay',
  from: 'dead' | 'done',
): { id: string; filter: undefined } | { id: undefined; filter: DeliveryFilter } {
  if (positionals[0] === undefined) return { id: undefined, filter: bulkFilter(flags, command, from) };
  const id = idArgument(positionals[0], `rack-webhooks inbox ${command} <id> --database D`);
  if (!isEmptyFilter(filterFromFlags(flags)) || flags['all'] === true) throw new UsageError('pass an id or filter flags, not both');
  return { id, filter: undefined };
}

/** A move's flags: the database, the filter flags (--state naming only what it moves), and --all. */
function moveFlags(from: 'dead' | 'done', stateHelp?: string) {
  return { ...DATABASE_FLAGS, ...filterFlagsFor(from, stateHelp), all: { type: 'boolean', help: `every ${from} delivery` } } as const;
}

const moveUsage = (command: 'retry' | 'replay') => `Usage: rack-webhooks inbox ${command} <id> --database D
       rack-webhooks inbox ${command} --database D (--action A | --app NAME | --from T | --to T ... | --all)`;

/** Prints what moved, then the note on workers, if any. */
function printMoved(line: string, note: string | undefined): number {
  process.stdout.write(`${line}\n`);
  if (note !== undefined) process.stderr.write(note);
  return 0;
}

const RETRY_FLAGS = moveFlags('dead', 'dead (the default) or duplicate') satisfies FlagDeclarations;

export const retry: Command = {
  name: 'retry',
  summary: 'dead deliveries back to pending, due now, with a fresh budget of attempts',
  help: `${moveUsage('retry')}

Moves dead deliveries (their handlers failed maxAttempts times) back to pending, due now, with a
fresh budget of attempts; your workers run them again. Prints how many moved. With an id, that
delivery must exist and be dead or duplicate (the same event as an earlier delivery, kept without
running its handlers); --state duplicate moves duplicates in bulk.

${flagsHelp(RETRY_FLAGS)}`,
  flags: RETRY_FLAGS,
  positionals: 1,
  async run(flags, positionals) {
    const { id, filter } = target(flags, positionals, 'retry', 'dead');
    // What the line says moved: the state the filter names, or the state the one delivery was in.
    let from = filter?.state === undefined ? 'dead' : [filter.state].flat().join(' or ');
    const { moved: count, note } = await withInbox(flags, {}, async (session) => {
      if (id !== undefined) from = (await session.operator.get(id))?.state === 'duplicate' ? 'duplicate' : 'dead';
      return moveRows(
        session,
        id,
        () => session.operator.retry(id ?? filter!),
        (state) => `not dead: retry moves dead and duplicate deliveries only${state === 'done' ? ' (replay runs done ones again)' : ''}`,
      );
    });
    return printMoved(`retried ${deliveries(count)} (${from} -> pending)`, note);
  },
};

const REPLAY_FLAGS = moveFlags('done') satisfies FlagDeclarations;

export const replay: Command = {
  name: 'replay',
  summary: 'done deliveries back to pending, to run their handlers again in event order',
  help: `${moveUsage('replay')}

Moves done deliveries back to pending, due now, so your workers run their handlers again in
event-time order (after a bug fix, or to rebuild a projection). Prints how many moved. With an id,
that delivery must exist and be done.

${flagsHelp(REPLAY_FLAGS)}`,
  flags: REPLAY_FLAGS,
  positionals: 1,
  async run(flags, positionals) {
    const { id, filter } = target(flags, positionals, 'replay', 'done');
    const { moved: count, note } = await withInbox(flags, {}, (session) =>
      moveRows(
        session,
        id,
        () => session.operator.replay(filter ?? { ids: [id!] }),
        (state) => `not done: replay moves done deliveries only${state === 'dead' ? ' (retry runs dead ones again)' : ''}`,
      ),
    );
    return printMoved(`replayed ${deliveries(count)} (done -> pending)`, note);
  },
};

const PRUNE_FLAGS = {
  ...DATABASE_FLAGS,
  before: { type: 'string', value: 'T', help: 'a date (UTC), an RFC 3339 time, or an age: 90s, 15m, 12h, 30d, 2w (ago)' },
} as const satisfies FlagDeclarations;

export const prune: Command = {
  name: 'prune',
  summary: 'delete done, dead, ignored and duplicate deliveries received before a date',
  help: `Usage: rack-webhooks inbox prune --before (2026-01-01 | 2026-01-01T00:00:00Z | 30d) --database D

Deletes done, dead, ignored and duplicate deliveries (and their attempts) received before
--before; never a pending or running one. Prints how many it deleted. Export them first to keep a copy.

${flagsHelp(PRUNE_FLAGS)}`,
  flags: PRUNE_FLAGS,
  async run(flags) {
    const before = beforeFlag(flags, Date.now());
    const count = await withInbox(flags, {}, ({ operator }) => operator.prune({ before }));
    process.stdout.write(`pruned ${deliveries(count)} (done, dead, ignored or duplicate, received before ${before.toISOString()})\n`);
    return 0;
  },
};
