// npm run bench: builds, then runs each group in a fresh Node process (so one group's heap does
// not tax the next), measuring every case against its floor in the same process.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const groups = {
  'cold-import': ['benchColdImport', './cold-import.mjs'],
  signature: ['benchSignature', './signature.mjs'],
  events: ['benchEvents', './events.mjs'],
  'memory-store': ['benchMemoryStore', './receiver.mjs'],
  receive: ['benchReceive', './receiver.mjs'],
  redis: ['benchRedis', './receiver.mjs'],
  inbox: ['benchInbox', './inbox.mjs'],
  state: ['benchState', './state.mjs'],
  worker: ['benchWorker', './worker.mjs'],
  'worker-order': ['benchWorkerOrder', './worker-order.mjs'],
  retention: ['benchRetention', './retention.mjs'],
};

const [, , only, child] = process.argv;
if (child === '--child') {
  const [exportName, file] = groups[only];
  const { [exportName]: run } = await import(file);
  const { ok } = await run();
  process.exitCode = ok ? 0 : 3;
} else {
  console.log(`# rack-webhooks benchmarks\n\nNode ${process.version}, ${process.platform}/${process.arch}, ${new Date().toISOString()}`);
  let ok = true;
  for (const name of Object.keys(groups).filter((g) => only === undefined || g.includes(only))) {
    const result = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), name, '--child'], { stdio: 'inherit' });
    if (result.status === 3) ok = false;
    else if (result.status !== 0) throw new Error(`benchmark group ${name} crashed`);
  }
  console.log(ok ? '\nAll bars met.' : '\nSome bars were missed (see MISS lines).');
}
