// Cold start: how long `await import(name)` takes in a fresh Node process, for rack-webhooks and
// for @octokit/webhooks-methods (the floor: a webhook verifier with nothing else in it; both load
// node:crypto). Many fresh processes, the packages alternating, so machine noise hits all alike;
// the median of each is kept. Node's own start-up is outside the timed span, which opens in a
// module that is already running (the ESM loader is warm for every case), so only the package's
// own load is timed. The CPU time column is steadier than the wall time on a busy machine.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { checkBar } from './harness.mjs';

const CHILD = fileURLToPath(new URL('./cold-import-child.mjs', import.meta.url));

const cases = [
  { name: 'floor: @octokit/webhooks-methods', specifier: '@octokit/webhooks-methods' },
  { name: 'rack-webhooks', specifier: 'rack-webhooks' },
  { name: 'rack-webhooks/web', specifier: 'rack-webhooks/web' },
  { name: 'rack-webhooks/validate (opting in to validation)', specifier: 'rack-webhooks/validate' },
  // node:crypto is loaded on first use, not at import: these two rows show the whole cold start
  // of a receiver (import, then its first signature), where that cost lands. No bar.
  { name: '@octokit/webhooks-methods: import, sign, verify', specifier: '@octokit/webhooks-methods', mode: 'sign-verify' },
  { name: 'rack-webhooks: import, sign, verify', specifier: 'rack-webhooks', mode: 'sign-verify' },
];

const env = { ...process.env };
delete env.NODE_COMPILE_CACHE; // Node 22+ would reuse compiled code across processes: every import must be cold
delete env.NODE_OPTIONS;

function importOnce({ specifier, mode = 'import' }) {
  // Run from bench/, so 'rack-webhooks' resolves to this package's dist/ through its own "exports".
  const result = spawnSync(process.execPath, [CHILD, specifier, mode], { encoding: 'utf8', env });
  if (result.status !== 0) throw new Error(`importing ${specifier} failed: ${result.stderr}`);
  const [wall, cpu] = result.stdout.trim().split(' ').map(Number);
  return { wall, cpu };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function benchColdImport({ rounds = Number(process.env.BENCH_COLD_ROUNDS ?? 61) } = {}) {
  const samples = cases.map(() => ({ wall: [], cpu: [] }));
  for (let round = 0; round < rounds; round++) {
    // The order alternates too, so that no case always runs right after the same one.
    const order = cases.map((_, i) => (round % 2 === 0 ? i : cases.length - 1 - i));
    for (const i of order) {
      const { wall, cpu } = importOnce(cases[i]);
      samples[i].wall.push(wall);
      samples[i].cpu.push(cpu);
    }
  }
  const rows = cases.map((c, i) => ({ name: c.name, wall: median(samples[i].wall), cpu: median(samples[i].cpu) }));
  const [floor] = rows;
  console.log(`\n### Cold import in a fresh process (median of ${rounds} processes per case, interleaved)\n`);
  console.log('| import | wall ms | ratio to floor | CPU ms | CPU ratio |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [i, row] of rows.entries()) {
    // The sign-and-verify rows compare with the floor's own sign-and-verify row.
    const base = cases[i].mode === 'sign-verify' ? rows[4] : floor;
    console.log(
      `| ${row.name} | ${row.wall.toFixed(2)} | ${(row.wall / base.wall).toFixed(2)}x | ${row.cpu.toFixed(2)} | ${(row.cpu / base.cpu).toFixed(2)}x |`,
    );
  }
  const ok = checkBar("cold import('rack-webhooks') / import('@octokit/webhooks-methods'), wall time", rows[1].wall / floor.wall, 1.2);
  return { ok, results: rows };
}
