import { describe, expect, it } from 'vitest';
import { flagSpec, flagsHelp } from '../../src/cli/flag-help.js';

describe('flagsHelp and flagSpec: one declaration, two readers', () => {
  const flags = {
    key: { type: 'string', multiple: true, value: 'K', help: 'a signing key' },
    event: { type: 'string', value: 'F', help: 'send this file\n(--file F: the same)' },
    file: { type: 'string', help: { in: 'event' } },
    json: { type: 'boolean', short: 'j', help: 'one JSON object' },
  } as const;

  it('renders one line per flag, continuation lines under the description, none for a flag documented elsewhere', () => {
    expect(flagsHelp(flags)).toBe(
      [
        '  --key K                 a signing key',
        '  --event F               send this file',
        '                          (--file F: the same)',
        '  --json                  one JSON object',
      ].join('\n'),
    );
    expect(flagsHelp({ json: flags.json }, 8)).toBe('  --json    one JSON object');
  });

  it('gives parseArgs the spec without the help', () => {
    expect(flagSpec(flags)).toEqual({
      key: { type: 'string', multiple: true },
      event: { type: 'string' },
      file: { type: 'string' },
      json: { type: 'boolean', short: 'j' },
    });
  });
});
