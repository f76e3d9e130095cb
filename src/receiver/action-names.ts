import { isCatalogName, likelyIntendedAction } from '../events/action-names.js';

/**
 * Handler names checked against the catalog when they are registered. TypeScript catches a typo in
 * `receiver.on('app:budget:auto-shutdown:fird')`; JavaScript does not, and such a handler would
 * never run while its deliveries are answered `processed` (or marked `done`): the event is lost.
 * A name close to a known action is therefore a mistake (TypeError naming it); a name far from
 * every known action is taken as a newer rack's action, accepted with one warning.
 */

/**
 * Checks one handler name: throws a TypeError for a likely typo, and calls `warn` once per name
 * this receiver has not seen for one that is not in the catalog (a newer rack's action).
 */
export function checkHandlerName(name: string, seen: Set<string>, warn: ((name: string) => void) | undefined): void {
  if (isCatalogName(name)) return;
  const intended = likelyIntendedAction(name);
  if (intended !== undefined) {
    throw new TypeError(
      `Handler name ${JSON.stringify(name)} is not a known action: did you mean ${JSON.stringify(intended)}? ` +
        "(a name far from every known action is accepted as a newer rack's action)",
    );
  }
  if (warn === undefined || seen.has(name)) return;
  seen.add(name);
  warn(name);
}
