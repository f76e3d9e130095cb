// `npm run demo` (after a build): starts examples/express.mjs with a fresh key, sends it signed
// deliveries of the three on-call actions, then an unsigned, a forged and a replayed copy, and
// prints what came back. Then the inbox on PGlite (scripts/demo-inbox.mjs): stored, deduplicated,
// retried, replayed. Exits 0 only when every answer and step is the expected one. Never prints the key.
// `npm run demo -- --console` then keeps that inbox and opens `rack-webhooks console` on it until Ctrl-C.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runInboxDemo } from './demo-inbox.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

let signSync;
try {
  ({ signSync } = await import('rack-webhooks'));
} catch (error) {
  console.error(`demo: cannot load rack-webhooks (${error.code ?? error.message}); build it first: npm run build`);
  process.exit(1);
}

const key = randomBytes(32).toString('hex'); // the spec's recommended key: 32 random bytes, hex
const redact = (text) => text.split(key).join('<key>'); // belt and braces: nothing printed holds it

const child = spawn(process.execPath, ['examples/express.mjs'], {
  cwd: root,
  env: { ...process.env, RACK_WEBHOOK_SECRETS: key, PORT: '0', HOST: '127.0.0.1' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let stdout = '';
let stderr = '';
child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

async function stop() {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

function fail(message) {
  console.error(`demo: ${message}`);
  if (stderr.trim() !== '') console.error(redact(stderr.trim()).replace(/^/gm, '  '));
  return stop().then(() => process.exit(1));
}

const url = await new Promise((resolve) => {
  const timer = setTimeout(() => resolve(undefined), 10_000);
  const check = () => {
    const match = /^listening on (http:\/\/\S+)$/m.exec(stdout);
    if (match) {
      clearTimeout(timer);
      child.stdout.off('data', check);
      resolve(match[1]);
    }
  };
  child.stdout.on('data', check);
  exited.then(() => {
    clearTimeout(timer);
    resolve(undefined);
  });
});
if (url === undefined) await fail('examples/express.mjs did not start listening within 10 s');

const fixture = (name) =>
  JSON.stringify(JSON.parse(readFileSync(new URL(`../test/fixtures/events/${name}.json`, import.meta.url), 'utf8')));
const now = Math.floor(Date.now() / 1000);
const signed = (body) => ({ body, signature: signSync(body, { secrets: key, timestamp: now }) });

const fired = signed(fixture('app.budget.auto-shutdown.fired'));
const failed = signed(fixture('app.budget.auto-shutdown.failed'));
const cap = signed(fixture('app.budget.cap'));

const deliveries = [
  { name: 'fired', ...fired, expected: [200, 'processed'] },
  { name: 'failed', ...failed, expected: [200, 'processed'] },
  { name: 'cap', ...cap, expected: [200, 'processed'] },
  { name: 'unsigned', body: fired.body, signature: undefined, expected: [401, 'missing_header'] },
  {
    name: 'forged',
    body: fired.body.replace('"billing-api"', '"payments-api"'),
    signature: fired.signature,
    expected: [401, 'signature_mismatch'],
  },
  { name: 'replayed', ...fired, expected: [200, 'duplicate'] }, // the fired delivery again, byte for byte
];

const rows = [];
for (const delivery of deliveries) {
  let got;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(delivery.signature ? { 'service-signature': delivery.signature } : {}) },
      body: delivery.body,
    });
    const text = await response.text();
    let answer;
    try {
      const json = JSON.parse(text);
      answer = json.status ?? json.error ?? text;
    } catch {
      answer = text.slice(0, 40) || '(empty body)';
    }
    got = [response.status, answer];
  } catch (error) {
    got = ['---', error.cause?.code ?? error.message];
  }
  const ok = got[0] === delivery.expected[0] && got[1] === delivery.expected[1];
  rows.push([delivery.name, delivery.expected.join(' '), got.join(' '), ok ? 'ok' : 'FAIL']);
}

// Give the child a moment to flush its last lines, then stop it.
await new Promise((resolve) => setTimeout(resolve, 100));
await stop();

const table = [['delivery', 'expected', 'got', 'result'], ...rows];
const widths = table[0].map((_, column) => Math.max(...table.map((row) => String(row[column]).length)));
console.log(`rack-webhooks demo: examples/express.mjs on ${url}, signing key: 32 random bytes (not printed)\n`);
for (const row of table)
  console.log(
    row
      .map((cell, column) => String(cell).padEnd(widths[column]))
      .join('  ')
      .trimEnd(),
  );

const printed = stdout.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('listening on '));
if (printed.length > 0) {
  console.log('\nthe receiver printed:');
  for (const line of printed) console.log(`  ${redact(line)}`);
}
const failures = rows.filter((row) => row[3] !== 'ok').length;
console.log(
  failures === 0
    ? '\nevery delivery got the expected answer'
    : `\n${failures} deliver${failures === 1 ? 'y' : 'ies'} did not get the expected answer`,
);
if (failures > 0 && stderr.trim() !== '') console.error(redact(stderr.trim()));

if (!process.argv.includes('--console')) {
  const inboxProblems = await runInboxDemo();
  // No process.exit: the demo ends because nothing is left running (server, worker, PGlite).
  process.exitCode = failures === 0 && inboxProblems === 0 ? 0 : 1;
} else {
  // --console: the demo's PGlite inbox stays, and the console opens on it until Ctrl-C.
  const { problems, directory } = await runInboxDemo({ keep: true });
  if (failures > 0 || problems > 0) {
    rmSync(directory, { recursive: true, force: true });
    process.exit(1);
  }
  console.log(`\nthe demo's inbox stays in ${directory} while the console runs; Ctrl-C stops it and removes the directory\n`);
  // Its own process group, so Ctrl-C reaches it once, from here (the console takes a second Ctrl-C
  // as "quit at once"); the demo then waits for it to close PGlite before removing the directory.
  const consoleProcess = spawn(process.execPath, ['dist/cli.js', 'console', '--database', directory], {
    cwd: root,
    stdio: 'inherit',
    detached: true,
  });
  const forward = () => consoleProcess.kill('SIGINT');
  process.on('SIGINT', forward).on('SIGTERM', forward);
  const code = await new Promise((resolve) => consoleProcess.once('exit', (exitCode) => resolve(exitCode ?? 1)));
  rmSync(directory, { recursive: true, force: true });
  process.exitCode = code;
}
