import type { WebhookEvent } from '../generated/events.js';
import type { AnyWebhookEvent, EventOf, WebhookAction } from '../events/types.js';

/** Every `prefix:*` pattern of an action: `app:budget:cap` gives `app:*` and `app:budget:*`. */
type PrefixPatterns<Action extends string> = Action extends `${infer Head}:${infer Rest}`
  ? `${Head}:*` | `${Head}:${PrefixPatterns<Rest>}`
  : never;

/** What `on` accepts: an action, or a prefix pattern such as `app:budget:auto-shutdown:*`. */
export type ActionPattern = WebhookAction | PrefixPatterns<WebhookAction>;

/** The event a handler of `Pattern` receives: one exact type, or the union a prefix matches. */
export type EventForPattern<Pattern extends ActionPattern> = Pattern extends `${infer Prefix}*`
  ? Extract<
      WebhookEvent,
      {
        /** Any action the prefix matches. */
        action: `${Prefix}${string}`;
      }
    >
  : Pattern extends WebhookAction
    ? EventOf<Pattern>
    : never;

/**
 * A handler. With an inbox its second argument is the delivery's `{ delivery, transaction }`;
 * without one it is `undefined`.
 */
export type EventHandler<E, Context = undefined> = (event: E, context: Context) => unknown;

export function matchesPattern(pattern: string, action: string): boolean {
  return pattern.endsWith('*') ? action.startsWith(pattern.slice(0, -1)) : pattern === action;
}

export function assertPattern(pattern: unknown): asserts pattern is string {
  if (typeof pattern !== 'string' || pattern === '' || (pattern.includes('*') && !pattern.endsWith(':*'))) {
    throw new TypeError(
      `Handler pattern must be an action such as "app:budget:cap" or a prefix such as "app:budget:*", got ${JSON.stringify(pattern)}`,
    );
  }
}

/** Handlers by pattern, plus catch-all handlers; lookups are cached per action. */
export class HandlerRegistry {
  readonly #byPattern = new Map<string, Set<EventHandler<never, never>>>();
  readonly #any = new Set<EventHandler<AnyWebhookEvent, unknown>>();
  #cache = new Map<string, EventHandler<never, never>[]>();

  add(pattern: string, handler: EventHandler<never, never>): void {
    let handlers = this.#byPattern.get(pattern);
    if (handlers === undefined) this.#byPattern.set(pattern, (handlers = new Set()));
    handlers.add(handler);
    this.#cache = new Map();
  }

  addAny(handler: EventHandler<AnyWebhookEvent, unknown>): void {
    this.#any.add(handler);
    this.#cache = new Map();
  }

  /** Removes a handler from one pattern, or from every pattern and the catch-all when none is given. */
  remove(handler: EventHandler<never, never>, pattern?: string): void {
    for (const [key, handlers] of this.#byPattern) {
      if (pattern === undefined || key === pattern) handlers.delete(handler);
    }
    if (pattern === undefined) this.#any.delete(handler as EventHandler<AnyWebhookEvent, unknown>);
    this.#cache = new Map();
  }

  /** Handlers for a known action (pattern handlers, each once), then the catch-all ones. Cached. */
  forAction(action: string, known: boolean): readonly EventHandler<AnyWebhookEvent, unknown>[] {
    const cacheKey = known ? action : `?${action}`;
    let handlers = this.#cache.get(cacheKey);
    if (handlers === undefined) {
      const found = new Set<EventHandler<never, never>>();
      if (known) {
        for (const [pattern, set] of this.#byPattern) {
          if (matchesPattern(pattern, action)) for (const handler of set) found.add(handler);
        }
      }
      for (const handler of this.#any) found.add(handler);
      handlers = [...found];
      // Unknown actions are unbounded input: do not let them grow the cache.
      if (known || this.#cache.size < 256) this.#cache.set(cacheKey, handlers);
    }
    return handlers as EventHandler<AnyWebhookEvent, unknown>[];
  }
}
