import type { Driver } from '../../../database/driver.js';
import { listDeliveries } from '../../operate/read.js';
import type { TableNames } from '../../schema/table-name.js';
import type { ListOptions, ListPage } from '../../types.js';
import type { Finding, GuardedQuery } from '../incidents.js';
import type { AlertRule } from '../types.js';
import { toDateOrNull } from '../../rows.js';

/** What a rule reads through: the database, the table's names and the watcher's clock. */
export interface RuleContext {
  readonly driver: Driver;
  readonly names: TableNames;
  /** The evaluation's instant: every bound is measured against it, never against the database's clock. */
  readonly now: Date;
  readonly query: GuardedQuery;
}

/** One alert rule: the conditions that hold now, past their bounds (none: its incidents resolve); each its finding, of this rule. */
export interface Rule {
  readonly name: AlertRule;
  evaluate(context: RuleContext): Promise<Omit<Finding, 'rule'>[]>;
}

/** Pages of 1,000 deliveries that `filter` picks, with their events: at most 50, a bound on what one evaluation reads. */
export async function* deliveryPages({ driver, names }: RuleContext, filter: ListOptions): AsyncGenerator<ListPage> {
  let after: string | undefined;
  for (let page = 0; page < 50; page++) {
    const listed = await listDeliveries(driver, names, {
      ...filter,
      includeEvents: true,
      limit: 1000,
      ...(after === undefined ? {} : { after }),
    });
    yield listed;
    if (listed.next === undefined) return;
    after = listed.next;
  }
}

export const dateOf = (value: unknown): Date | undefined => toDateOrNull(value) ?? undefined;

export const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** `{ a: 2, b: 1 }` as `a ×2, b`, most frequent first, at most `max` names. */
export function tally(values: readonly string[], max = 3): { counts: Record<string, number>; text: string } {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  const sorted = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = sorted.slice(0, max).map(([name, n]) => (n === 1 ? name : `${name} ×${n}`));
  if (sorted.length > max) shown.push(`${sorted.length - max} more`);
  return { counts, text: shown.join(', ') };
}
