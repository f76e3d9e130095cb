import type { AsyncLocalStorage as AsyncContext } from 'node:async_hooks';
import { WebhookInboxError } from './errors.js';

// Node, Bun and Deno have AsyncLocalStorage; elsewhere (PGlite in a browser) the guard is off.
const AsyncLocalStorage = (
  globalThis as { process?: { getBuiltinModule?: (name: string) => { AsyncLocalStorage?: typeof AsyncContext } | undefined } }
).process?.getBuiltinModule?.('node:async_hooks')?.AsyncLocalStorage;

/**
 * On one connection (a pg Client, PGlite) a handler holds the only connection for its whole
 * transaction. A call from inside it to the inbox or the database itself would wait for that
 * connection for ever, and every receive() with it. The guard turns that into an error the
 * handler's attempt fails with, naming the fix.
 */
export class ReentryGuard {
  readonly #context: AsyncContext<{ active: boolean }> | undefined = AsyncLocalStorage && new AsyncLocalStorage();

  async inside<R>(fn: () => Promise<R>): Promise<R> {
    if (this.#context === undefined) return fn();
    const token = { active: true };
    try {
      return await this.#context.run(token, fn);
    } finally {
      // Work the handler left behind (a timer, an unawaited call) runs later, with the connection free.
      token.active = false;
    }
  }

  check(): void {
    if (this.#context?.getStore()?.active === true) {
      throw new WebhookInboxError(
        'inbox_failed',
        'A handler called the inbox or its database directly while its transaction holds the only connection (a pg Client or PGlite), ' +
          'which would wait for ever. Use context.transaction inside handlers.',
      );
    }
  }
}
