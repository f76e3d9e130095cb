/**
 * `record: true`: each proven gap stored in the inbox as a reconstructed delivery (origin
 * `reconciled`, unsigned, the gap's evidence beside it), pending, for the app's workers to run once.
 */
import { naturalKey } from '../events/natural-key.js';
import type { RackClient } from '../rack-api/client.js';
import { recordReconciledOf } from './recorders.js';
import type { ReconcileGap } from './types.js';

/** Who did it is not in the records: the rack's own word for that (field-notes.md), except for its tick's events. */
function actorOf(action: string): string {
  return action.startsWith('app:budget:') ? 'system' : 'unknown';
}

/** The `data` as the rack marshals it: keys sorted. */
function sorted(data: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Whether a gap can be recorded: it has a natural key a late real arrival will be matched on. */
export function recordable(gap: ReconcileGap): boolean {
  return gap.data !== undefined && naturalKey(gap.action, gap.data) !== undefined;
}

/**
 * Records each recordable gap, in order, and returns the gaps with `recorded` set on those that now
 * have a reconciled row. `data.rack` is read from `GET /system` once, when there is one to record.
 */
export async function recordGaps(inbox: object, client: RackClient, gaps: readonly ReconcileGap[]): Promise<ReconcileGap[]> {
  const record = recordReconciledOf(inbox);
  if (record === undefined) throw new TypeError('reconcile: record: true needs an inbox made by createInbox');
  let rack: string | undefined;
  const result: ReconcileGap[] = [];
  for (const gap of gaps) {
    if (!recordable(gap)) {
      result.push(gap);
      continue;
    }
    rack ??= (await client.system()).name;
    const data = sorted({ ...gap.data, rack, actor: actorOf(gap.action) });
    const outcome = await record({ action: gap.action, status: gap.status ?? 'success', timestamp: gap.evidence.at, data }, gap.evidence);
    result.push('id' in outcome ? { ...gap, recorded: { id: outcome.id } } : gap);
  }
  return result;
}
