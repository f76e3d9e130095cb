/** "Did you mean" for commands, flags and actions: the names closest by edit distance. */

/** Levenshtein distance (insert, delete, substitute), two rows of memory. */
export function editDistance(a: string, b: string): number {
  let previous = [...Array(b.length + 1).keys()];
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/** The `count` candidates nearest to `name`, nearest first; ties keep the candidates' order. */
export function nearest(name: string, candidates: readonly string[], count: number): string[] {
  return candidates
    .map((candidate, index) => ({ candidate, index, distance: editDistance(name, candidate) }))
    .sort((a, b) => a.distance - b.distance || a.index - b.index)
    .slice(0, count)
    .map(({ candidate }) => candidate);
}

/**
 * One suggestion, only when it is plausibly a typo (within a third of the name's length):
 * suggesting `sign` for `deploy` would be noise.
 */
export function closeMatch(name: string, candidates: readonly string[]): string | undefined {
  const [best] = nearest(name, candidates, 1);
  if (best === undefined) return undefined;
  return editDistance(name, best) <= Math.max(2, Math.ceil(name.length / 3)) ? best : undefined;
}
