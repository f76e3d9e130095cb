import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The seams between the receiver, the inbox, the adapters and telemetry are typed and visible
 * (issue 26, point 2): the inbox is a `DeliveryInbox` passed in options, adapters report through
 * `receiver.reportRefusal()`, telemetry subscribes to the receiver's diagnostics_channel channels
 * and reads OpenTelemetry through its public API. No hidden keys on objects, no other package's
 * private global, no method replaced at run time.
 */
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** Lines of src/ matching `pattern`, as `file:line: text`. */
function linesMatching(pattern: RegExp): string[] {
  return sources(SRC).flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, index) => (pattern.test(line) ? [`${relative(SRC, file)}:${index + 1}: ${line.trim()}`] : [])),
  );
}

describe('explicit seams', () => {
  it('no Symbol.for in src/: nothing is passed or read under a hidden global key', () => {
    expect(linesMatching(/Symbol\.for\(/)).toEqual([]);
  });

  it("never another package's internals: no read of @opentelemetry/api's global, which is loaded only by its public API", () => {
    expect(linesMatching(/opentelemetry\.js\.api|OpenTelemetry Context Key/)).toEqual([]);
    // Types only: the package itself is required lazily (src/telemetry/otel-api.ts), an optional peer.
    expect(linesMatching(/^import (?!type )[^;]*from '@opentelemetry\//)).toEqual([]);
  });

  it('no method replaced at run time: nothing assigns a receiver its receive()', () => {
    expect(linesMatching(/\.receive\s*=[^=>]|defineProperty\([^)]*receive/)).toEqual([]);
  });
});
