// The packed package on the runtimes its core promises besides Node: Bun and Deno (binaries from
// the npm registry), and Node with node:crypto hidden, which takes the Web Crypto path that
// Workers and browsers use. (workerd itself runs the Worker example, in test/examples.)
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { installedConsumer, pack, root, run } from './lib.mjs';

const consumer = installedConsumer('smoke-edge', pack());
for (const file of ['smoke-edge.mjs', 'hide-node-crypto.mjs']) copyFileSync(join(root, 'test/consumer', file), join(consumer, file));

function firstExisting(label, candidates) {
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) throw new Error(`${label} binary not found (npm ci installs it): looked at ${candidates.join(', ')}`);
  return found;
}
// bun's postinstall moves its binary; without the postinstall it stays in the platform package.
const bun = firstExisting('bun', [join(root, 'node_modules/bun/bin/bun.exe'), join(root, 'node_modules/@oven/bun-linux-x64/bin/bun')]);
const deno = firstExisting('deno', [join(root, 'node_modules/@deno/linux-x64-glibc/deno'), join(root, 'node_modules/deno/deno')]);

run(bun, ['smoke-edge.mjs'], { cwd: consumer });
run(deno, ['run', '--node-modules-dir=manual', '--no-remote', '--cached-only', '--no-lock', '--quiet', 'smoke-edge.mjs'], {
  cwd: consumer,
  env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', DENO_DIR: join(consumer, '.deno-dir') },
});
run('node', ['hide-node-crypto.mjs'], { cwd: consumer });
