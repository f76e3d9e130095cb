/**
 * The command line, checked token by token before node:util parseArgs reads it: parseArgs' own
 * messages can quote a flag's value (`--key -abc` is "ambiguous"), and that value may be a key;
 * here every mistake gets a one-line reason that names the flag only.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closeMatch } from './suggest.js';
import { UsageError } from './usage-error.js';

export type FlagSpec = NonNullable<ParseArgsConfig['options']>;
export type Flags = Record<string, string | boolean | string[] | undefined>;

/**
 * Why a flag is unknown, naming it only when it looks like one: a pasted key must not end up in a
 * log. A negative number (`inbox show -1`) is a number typed where a flag is read.
 */
function unknownFlag(rawName: string, typed: string | undefined, guess: string | undefined): string {
  if (typed !== undefined && /^-\d{1,20}$/.test(typed))
    return `${typed} is read as a flag, and there is no such flag (a delivery id is a positive whole number); see --help`;
  if (!/^-{1,2}[A-Za-z][\w-]{0,30}$/.test(rawName))
    return 'unknown flag (not shown: it does not look like a flag name, and may be a pasted value); see --help';
  return `unknown flag ${rawName}${guess === undefined ? '' : ` (did you mean --${guess}?)`}; see --help`;
}

/**
 * `-h=VALUE` reads as `--help=VALUE`. parseArgs takes no `=` after a short alias: it would split
 * `-h=x` into `-h`, `-=` and `-x`. An unknown short alias is left as it is, to be reported.
 */
function expandShortAssignments(argv: readonly string[], options: FlagSpec): string[] {
  const terminator = argv.indexOf('--');
  return argv.map((arg, index) => {
    const match = /^-([^-=])=([\s\S]*)$/.exec(arg);
    if (match === null || (terminator !== -1 && index > terminator)) return arg;
    const long = Object.keys(options).find((name) => options[name]?.short === match[1]);
    return long === undefined ? `-${match[1]}` : `--${long}=${match[2]}`;
  });
}

/** The first mistake on the line, in the order typed, as a UsageError; none when the line is fine. */
function firstMistake(args: readonly string[], options: FlagSpec, maxPositionals: number): UsageError | undefined {
  const { tokens } = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  const seen = new Set<string>();
  let positionals = 0;
  for (const token of tokens) {
    // The argument itself is never echoed: a key pasted in the wrong place must not end up in a log.
    if (token.kind === 'positional' && ++positionals > maxPositionals) {
      return new UsageError(
        maxPositionals === 0
          ? 'unexpected argument: this command takes flags only (see --help)'
          : `unexpected argument: this command takes at most ${maxPositionals} argument${maxPositionals === 1 ? '' : 's'} besides its flags (see --help)`,
      );
    }
    if (token.kind !== 'option') continue;
    const spec = options[token.name];
    if (spec === undefined) {
      return new UsageError(unknownFlag(token.rawName, args[token.index], closeMatch(token.name, Object.keys(options))));
    }
    const flag = `--${token.name}`;
    if (spec.type === 'boolean') {
      if (token.value !== undefined) return new UsageError(`${flag} takes no value`);
      continue;
    }
    // A value that starts with "-" is most often the next flag, the value forgotten; write --key=-x for a real one.
    if (token.value === undefined || (token.inlineValue === false && token.value.startsWith('-'))) {
      return new UsageError(`${flag} needs a value (write ${flag}=VALUE when the value starts with "-")`);
    }
    if (spec.multiple !== true && seen.has(token.name)) return new UsageError(`${flag} was given more than once; pass it once`);
    seen.add(token.name);
  }
  return undefined;
}

export function parseFlags(argv: readonly string[], options: FlagSpec): Flags {
  return parseCommandLine(argv, options, 0).flags;
}

/** The flags and up to `maxPositionals` other arguments (`inbox show 12`), in the order typed. */
export function parseCommandLine(
  argv: readonly string[],
  options: FlagSpec,
  maxPositionals: number,
): { flags: Flags; positionals: string[] } {
  const args = expandShortAssignments(argv, options);
  const mistake = firstMistake(args, options, maxPositionals);
  if (mistake !== undefined) throw mistake;
  try {
    const { values, positionals } = parseArgs({ args, options, strict: true, allowPositionals: maxPositionals > 0 });
    return { flags: values as Flags, positionals };
  } catch {
    // Not reached when the checks above cover parseArgs; its own message could quote a value.
    throw new UsageError('cannot read the flags; see --help');
  }
}
