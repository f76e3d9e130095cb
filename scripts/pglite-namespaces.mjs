// Two apps in two PID namespaces (as two containers sharing a volume would be: each is pid 1 of its
// own, and neither sees the other's pid) store deliveries into one PGlite directory at the same
// time. One owns the directory, the other reaches it through the owner's socket. Afterwards every
// acknowledged delivery is there exactly once.
//
//   npm run build && node scripts/pglite-namespaces.mjs [deliveries per app, default 200]
//
// Needs Linux and `unshare` with the right to make PID namespaces (root, or user namespaces);
// prints what it measured and exits 1 on a lost or doubled row, 2 when it cannot run here.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SECRET = 'namespaces-demo-secret';

if (process.argv[2] === '--app') await app(process.argv[3], process.argv[4], Number(process.argv[5]));
else await main(Number(process.argv[2] ?? 200));

/** One app: opens the directory, stores `count` deliveries, says what was acknowledged, waits to be told to stop. */
async function app(dir, name, count) {
  const { createReceiver } = await import('rack-webhooks');
  const { createInbox, openPGlite } = await import('rack-webhooks/inbox');
  const { createSignedRequestSync } = await import('rack-webhooks/testing');
  const tell = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
  const database = await openPGlite(dir);
  tell({ role: database.role, pid: process.pid });
  const inbox = createInbox({ database });
  await inbox.migrate();
  const receiver = createReceiver({ secrets: SECRET, inbox });
  const acknowledged = [];
  for (let i = 0; i < count; i++) {
    const body = JSON.stringify({
      action: 'app:create',
      status: 'success',
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      data: { name: `${name}-${i}`, rack: 'r', actor: name },
    });
    const result = await receiver.receive(createSignedRequestSync(body, { secrets: SECRET }));
    if (result.outcome === 'accepted') acknowledged.push(`${name}-${i}`);
  }
  tell({ acknowledged });
  // Stay the owner (or a guest) until the parent has heard from both apps.
  await new Promise((resolve) => process.stdin.once('end', resolve).resume());
  await database.close();
}

async function main(count) {
  if (spawnSync('unshare', ['-p', '-f', '--mount-proc', 'true']).status !== 0) {
    console.error('cannot make PID namespaces here (unshare -p -f --mount-proc): run as root on Linux');
    process.exit(2);
  }
  const dir = join(mkdtempSync(join(tmpdir(), 'rwt-namespaces-')), 'inbox-data');
  const script = fileURLToPath(import.meta.url);
  const started = Date.now();
  const apps = ['left', 'right'].map((name) => {
    const child = spawn('unshare', ['-p', '-f', '--mount-proc', process.execPath, script, '--app', dir, name, String(count)], {
      stdio: ['pipe', 'pipe', 'inherit'],
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
    const messages = [];
    let pending = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop();
      for (const line of lines) messages.push(JSON.parse(line));
    });
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    return { name, child, messages, exited };
  });
  const heard = (entry, key) => entry.messages.find((message) => key in message);
  while (apps.some((entry) => heard(entry, 'acknowledged') === undefined)) {
    if (apps.some((entry) => entry.child.exitCode !== null)) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (const entry of apps) entry.child.stdin.end();
  const codes = await Promise.all(apps.map((entry) => entry.exited));

  const { PGlite } = await import('@electric-sql/pglite');
  const db = new PGlite(dir);
  const rows = (await db.query(`SELECT convert_from(body, 'UTF8')::json -> 'data' ->> 'name' AS name FROM rack_webhooks_inbox`)).rows;
  await db.close();
  rmSync(join(dir, '..'), { recursive: true, force: true });

  const acknowledged = apps.flatMap((entry) => heard(entry, 'acknowledged')?.acknowledged ?? []);
  const stored = rows.map((row) => row.name);
  const distinct = new Set(stored);
  const lost = acknowledged.filter((name) => !distinct.has(name));
  const roles = apps.map(
    (entry) => `${entry.name}: ${heard(entry, 'role')?.role ?? 'none'} (pid ${heard(entry, 'role')?.pid ?? '?'} in its namespace)`,
  );
  console.log(roles.join(', '));
  console.log(
    `acknowledged ${acknowledged.length}, rows ${stored.length}, distinct ${distinct.size}, lost ${lost.length}, ` +
      `doubled ${stored.length - distinct.size}, exit codes ${codes.join(' ')}, ${Date.now() - started} ms`,
  );
  const ok = codes.every((code) => code === 0) && acknowledged.length === 2 * count && lost.length === 0 && stored.length === distinct.size;
  console.log(ok ? 'ok: nothing lost, nothing doubled' : 'FAILED');
  process.exit(ok ? 0 : 1);
}
