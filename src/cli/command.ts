import type { FlagSpec, Flags } from './args.js';

/** One subcommand: main parses its flags (and handles --help) before calling `run`. */
export interface Command {
  name: string;
  /** One line for `rack-webhooks --help`. */
  summary: string;
  /** The full `--help` text. */
  help: string;
  flags: FlagSpec;
  /** Resolves with the exit code; throws UsageError for exit 2. */
  run(flags: Flags): Promise<number>;
}
