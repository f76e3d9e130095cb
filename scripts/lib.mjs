// Shared helpers for the project's own scripts (not shipped).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const tmp = join(root, '.tmp');

/** Runs a command, streaming its output; throws with the command line when it fails. */
export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', cwd: root, ...options });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`);
  }
}

/**
 * Packs the package once into .tmp/pack and returns the tarball path: dist/ as it stands (the build
 * the tests ran against), so without the `prepack` build, which `npm pack` runs on a clone.
 */
export function pack() {
  const dir = join(tmp, 'pack');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', dir], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error('npm pack produced no tarball');
  return join(dir, tarball);
}

/** A scratch project with the packed tarball installed, as a user would have it. */
export function installedConsumer(name, tarball, extraPackages = []) {
  const dir = join(tmp, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('npm', ['init', '-y'], { cwd: dir, stdio: 'ignore' });
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', tarball, ...extraPackages], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return dir;
}

/**
 * Starts lanes of commands in the background, at most `concurrency` lanes at once; each lane's
 * commands run in order, and a lane runs only once every lane its `after` names has passed (it is
 * not run when one failed). Each command starts at `priority` (a nice value: 10 lets the tests
 * beside it have the CPU when they want it) and keeps it for whatever it spawns. A lane's output
 * is held and handed over whole, so a log reads as if the lanes ran one after the other.
 * lanes: [{ label, commands: [[command, args, env?], ...], after?: [label, ...] }]
 * Resolves, once every lane ended, to [{ label, status (0 when it passed), seconds, output }] in
 * the lanes' order; `onEnd(result)` is called as each lane ends.
 */
export async function startLanes(lanes, { concurrency = availableParallelism(), priority = 0, onEnd = () => {} } = {}) {
  const runOne = (command, args, env) =>
    new Promise((resolve) => {
      const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      // Set before the child can spawn anything, so its own children inherit it.
      if (priority !== 0 && child.pid !== undefined) setPriority(child.pid, priority);
      const output = [];
      child.stdout.on('data', (chunk) => output.push(chunk));
      child.stderr.on('data', (chunk) => output.push(chunk));
      child.on('close', (code, signal) => resolve({ status: code ?? signal, output: Buffer.concat(output) }));
      child.on('error', (error) => resolve({ status: error.message, output: Buffer.concat(output) }));
    });
  const results = new Map();
  let laneEnded = deferred();
  const runLane = async (lane) => {
    const failedBefore = (lane.after ?? []).filter((label) => results.get(label).status !== 0);
    const started = Date.now();
    const outputs = [];
    let status = failedBefore.length > 0 ? `not run: ${failedBefore.join(', ')} failed` : 0;
    for (const [command, args, env] of status === 0 ? lane.commands : []) {
      const result = await runOne(command, args, env);
      outputs.push(result.output);
      if (result.status !== 0) {
        status = `${[command, ...args].join(' ')} exited with ${result.status}`;
        break;
      }
    }
    const result = { label: lane.label, status, seconds: (Date.now() - started) / 1000, output: Buffer.concat(outputs) };
    results.set(lane.label, result);
    onEnd(result);
    laneEnded.resolve();
    laneEnded = deferred();
  };
  // Each slot takes the first lane whose `after` lanes have ended; a lane still waiting holds no slot.
  const waiting = [...lanes];
  const slot = async () => {
    while (waiting.length > 0) {
      const next = waiting.findIndex((lane) => (lane.after ?? []).every((label) => results.has(label)));
      if (next === -1) await laneEnded.promise;
      else await runLane(waiting.splice(next, 1)[0]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, lanes.length) }, slot));
  return lanes.map((lane) => results.get(lane.label));
}

function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}
