/** `rack-webhooks console` as a real process, resolved once it printed its URL. */
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI } from '../cli/helpers.js';

export interface ConsoleProcess {
  readonly child: ChildProcess;
  /** The printed URL, token included. */
  readonly url: string;
  readonly origin: string;
  readonly stdout: () => string;
  readonly stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const running = new Set<ChildProcess>();

export function killConsoles(): void {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  running.clear();
}

export function startConsoleProcess(args: readonly string[], timeoutMs = 20_000): Promise<ConsoleProcess> {
  const child = spawn(process.execPath, [CLI, 'console', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the console printed no URL within ${timeoutMs} ms; stdout: ${stdout} stderr: ${stderr}`)),
      timeoutMs,
    );
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the console exited (${code}) before printing its URL; stderr: ${stderr}`));
    });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      // The last of its three lines: all of them are out.
      const match = /^open (http:\/\/\S+)$/m.exec(stdout);
      if (match === null || !stdout.includes('Ctrl-C to stop\n')) return;
      clearTimeout(timer);
      const url = match[1]!;
      resolve({
        child,
        url,
        origin: new URL(url).origin,
        stdout: () => stdout,
        stderr: () => stderr,
        stop: (signal = 'SIGINT') => {
          child.kill(signal);
          return exited;
        },
      });
    });
  });
}
