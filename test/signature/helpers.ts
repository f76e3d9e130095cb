import vectorsFile from '../vectors/signature.json' with { type: 'json' };
import { createNodeBackend, getNodeBackend } from '../../src/crypto/node-backend.js';
import { loadNodeCrypto } from '../../src/crypto/node-crypto.js';
import { webBackend } from '../../src/crypto/web-backend.js';
import { verify, verifySync, verifyWithBackend, type VerifyOptions, type VerifiedSignature } from '../../src/signature/verify.js';
import type { RawPayload } from '../../src/signature/payload.js';
import type { SignatureHeaderInput } from '../../src/signature/parse-header.js';

export interface SignatureVector {
  name: string;
  bodyBase64: string;
  header: string | null;
  secrets: string | string[];
  secretEncoding?: 'utf8' | 'hex';
  tolerance?: number | 'Infinity';
  now: number;
  expect: { timestamp: number; secretIndex: number; secretEncoding: 'utf8' | 'hex' } | { error: string; suggestedSecretEncoding?: string };
}

export const vectors = vectorsFile.vectors as SignatureVector[];
export const vectorSecrets = vectorsFile.secrets;

export function vectorOptions(vector: SignatureVector): VerifyOptions {
  return {
    secrets: vector.secrets,
    now: vector.now,
    ...(vector.secretEncoding === undefined ? {} : { secretEncoding: vector.secretEncoding }),
    ...(vector.tolerance === undefined ? {} : { tolerance: vector.tolerance === 'Infinity' ? Infinity : vector.tolerance }),
  };
}

type VerifyPath = (payload: RawPayload, header: SignatureHeaderInput, options: VerifyOptions) => Promise<VerifiedSignature>;

/** Every way the SDK can verify; the vectors must give the same answer on each. */
export const verifyPaths: ReadonlyArray<readonly [string, VerifyPath]> = [
  ['verifySync', async (p, h, o) => verifySync(p, h, o)],
  ['verify (node:crypto)', verify],
  // createHmac streaming: what Node uses for bodies past the one-shot size, and where crypto.hash is missing.
  ['verify (node:crypto, createHmac)', (p, h, o) => verifyWithBackend(createNodeBackend(loadNodeCrypto(), { oneShot: false })!, p, h, o)],
  ['verify (Web Crypto)', (p, h, o) => verifyWithBackend(webBackend, p, h, o)],
];

export async function outcome(path: VerifyPath, payload: RawPayload, header: SignatureHeaderInput, options: VerifyOptions) {
  try {
    return { ok: await path(payload, header, options) } as const;
  } catch (error) {
    return { error } as const;
  }
}

const nodeBackend = getNodeBackend();
export { nodeBackend, webBackend };
