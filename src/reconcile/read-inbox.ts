/** The events an inbox holds that a reconcile matches against, in any state (a dead or duplicate delivery was received). */
import { SHUTDOWN_PREFIX } from './gaps.js';
import type { HeldEvent, ReconcileInbox } from './types.js';

/** Events dated by the rack's send: the window's, read from a little before it (an event's time follows its proof). */
const WINDOWED = [
  'release:create',
  'build:create',
  'build:import-image:*',
  'app:budget:threshold',
  'app:budget:cap',
  `${SHUTDOWN_PREFIX}*`,
];
/** Events whose proof has no time (app creation, the current release's promote): read from the beginning. */
const UNDATED = ['app:create', 'release:promote'];

const PAGE = 1000;

async function readAll(inbox: ReconcileInbox, filter: { action: string[]; from?: Date }, into: HeldEvent[]): Promise<void> {
  let after: string | undefined;
  do {
    const page = await inbox.list({ ...filter, limit: PAGE, includeEvents: true, ...(after === undefined ? {} : { after }) });
    for (const delivery of page.deliveries) {
      const data = (delivery.event?.data ?? {}) as Record<string, unknown>;
      const id = [data['id'], data['build'], data['name']].find((value) => typeof value === 'string') as string | undefined;
      into.push({
        action: delivery.action,
        app: delivery.action === 'app:create' ? (typeof data['name'] === 'string' ? data['name'] : null) : delivery.app,
        id: delivery.action.startsWith('build:import-image:') ? ((data['build'] as string | undefined) ?? null) : (id ?? null),
        tickId: delivery.tickId,
        eventMs: Number(delivery.eventNanos / 1_000_000n),
      });
    }
    after = page.next;
  } while (after !== undefined);
}

/** Every held event a reconcile of the window from `fromMs` can match. */
export async function readHeld(inbox: ReconcileInbox, fromMs: number): Promise<HeldEvent[]> {
  const held: HeldEvent[] = [];
  await readAll(inbox, { action: WINDOWED, from: new Date(fromMs) }, held);
  await readAll(inbox, { action: UNDATED }, held);
  return held;
}
