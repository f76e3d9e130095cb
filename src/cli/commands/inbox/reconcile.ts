import { createRackClient, type RackClient } from '../../../rack-api/client.js';
import { createNodeRackFetch } from '../../../rack-api/node-fetch.js';
import { reconcile } from '../../../reconcile/reconcile.js';
import { recordable } from '../../../reconcile/record.js';
import type { ReconcileGap, ReconcileReport } from '../../../reconcile/types.js';
import { flagsHelp, readUserFile, stringFlag, UsageError, type FlagDeclarations, type Flags } from '../../args.js';
import type { Command } from '../../command.js';
import { oneLine } from '../../format.js';
import { DATABASE_FLAGS, notifyWorkers, withInbox } from '../../inbox-session.js';
import { jsonLine } from './render.js';

/** The environment variable a token may come from when neither the URL nor --rack-token-file gives one. */
export const TOKEN_VARIABLE = 'RACK_TOKEN';
const TOKEN_FILE_LIMIT_BYTES = 64 * 1024;
const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** A token lapsing within this is announced on every run, so that a scheduled reconcile does not start failing unannounced. */
const EXPIRY_WARNING_MS = 7 * 86_400_000;

const FLAGS = {
  ...DATABASE_FLAGS,
  rack: {
    type: 'string',
    value: 'URL',
    help: `the rack's API, https://api.<domain>; may carry the token as
https://jwt:<token>@api.<domain> (it then shows in ps and shell history)`,
  },
  'rack-token-file': { type: 'string', value: 'F', help: `a file holding a read token (else $${TOKEN_VARIABLE}, else the URL's)` },
  'rack-ca-file': { type: 'string', value: 'F', help: "PEM CA(s) to verify the rack's certificate with, instead of the system's" },
  'rack-insecure': {
    type: 'boolean',
    help: `do not verify the rack's certificate (self-signed local/metal racks);
prints a warning on every run`,
  },
  since: { type: 'string', value: 'D', help: 'the window: 30m, 24h (default), 7d, or an RFC 3339 time' },
  app: { type: 'string', multiple: true, value: 'NAME', help: 'only this app (repeat for several; default every app)' },
  json: { type: 'boolean', help: 'one JSON object per missing event per line (action, app, id, evidence)' },
  record: {
    type: 'boolean',
    help: `store each missing event as a reconstructed delivery (origin reconciled,
unsigned): the app's workers run its handlers once`,
  },
} as const satisfies FlagDeclarations;

function sinceFlag(flags: Flags, now: number): Date {
  const text = stringFlag(flags, 'since') ?? '24h';
  const duration = /^(\d{1,6})([smhd])$/.exec(text);
  if (duration !== null) return new Date(now - Number(duration[1]) * UNITS[duration[2]!]!);
  const ms = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms))
    throw new UsageError(`--since must be a duration such as 24h, 30m or 7d, or an RFC 3339 time, got ${JSON.stringify(text)}`);
  if (ms > now) throw new UsageError('--since is in the future');
  return new Date(ms);
}

function tokenOf(flags: Flags, env: NodeJS.ProcessEnv): string | undefined {
  const file = stringFlag(flags, 'rack-token-file');
  if (file !== undefined) {
    const token = readUserFile(file, '--rack-token-file', TOKEN_FILE_LIMIT_BYTES).toString('utf8').trim();
    if (token === '') throw new UsageError('--rack-token-file is empty');
    return token;
  }
  const fromEnv = env[TOKEN_VARIABLE]?.trim();
  return fromEnv === '' ? undefined : fromEnv;
}

function clientOf(flags: Flags, env: NodeJS.ProcessEnv): RackClient {
  const url = stringFlag(flags, 'rack');
  if (url === undefined) throw new UsageError('no rack: pass --rack https://api.<domain>');
  const caFile = stringFlag(flags, 'rack-ca-file');
  const insecure = flags['rack-insecure'] === true;
  if (caFile !== undefined && insecure) throw new UsageError('--rack-ca-file and --rack-insecure contradict each other: give one');
  const ca = caFile === undefined ? undefined : readUserFile(caFile, '--rack-ca-file', 1024 * 1024);
  let token = tokenOf(flags, env);
  // The URL's own credentials win over $RACK_TOKEN (set for another rack, say); a token file is explicit and must not contradict them.
  if (token !== undefined && stringFlag(flags, 'rack-token-file') === undefined && /^[a-z]+:\/\/[^/]*@/i.test(url)) token = undefined;
  if (insecure)
    process.stderr.write(
      `warning: --rack-insecure: the rack's TLS certificate is NOT verified; anyone on the path can read the token and forge answers\n`,
    );
  const client = createRackClient({
    url,
    ...(token === undefined ? {} : { token }),
    ...(ca === undefined && !insecure ? {} : { fetch: createNodeRackFetch({ ...(ca === undefined ? {} : { ca }), insecure }) }),
  });
  const expiresAt = client.token === undefined ? undefined : client.token.expiresAt * 1000;
  if (expiresAt !== undefined && expiresAt > Date.now() && expiresAt - Date.now() < EXPIRY_WARNING_MS)
    process.stderr.write(`warning: the rack token expires at ${new Date(expiresAt).toISOString()}: mint a new one before then\n`);
  return client;
}

