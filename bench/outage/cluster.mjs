// A PostgreSQL cluster of the bench's own (initdb into a temporary directory, its own port), so
// that a real stop and start never touch the shared server on 5432. initdb refuses root: as root,
// the binaries run as the `postgres` user.
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = process.env.BENCH_OUTAGE_PG_BIN ?? '/usr/lib/postgresql/15/bin';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export async function startOwnCluster() {
  const dir = mkdtempSync(join(tmpdir(), 'rack-webhooks-bench-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot)
    chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  const run = (bin, args) =>
    execFileSync(asRoot ? 'runuser' : join(BIN, bin), asRoot ? ['-u', 'postgres', '--', join(BIN, bin), ...args] : args, {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  const port = await freePort();
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-c port=${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir}`;
  const start = () => run('pg_ctl', ['start', '-D', data, '-w', '-l', join(dir, 'log'), '-o', options]);
  const stop = (mode) => run('pg_ctl', ['stop', '-D', data, '-w', '-m', mode]);
  start();
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    /** A real stop (`pg_ctl stop -m fast`: sessions get 57P01, then nothing listens). */
    stop() {
      stop('fast');
      running = false;
    },
    start() {
      start();
      running = true;
    },
    destroy() {
      try {
        if (running) stop('immediate');
      } finally {
        running = false;
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
