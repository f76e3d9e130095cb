import type * as NodeCrypto from 'node:crypto';

/**
 * `node:crypto` without a static import, so the core entry loads unchanged on Workers and in
 * browsers. `process.getBuiltinModule` exists on Node 20.16+, Bun and Deno; where it does not,
 * the Web Crypto backend is used for `verify` and `sign`.
 */
type NodeCryptoModule = typeof NodeCrypto;

interface ProcessWithBuiltins {
  getBuiltinModule?: (id: string) => unknown;
}

function load(): NodeCryptoModule | undefined {
  const proc = (globalThis as { process?: ProcessWithBuiltins }).process;
  try {
    const mod = proc?.getBuiltinModule?.('node:crypto') as NodeCryptoModule | undefined;
    return typeof mod?.createHmac === 'function' ? mod : undefined;
  } catch {
    return undefined;
  }
}

export const nodeCrypto: NodeCryptoModule | undefined = load();
