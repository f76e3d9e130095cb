import type { Flags } from './args.js';
import type { FlagDeclarations } from './flag-help.js';

/** One subcommand: main parses its flags (and handles --help) before calling `run`. */
export interface Command {
  name: string;
  /** One line for `rack-webhooks --help`. */
  summary: string;
  /** The full `--help` text. */
  help: string;
  /** Each flag with its help line, which `help` renders with flagsHelp. */
  flags: FlagDeclarations;
  /** How many arguments besides the flags it takes (`inbox show <id>`); default none. */
  positionals?: number;
  /** Resolves with the exit code; throws UsageError for exit 2. */
  run(flags: Flags, positionals: readonly string[]): Promise<number>;
}

/** A command made of subcommands (`rack-webhooks inbox list ...`). */
export interface CommandGroup {
  name: string;
  summary: string;
  /** The group's `--help`: what it is and its subcommands. */
  help: string;
  subcommands: readonly Command[];
}