function gapLine(gap: ReconcileGap, recording: boolean): string {
  const { route, field, value } = gap.evidence;
  const status = gap.status === undefined ? '' : ` (${gap.status})`;
  const line = `missing  ${gap.action}${status}  app=${gap.app}  id=${gap.id}  proof: GET ${route} ${field}=${value}`;
  if (!recording) return oneLine(line);
  if (gap.recorded !== undefined) return oneLine(`${line}  recorded as delivery ${gap.recorded.id} (reconciled)`);
  return oneLine(
    `${line}  not recorded: ${recordable(gap) ? 'a real delivery arrived meanwhile' : 'a late arrival could not be matched to it'}`,
  );
}

/** Cannot-tell, coverage and summary lines: for people, after the gaps. */
function noteLines(report: ReconcileReport, recording: boolean): string[] {
  const lines = report.cannotTell.map((item) =>
    oneLine(`cannot tell  ${item.action}  app=${item.app}${item.id === '' ? '' : `  id=${item.id}`}  ${item.reason}`),
  );
  for (const list of report.uncovered)
    lines.push(
      oneLine(`not covered  app=${list.app}  GET ${list.route} does not reach back to the window's start: older gaps cannot be looked for`),
    );
  const apps = `${report.apps.length} app${report.apps.length === 1 ? '' : 's'}`;
  const recorded = report.gaps.filter((gap) => gap.recorded !== undefined).length;
  const stored = recording ? `, ${recorded} recorded` : '';
  lines.push(
    `${report.gaps.length} missing${stored}, ${report.cannotTell.length} cannot tell, ${apps}, since ${report.since.toISOString()}`,
  );
  return lines;
}

export const reconcileCommand: Command = {
  name: 'reconcile',
  summary: "which events the rack sent that the inbox does not hold, from the rack's read API",
  help: `Usage: rack-webhooks inbox reconcile --database D --rack URL [--rack-token-file F] [--since 24h] [--app NAME]... [--json] [--record]

Reads the rack's API (apps, builds, releases, budgets, auto-shutdown states; GETs only) and names
every event it proves the rack sent, or tried to send, in the window that the inbox does not hold:
release:create per release, build:create per finished build, app:budget:threshold and cap per
alert stamp, and the auto-shutdown events whose stamps are set (matched by tick_id). What the API
cannot prove either way (an app's creation, the promote history, a build that may be an import)
is printed as "cannot tell", never as missing. See docs/reconcile.md.

Read-only unless --record: each missing event is then stored in the inbox as a reconstructed
delivery (origin reconciled, no signature, a body built from the API's records), pending: the
app's workers run its handlers once (this command runs none). A late real arrival is stored as
its duplicate. Budget alerts are reported, not recorded.

The token: --rack-token-file, else $${TOKEN_VARIABLE}, else the URL's jwt:<token>@. Mint a read one
with the rack's CLI: rack access --role read --duration-in-hours 720.

Exit codes: 0 nothing missing; 1 something missing (recorded or not: a second run
finds the recorded ones held); 2 a usage, connection or authentication
error (one line on stderr).

${flagsHelp(FLAGS)}`,
  flags: FLAGS,
  async run(flags) {
    const record = flags['record'] === true;
    const since = sinceFlag(flags, Date.now());
    const apps = (flags['app'] as string[] | undefined) ?? [];
    let report: ReconcileReport;
    try {
      const client = clientOf(flags, process.env);
      report = await withInbox(flags, {}, async (session) => {
        const found = await reconcile(session.inbox, client, { since, apps, record });
        if (found.gaps.some((gap) => gap.recorded !== undefined)) await notifyWorkers(session);
        return found;
      });
    } catch (error) {
      if (error instanceof UsageError) throw error;
      process.stderr.write(`rack-webhooks inbox reconcile: ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
      return 2;
    }
    if (flags['json'] === true) {
      // The event's reconstructed data stays out of the line: it is what --record stores (inbox show <id>).
      process.stdout.write(report.gaps.map(({ data: _data, ...gap }) => `${jsonLine(gap)}\n`).join(''));
      process.stderr.write(
        noteLines(report, record)
          .map((line) => `${line}\n`)
          .join(''),
      );
    } else {
      process.stdout.write(
        [...report.gaps.map((gap) => gapLine(gap, record)), ...noteLines(report, record)].map((line) => `${line}\n`).join(''),
      );
    }
    return report.gaps.length > 0 ? 1 : 0;
  },
};
