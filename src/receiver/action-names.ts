import { isCatalogName, likelyIntendedAction } from '../events/action-names.js';

/**
 * Handler names checked against the catalog when they are registered. TypeScript catches a typo in
 * `receiver.on('app:budget:auto-shutdown:fird')`; JavaScript does not, and such a handler would
 * never run while its deliveries are answered `processed` (or marked `done`): the event is lost.
 * A name close to a known action is therefore a mistake (TypeError naming it); a name far from
 * every known action is taken as a newer rack's action, accepted with a warning.
 */
export function checkHandlerName(name: string, warn: ((name: string) => void) | undefined): void {
  const intended = likelyIntendedAction(name);
  if (intended === name) return;
  if (intended !== undefined) throw new TypeError(`on(${JSON.stringify(name)}): did you mean ${JSON.stringify(intended)}?`);
  warn?.(name);
}

/** What a handler for an action the rack never sends does (nothing), and the `:*` pattern of its prefix when that fits. */
export function unknownActionMessage(name: string): string {
  // Kept small: the Worker bundle is at its limit. One level up: `app:budget:forecast(:*)` gives `app:budget:*`.
  // (The name itself matches no action, so a pattern that does is another name.)
  const pattern = name.replace(/:[^:]*(:\*)?$/, ':*');
  return `on(${JSON.stringify(name)}): no such action: this handler will not run${isCatalogName(pattern) ? `; use on("${pattern}")?` : ''}`;
}
