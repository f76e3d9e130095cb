import { WEBHOOK_ACTIONS } from '../generated/catalog.js';
import { editDistance, nearest } from '../shared/suggest.js';

/**
 * Names typed by people (a handler's action, a CLI filter) checked against the catalog. A name
 * close to a known action is almost surely a typo of it; a name far from every known action may
 * be a newer rack's, which a receiver must accept (the spec's rule 5).
 */

interface KnownNames {
  /** Every `prefix:*` pattern the catalog's actions have, e.g. `app:*` and `app:budget:*`. */
  readonly patterns: readonly string[];
  /** The actions and those patterns. */
  readonly all: ReadonlySet<string>;
}

// Built on first use, so that a bundle which never checks a name carries no work at import.
let known: KnownNames | undefined;
function knownNames(): KnownNames {
  if (known !== undefined) return known;
  const patterns = [
    ...new Set(
      WEBHOOK_ACTIONS.flatMap((action) => {
        const parts = action.split(':');
        return parts.slice(1).map((_, index) => `${parts.slice(0, index + 1).join(':')}:*`);
      }),
    ),
  ];
  return (known = { patterns, all: new Set<string>([...WEBHOOK_ACTIONS, ...patterns]) });
}

/** The name without case, spaces and separators: `App.Budget.Cap ` and `app:budget:cap` are the same. */
function looseKey(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9*]/g, '');
}

/** The most a typo is taken to change: two edits (a letter left out and one swapped, ...). */
const TYPO_DISTANCE = 2;

/**
 * The known name `name` is a likely typo of: the same apart from case, spaces or separators, or
 * within {@link TYPO_DISTANCE} edits. Undefined for a known name and for one far from every known name.
 */
export function likelyIntendedAction(name: string): string | undefined {
  const { all, patterns } = knownNames();
  if (all.has(name)) return undefined;
  const candidates = name.endsWith('*') ? patterns : WEBHOOK_ACTIONS;
  const loose = looseKey(name);
  const sameLoosely = candidates.find((candidate) => looseKey(candidate) === loose);
  if (sameLoosely !== undefined) return sameLoosely;
  const [best] = nearest(name, candidates, 1);
  return best !== undefined && editDistance(name, best) <= TYPO_DISTANCE ? best : undefined;
}

/** Whether a registered name can match a catalog action: a known action, or a pattern some action starts with. */
export function isCatalogName(name: string): boolean {
  if (!name.endsWith('*')) return knownNames().all.has(name);
  const prefix = name.slice(0, -1);
  return WEBHOOK_ACTIONS.some((action) => action.startsWith(prefix));
}
