/** Flags shared by every command, key resolution, and reading bodies and files. */
import { MAX_TIMESTAMP_DIGITS } from '../signature/limits.js';
import { toSigningKeys, type SecretEncoding } from '../signature/secrets.js';
import { KEY_FILE_LIMIT_BYTES, readUserFile } from './input.js';
import { DEFAULT_HEADER_NAME } from '../receiver/create-receiver.js';
import type { FlagDeclarations } from './flag-help.js';
import type { Flags } from './parse-flags.js';
import { UsageError } from './usage-error.js';

export { INPUT_LIMIT_BYTES, KEY_FILE_LIMIT_BYTES, readBody, readUserFile } from './input.js';
export { parseCommandLine, parseFlags, type FlagSpec, type Flags } from './parse-flags.js';
export { flagsHelp, type FlagDeclarations } from './flag-help.js';
export { UsageError } from './usage-error.js';

/** Spread into a command's flags where they apply, so every command spells and describes them the same way. */
export const KEY_FLAGS = {
  key: { type: 'string', multiple: true, value: 'K', help: 'a signing key; repeat it, or write "new,old", for several' },
  'key-file': {
    type: 'string',
    value: 'F',
    help: `read the key(s) from F (comma- or newline-separated, trimmed; at most 64 KiB)
(without either: $RACK_WEBHOOK_SECRETS, comma-separated)`,
  },
  'secret-encoding': {
    type: 'string',
    value: 'E',
    help: `utf8 (the spec) or hex (deployed racks, which hex-decode the key); sign and send
default to utf8; verify and listen, without it, try a key of 64+ lowercase hex
characters both ways`,
  },
} as const satisfies FlagDeclarations;
/** Its help is send's; listen and verify say what it means to them. */
export const HEADER_NAME_FLAG = {
  'header-name': { type: 'string', value: 'N', help: `the signature header's name (default ${DEFAULT_HEADER_NAME})` },
} as const satisfies FlagDeclarations;
export const FILE_FLAG = {
  file: { type: 'string', value: 'F', help: 'read the body from F instead of stdin (at most 16 MiB, not empty)' },
} as const satisfies FlagDeclarations;
export const TOLERANCE_FLAG = {
  tolerance: { type: 'string', value: 'S', help: 'seconds either side of now (default 300; Infinity turns the check off)' },
} as const satisfies FlagDeclarations;

export function stringFlag(flags: Flags, name: string): string | undefined {
  const value = flags[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The keys, from the first source given: --key and --key-file (together, in that order), then
 * $RACK_WEBHOOK_SECRETS, so a key never has to appear in shell history. Each source is split on
 * commas and trimmed per key, as the rack trims its own parameter and as the SDK's string form does:
 * one rule everywhere (`--key "$K "` verifies as `--key "$K"`).
 */
export function resolveKeys(flags: Flags, env: NodeJS.ProcessEnv): string[] | undefined {
  const keys = ((flags['key'] as string[] | undefined) ?? []).flatMap((value) => value.split(',').map((part) => part.trim()));
  const keyFile = stringFlag(flags, 'key-file');
  if (keyFile !== undefined) {
    const text = readUserFile(keyFile, '--key-file', KEY_FILE_LIMIT_BYTES).toString('utf8');
    const fromFile = text
      .split(/[,\r\n]/)
      .map((part) => part.trim())
      .filter((part) => part !== '');
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

/**
 * Checks the keys as the SDK will (an empty one, in `a,,b` or `a,`, or one that is not hex under
 * --secret-encoding hex), before a body is read, so a key mistake is never reported as a body one.
 */
export function assertUsableKeys(keys: readonly string[], encoding: SecretEncoding): void {
  toSigningKeys(keys, encoding);
}

export function secretEncoding(flags: Flags): SecretEncoding {
  const value = stringFlag(flags, 'secret-encoding') ?? 'utf8';
  if (value !== 'utf8' && value !== 'hex') {
    // A key pasted into the wrong flag must not end up in a terminal or a CI log: only a short
    // word (base64, latin1) is echoed back.
    const shown = /^[A-Za-z0-9-]{1,10}$/.test(value)
      ? JSON.stringify(value)
      : `a value of ${value.length} characters (not shown: it may be a key)`;
    throw new UsageError(`--secret-encoding must be utf8 or hex, got ${shown}`);
  }
  return value;
}

/** The keys to sign with (at least one, or a usage error) and their encoding, each key checked as the SDK will. */
export function signingKeys(flags: Flags, env: NodeJS.ProcessEnv): { keys: string[]; encoding: SecretEncoding } {
  const keys = requireKeys(flags, env);
  const encoding = secretEncoding(flags);
  assertUsableKeys(keys, encoding);
  return { keys, encoding };
}

/** `--secret-encoding` when given; undefined lets verification try both forms of a rack-shaped key. */
export function optionalSecretEncoding(flags: Flags): SecretEncoding | undefined {
  return stringFlag(flags, 'secret-encoding') === undefined ? undefined : secretEncoding(flags);
}

/** Whole seconds >= 0; `Infinity` only where a tolerance may be switched off. */
export function secondsFlag(flags: Flags, name: string, allowInfinity = false): number | undefined {
  const text = stringFlag(flags, name);
  if (text === undefined) return undefined;
  if (allowInfinity && /^(inf|infinity)$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(
      `--${name} must be a whole number of seconds${allowInfinity ? ' (or Infinity)' : ''}, got ${JSON.stringify(text)}`,
    );
  }
  return Number(text);
}

/** `--timestamp` to sign with: past 15 digits no verifier (the SDK's included) takes the header. */
export function timestampFlag(flags: Flags): number | undefined {
  const seconds = secondsFlag(flags, 'timestamp');
  const text = stringFlag(flags, 'timestamp');
  if (text !== undefined && text.length > MAX_TIMESTAMP_DIGITS) {
    throw new UsageError(
      `--timestamp must be unix seconds of at most ${MAX_TIMESTAMP_DIGITS} digits (a verifier refuses more), got ${text.length} digits`,
    );
  }
  return seconds;
}

/** RFC 9110's token: what an HTTP header name may be made of. */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `--header-name`, checked here: a bad name would otherwise surface as a crash or a failed delivery. */
export function headerNameFlag(flags: Flags): string | undefined {
  const name = stringFlag(flags, 'header-name');
  if (name === undefined || HTTP_TOKEN.test(name)) return name;
  // The value is described, not echoed: a whole pasted "Name: t=...,v1=..." line would hold a signature.
  const bad = [...name].find((char) => !HTTP_TOKEN.test(char));
  const problem =
    bad === undefined
      ? 'it is empty'
      : bad === ' '
        ? 'it contains a space'
        : /^[!-~]$/.test(bad)
          ? `it contains ${JSON.stringify(bad)}`
          : 'it contains a control or non-ASCII character';
  throw new UsageError(
    `--header-name must be an HTTP header name (letters, digits and !#$%&'*+-.^_\`|~, such as X-Rack-Signature), but ${problem}`,
  );
}

/** Why a URL flag's value is not an http(s) URL, without quoting it: a webhook URL often carries a credential. */
export function httpUrlProblem(text: string): string | undefined {
  let protocol: string;
  try {
    protocol = new URL(text).protocol;
  } catch {
    return 'it is not a URL (write the scheme too, as in http://localhost:3000/webhooks)';
  }
  return /^https?:$/.test(protocol) ? undefined : `it is a ${JSON.stringify(protocol.slice(0, 20))} URL`;
}
