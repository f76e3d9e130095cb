/** Flags shared by every command, key resolution, and reading bodies and files. */
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { SecretEncoding } from '../signature/secrets.js';
import { closeMatch } from './suggest.js';

/** A mistake in how the tool was called (exit 2), as opposed to a failed check or delivery (exit 1). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type FlagSpec = NonNullable<ParseArgsConfig['options']>;
export type Flags = Record<string, string | boolean | string[] | undefined>;

/** Spread into a command's flags where they apply, so every command spells them the same way. */
export const KEY_FLAGS = {
  key: { type: 'string', multiple: true },
  'key-file': { type: 'string' },
  'secret-encoding': { type: 'string' },
} as const satisfies FlagSpec;
export const HEADER_NAME_FLAG = { 'header-name': { type: 'string' } } as const satisfies FlagSpec;
export const FILE_FLAG = { file: { type: 'string' } } as const satisfies FlagSpec;

export const KEY_HELP = `  --key K                 a signing key; repeat it, or write "new,old", for several
  --key-file F            read the key(s) from F (comma- or newline-separated, trimmed)
                          (without either: $RACK_WEBHOOK_SECRETS, comma-separated)
  --secret-encoding E     utf8 (the spec, default) or hex (racks that hex-decode the key)`;

/**
 * node:util parseArgs, with its errors rewritten: its own messages can quote a flag's value
 * (`--key -abc` is "ambiguous"), and that value may be a key.
 */
export function parseFlags(argv: readonly string[], options: FlagSpec): Flags {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values as Flags;
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    const flag = /'(-{1,2}[^'\s=<]+)/.exec(message ?? '')?.[1] ?? 'a flag';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const guess = closeMatch(flag.replace(/^-+/, ''), Object.keys(options));
      throw new UsageError(`unknown flag ${flag}${guess === undefined ? '' : ` (did you mean --${guess}?)`}; see --help`);
    }
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw new UsageError('unexpected argument: this command takes flags only (see --help)');
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const takesValue = (options[flag.replace(/^-+/, '')]?.type ?? 'string') === 'string';
      throw new UsageError(
        takesValue
          ? `${flag} needs a value (write ${flag}=VALUE when the value starts with "-")`
          : `${flag} takes no value`,
      );
    }
    throw error;
  }
}

export function stringFlag(flags: Flags, name: string): string | undefined {
  const value = flags[name];
  return typeof value === 'string' ? value : undefined;
}

/** Reads a file the user named; the reason names the file and the error code, never the contents. */
export function readUserFile(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'unreadable';
    throw new UsageError(`cannot read ${what} ${JSON.stringify(path)} (${code})`);
  }
}

/**
 * The keys, from the first source given: --key and --key-file (together, in that order), then
 * $RACK_WEBHOOK_SECRETS, so a key never has to appear in shell history. `--key` is taken byte for
 * byte (split on commas only), so the SDK can point out a key with stray whitespace; the file and
 * the variable are trimmed per key, as the rack trims its own parameter.
 */
export function resolveKeys(flags: Flags, env: NodeJS.ProcessEnv): string[] | undefined {
  const keys = ((flags['key'] as string[] | undefined) ?? []).flatMap((value) => value.split(','));
  const keyFile = stringFlag(flags, 'key-file');
  if (keyFile !== undefined) {
    const parts = readUserFile(keyFile, '--key-file').toString('utf8').split(/[,\r\n]/).map((part) => part.trim());
    const fromFile = parts.filter((part) => part !== '');
    if (fromFile.length === 0) throw new UsageError(`--key-file ${JSON.stringify(keyFile)} holds no key`);
    keys.push(...fromFile);
  }
  if (keys.length > 0) return keys;
  const fromEnv = env['RACK_WEBHOOK_SECRETS'];
  if (fromEnv !== undefined && fromEnv.trim() !== '') return fromEnv.split(',').map((part) => part.trim());
  return undefined;
}

export function requireKeys(flags: Flags, env: NodeJS.ProcessEnv): string[] {
  const keys = resolveKeys(flags, env);
  if (keys === undefined) throw new UsageError('no key: pass --key, --key-file, or set RACK_WEBHOOK_SECRETS');
  return keys;
}

export function secretEncoding(flags: Flags): SecretEncoding {
  const value = stringFlag(flags, 'secret-encoding') ?? 'utf8';
  if (value !== 'utf8' && value !== 'hex') throw new UsageError(`--secret-encoding must be utf8 or hex, got ${JSON.stringify(value)}`);
  return value;
}

/** Whole seconds >= 0; `Infinity` only where a tolerance may be switched off. */
export function secondsFlag(flags: Flags, name: string, allowInfinity = false): number | undefined {
  const text = stringFlag(flags, name);
  if (text === undefined) return undefined;
  if (allowInfinity && /^(inf|infinity)$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`--${name} must be a whole number of seconds${allowInfinity ? ' (or Infinity)' : ''}, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** The body to sign or verify: --file, else stdin (refused when stdin is a terminal, not to hang). */
export async function readBody(flags: Flags): Promise<Buffer> {
  const file = stringFlag(flags, 'file');
  if (file !== undefined) return readUserFile(file, '--file');
  if (process.stdin.isTTY === true) throw new UsageError('no body: pipe it on stdin or pass --file F');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
