// Shared helpers for the project's own scripts (not shipped).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
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

/** Packs the package once into .tmp/pack and returns the tarball path. */
export function pack() {
  const dir = join(tmp, 'pack');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
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
 * Runs lanes of commands side by side, at most `concurrency` lanes at once; each lane's commands
 * run in order. A lane's output is held and printed whole when it ends, so the log reads as if
 * run one after the other. Rejects, after every started lane ends, naming each lane that failed.
 * lanes: [{ label, commands: [[command, args], ...] }]
 */
export async function runLanes(lanes, concurrency = availableParallelism()) {
  const failed = [];
  const queue = [...lanes];
  const runOne = (command, args) =>
    new Promise((resolve) => {
      const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
      const output = [];
      child.stdout.on('data', (chunk) => output.push(chunk));
      child.stderr.on('data', (chunk) => output.push(chunk));
      child.on('close', (code, signal) => resolve({ status: code ?? signal, output: Buffer.concat(output) }));
      child.on('error', (error) => resolve({ status: error.message, output: Buffer.concat(output) }));
    });
  const worker = async () => {
    for (let lane = queue.shift(); lane !== undefined; lane = queue.shift()) {
      const started = Date.now();
      const outputs = [];
      let status = 0;
      for (const [command, args] of lane.commands) {
        const result = await runOne(command, args);
        outputs.push(result.output);
        if (result.status !== 0) {
          status = `${command} ${args.join(' ')} exited with ${result.status}`;
          break;
        }
      }
      console.log(`--- ${lane.label} (${((Date.now() - started) / 1000).toFixed(1)} s)${status === 0 ? '' : ': FAILED'}`);
      process.stdout.write(Buffer.concat(outputs));
      if (status !== 0) failed.push(`${lane.label}: ${status}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, lanes.length) }, worker));
  if (failed.length > 0) throw new Error(failed.join('\n'));
}
