/** Runs the built CLI as a real process: real stdin, stdout, stderr and exit codes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

const children = new Set<ChildProcess>();

/** For afterEach: no child outlives its test. */
export function killChildren(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
}

/** The parent's environment without anything that would change the CLI's behaviour. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  if (extra['RACK_WEBHOOK_SECRETS'] === undefined) delete env['RACK_WEBHOOK_SECRETS'];
  if (extra['NO_COLOR'] === undefined) delete env['NO_COLOR'];
  return env;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A usage error: exit 2 and exactly one line on stderr, `rack-webhooks <command>: <reason>`. */
export function expectUsageError(result: RunResult, pattern: RegExp): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.split('\n')).toHaveLength(2); // one line and its newline
  expect(result.stderr).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
}

export function run(
  args: readonly string[],
  options: { stdin?: string | Buffer; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RunResult> {
  const child = spawn(process.execPath, [CLI, ...args], { env: cleanEnv(options.env ?? {}), stdio: 'pipe' });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.on('error', () => {}); // a command that exits before reading stdin closes the pipe
  child.stdin.end(options.stdin ?? '');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`rack-webhooks ${args.join(' ')} did not exit within ${options.timeoutMs ?? 10_000} ms; stderr: ${stderr}`));
    }, options.timeoutMs ?? 10_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The CLI with stdin from a stream (an endless writer) or an open file descriptor (a directory):
 * what `cat /dev/zero |` and `< dir` hand it.
 */
export function runWithStdin(args: readonly string[], stdin: Readable | number, timeoutMs = 10_000): Promise<RunResult> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: cleanEnv({}),
    stdio: [typeof stdin === 'number' ? stdin : 'pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  if (typeof stdin !== 'number') {
    child.stdin!.on('error', () => {}); // the CLI closes its end once it has read enough
    stdin.pipe(child.stdin!);
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`rack-webhooks ${args.join(' ')} did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (typeof stdin !== 'number') stdin.unpipe().destroy();
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Listener {
  child: ChildProcess;
  url: string;
  lines: string[];
  /** Resolves with the first line (from `from` on) matching `pattern`. */
  waitForLine(pattern: RegExp, from?: number): Promise<string>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `listen --port 0 ...`, resolved once it printed its address. */
export function startListener(args: readonly string[], env: Record<string, string> = {}): Promise<Listener> {
  const child = spawn(process.execPath, [CLI, 'listen', '--port', '0', ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  let buffered = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    lines.push(...parts);
    for (const wake of waiters.splice(0)) wake();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const waitForLine = (pattern: RegExp, from = 0, timeoutMs = 5_000): Promise<string> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no line matching ${pattern} in: ${JSON.stringify(lines)} stderr: ${stderr}`)),
        timeoutMs,
      );
      const check = () => {
        const line = lines.slice(from).find((candidate) => pattern.test(candidate));
        if (line !== undefined) {
          clearTimeout(timer);
          resolve(line);
        } else waiters.push(check);
      };
      check();
    });
  // A budget, not a wait: a new Node process loads the CLI (and PGlite's WebAssembly, for a
  // directory) before it listens; at load 12-14 on the 2-core VM that ran past 5 s. 15 s: under
  // the tests' own timeouts (20 s and more), so that this message, with stdout and stderr, is the one reported.
  const listening = Promise.race([
    waitForLine(/^listening on /, 0, 15_000),
    // A child that ends first (no build, a bad option) is said at once, not after the budget.
    exited.then((code) => {
      throw new Error(`listen exited (${code}) before it printed its address; stderr: ${stderr}`);
    }),
  ]);
  return listening.then((first) => ({
    child,
    url: first.slice('listening on '.length),
    lines,
    waitForLine,
    stop: (signal = 'SIGTERM') => {
      child.kill(signal);
      return exited;
    },
  }));
}

const dirs: string[] = [];

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rack-webhooks-cli-'));
  dirs.push(dir);
  return dir;
}

/** For afterAll. */
export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function writeTemp(dir: string, name: string, contents: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, contents);
  return path;
}
