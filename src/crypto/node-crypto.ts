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

let loaded: NodeCryptoModule | undefined | null = null;

/**
 * node:crypto, looked up on first use rather than at import: loading it initialises Node's crypto
 * bindings, which was most of the time `import 'rack-webhooks'` took (bench/cold-import.mjs),
 * and a process that parses, folds state or has not received anything yet does not need it.
 */
export function loadNodeCrypto(): NodeCryptoModule | undefined {
  if (loaded === null) loaded = load();
  return loaded;
}
