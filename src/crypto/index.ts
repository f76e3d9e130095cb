import type { HmacBackend } from './backend.js';
import { nodeBackend } from './node-backend.js';
import { webBackend } from './web-backend.js';

/** node:crypto where the runtime has it (fast, synchronous), Web Crypto everywhere else. */
export const defaultBackend: HmacBackend = nodeBackend ?? webBackend;
