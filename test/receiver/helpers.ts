import { signSync } from '../../src/index.js';
import { fixtureFor } from '../events/fixtures.js';

export const SECRET = 'receiver-test-secret';
export const T0 = 1_777_285_800; // 2026-04-27T10:30:00Z

/** A signed delivery as the rack would send it, at unix time `t`. */
export function delivery(
  action: string,
  options: { t?: number; patch?: Record<string, unknown>; headerName?: string; secret?: string } = {},
) {
  const fixture = fixtureFor(action);
  const json = structuredClone(fixture.json);
  Object.assign(json.data, options.patch ?? {});
  const body = options.patch === undefined ? fixture.text : JSON.stringify(json);
  const t = options.t ?? T0;
  const header = signSync(body, { secrets: options.secret ?? SECRET, timestamp: t });
  return { body: Buffer.from(body), headers: { [(options.headerName ?? 'Service-Signature').toLowerCase()]: header } };
}

/** A clock the test moves by hand, in milliseconds. */
export function manualClock(startSeconds = T0) {
  let ms = startSeconds * 1000;
  return { now: () => ms, advance: (seconds: number) => void (ms += seconds * 1000) };
}
