// One cold import, timed from inside a module that is already running (see cold-import.mjs).
// With `sign-verify`, the span also covers signing and verifying one body, the first work a
// receiver does. Prints the wall time and the process's CPU time (all threads), in milliseconds.
const [specifier, mode] = process.argv.slice(2);
const body = '{"action":"app:create","status":"success","timestamp":"2026-04-27T10:30:00Z","data":{"rack":"r","actor":"a"}}';
const firstSignature = {
  'rack-webhooks': async ({ sign, verify }) => verify(body, await sign(body, { secrets: 'k' }), { secrets: 'k' }),
  '@octokit/webhooks-methods': async ({ sign, verify }) => {
    if (!(await verify('k', body, await sign('k', body)))) throw new Error('octokit did not verify its own signature');
  },
};

const cpuBefore = process.cpuUsage();
const started = performance.now();
const module = await import(specifier);
if (mode === 'sign-verify') await firstSignature[specifier](module);
const wall = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
process.stdout.write(`${wall} ${(cpu.user + cpu.system) / 1000}`);
