import type { HmacBackend } from './backend.js';
import { getNodeBackend } from './node-backend.js';
import { webBackend } from './web-backend.js';

let chosen: HmacBackend | undefined;

/**
 * node:crypto where the runtime has it (fast, synchronous), Web Crypto everywhere else. Chosen on
 * first use, not at import: loading node:crypto was most of a cold `import 'rack-webhooks'`.
 */
export function getDefaultBackend(): HmacBackend {
  if (chosen === undefined) chosen = getNodeBackend() ?? webBackend;
  return chosen;
}
