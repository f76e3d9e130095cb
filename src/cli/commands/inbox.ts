import type { CommandGroup } from '../command.js';
import { prune, replay, retry } from './inbox/change.js';
import { exportCommand } from './inbox/export.js';
import { forward } from './inbox/forward.js';
import { health } from './inbox/health.js';
import { importCommand } from './inbox/import.js';
import { list } from './inbox/list.js';
import { migrate } from './inbox/migrate.js';
import { reconcileCommand } from './inbox/reconcile.js';
import { show } from './inbox/show.js';
import { stats } from './inbox/stats.js';

const SUBCOMMANDS = [list, show, stats, health, retry, replay, prune, exportCommand, importCommand, migrate, forward, reconcileCommand];
const width = Math.max(...SUBCOMMANDS.map((command) => command.name.length));

export const inbox: CommandGroup = {
  name: 'inbox',
  summary: 'operate a durable inbox: list, show, stats, health, retry, replay, prune, export, import, migrate, forward, reconcile',
  help: `Usage: rack-webhooks inbox <subcommand> --database <postgres:// URL | PGlite directory> [--table T] [flags]

Operates the inbox that rack-webhooks/inbox (createInbox) and listen --inbox store deliveries in.

${SUBCOMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`).join('\n')}

Run "rack-webhooks inbox <subcommand> --help" for its flags. A postgres:// URL needs
npm install pg; a PGlite directory needs npm install @electric-sql/pglite. Exit codes: 0 ok,
1 the database failed (or, for import, a delivery was rejected), 2 usage error; health has its own
(0 healthy, 1 unhealthy, 2 could not check), and so has reconcile (0 nothing missing, 1 missing,
2 could not check).`,
  subcommands: SUBCOMMANDS,
};
