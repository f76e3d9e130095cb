// The built package, installed from its tarball, imported as ESM and required as CommonJS on
// Node 20 (this machine), 22 and 24 (Node binaries from the npm registry via `npx -y node@N`).
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { installedConsumer, pack, root, run } from './lib.mjs';

const consumer = installedConsumer('smoke', pack());
for (const file of ['smoke.mjs', 'smoke.cjs']) copyFileSync(join(root, 'test/consumer', file), join(consumer, file));
const runtimes = [['node'], ['npx', '-y', 'node@22'], ['npx', '-y', 'node@24']];
for (const [command, ...args] of runtimes) {
  for (const file of ['smoke.mjs', 'smoke.cjs']) run(command, [...args, file], { cwd: consumer });
}
