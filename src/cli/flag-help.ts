/**
 * A flag's spec and its line in --help, declared once: the flags section of a command's help is
 * rendered from the same object parseArgs reads, so a flag cannot be added without its help.
 */
import type { FlagSpec } from './parse-flags.js';

export interface FlagDeclaration {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** The placeholder shown after the flag: `K` in `--key K`; none for a boolean. */
  value?: string;
  /**
   * What it does, as --help shows it; a "\n" starts a line indented under the first. `{ in }`
   * names the flag whose line documents this one too (send's --file, in --event's line).
   */
  help: string | { in: string };
}

export type FlagDeclarations = Readonly<Record<string, FlagDeclaration>>;

/** The column descriptions start at: two spaces, the flag and its value, padded to this, two spaces. */
const LABEL_WIDTH = 22;

/** The flags section of a command's help, one entry per flag in declaration order. */
export function flagsHelp(flags: FlagDeclarations, labelWidth = LABEL_WIDTH): string {
  const indent = ' '.repeat(labelWidth + 4);
  return Object.entries(flags)
    .flatMap(([name, flag]) => {
      if (typeof flag.help !== 'string') return [];
      const label = flag.value === undefined ? `--${name}` : `--${name} ${flag.value}`;
      const [first, ...rest] = flag.help.split('\n');
      return [`  ${label.padEnd(labelWidth)}  ${first}`, ...rest.map((line) => `${indent}${line}`)];
    })
    .join('\n');
}

/** What parseArgs reads: the declarations without their help. */
export function flagSpec(flags: FlagDeclarations): FlagSpec {
  return Object.fromEntries(
    Object.entries(flags).map(([name, { type, multiple, short }]) => [
      name,
      { type, ...(multiple === undefined ? {} : { multiple }), ...(short === undefined ? {} : { short }) },
    ]),
  );
}
