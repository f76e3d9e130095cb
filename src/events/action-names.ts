import { WEBHOOK_ACTIONS } from '../generated/catalog.js';
import { editDistance } from '../shared/suggest.js';
import { isKnownAction } from './known.js';

/**
 * Names typed by people (a handler's action, a CLI filter) checked against the catalog. A name
 * close to a known action is almost surely a typo of it; a name far from every known action may
 * be a newer rack's, which a receiver must accept (the spec's rule 5). Kept small: it ships in
 * every receiver's bundle.
 */

/** The name without case, spaces and separators: `App.Budget.Cap ` and `app:budget:cap` are the same. */
const looseKey = (name: string) => name.toLowerCase().replace(/[^a-z0-9*]/g, '');

/** Whether a name can match a catalog action: a known action, or a `prefix:*` some action starts with. */
export function isCatalogName(name: string): boolean {
  return name.endsWith('*') ? WEBHOOK_ACTIONS.some((action) => action.startsWith(name.slice(0, -1))) : isKnownAction(name);
}

/**
 * The known action (or pattern, for a name ending in `*`) that `name` is a likely typo of: the same
 * apart from case, spaces or separators, or the nearest within two edits. The name itself when it
 * can match the catalog; undefined for one far from every known name.
 */
export function likelyIntendedAction(name: string): string | undefined {
  if (isCatalogName(name)) return name;
  const loose = looseKey(name);
  let best: string | undefined;
  let bestDistance = 3; // a typo is at most two edits
  // For a pattern, each action's parent pattern (`app:budget:auto-shutdown:*`, `app:*`, ...).
  const candidates = name.endsWith('*')
    ? WEBHOOK_ACTIONS.map((action) => `${action.slice(0, action.lastIndexOf(':'))}:*`)
    : WEBHOOK_ACTIONS;
  for (const known of candidates) {
    const distance = looseKey(known) === loose ? 0 : editDistance(name, known);
    if (distance < bestDistance) [best, bestDistance] = [known, distance];
  }
  return best;
}
