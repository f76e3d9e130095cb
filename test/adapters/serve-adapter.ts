// Run in its own process by close-413.test.ts: one adapter's server, its URL on stdout.
import { createReceiver } from '../../src/index.js';
import { adapters } from './servers.js';

const [name, limit] = process.argv.slice(2);
const server = await adapters[name!]!(createReceiver({ secrets: 'close-413-secret', dedup: false }), { maxBodyBytes: Number(limit) });
process.stdout.write(`${server.url}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
