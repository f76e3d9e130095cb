/**
 * The CLI run in this process through runCli (so coverage sees it; test/cli/helpers.ts runs the
 * built CLI as a real process): its exit code and only the output each command wrote.
 */
import { afterEach, beforeEach, vi } from 'vitest';
import { runCli } from '../../src/cli/cli.js';

let output = { stdout: '', stderr: '' };

/**
 * For the suite: captures what runCli writes, and runs each test without RACK_WEBHOOK_SECRETS
 * (call at the top level of the test file).
 */
export function captureOutput(): void {
  beforeEach(() => {
    output = { stdout: '', stderr: '' };
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((output.stdout += String(chunk)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((output.stderr += String(chunk)), true));
    delete process.env['RACK_WEBHOOK_SECRETS'];
  });
  afterEach(() => {
    vi.restoreAllMocks();
    delete process.env['RACK_WEBHOOK_SECRETS'];
  });
}

/** Everything written since the test started. */
export function writtenSoFar(): { stdout: string; stderr: string } {
  return output;
}

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** One command in this process: its exit code and only the output it wrote. */
export async function cli(...args: string[]): Promise<CliResult> {
  const [outStart, errStart] = [output.stdout.length, output.stderr.length];
  const code = await runCli(args);
  return { code, out: output.stdout.slice(outStart), err: output.stderr.slice(errStart) };
}
