// Live workers and recent refusals for the page's header and stats view, and the count of live
// workers that the move actions report (so the page can say when nothing will run what moved).
import { type InboxMonitor, WebhookInboxError } from '../../../inbox/facade/index.js';

/** A schema from before heartbeats and refusals (version 4) has none to show: null, not a failure. */
async function unlessOlderSchema<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof WebhookInboxError && error.code === 'inbox_not_migrated') return null;
    throw error;
  }
}

export async function workersAndRefusals(monitor: Pick<InboxMonitor, 'workers' | 'refusals'>) {
  const [workers, refusals] = await Promise.all([unlessOlderSchema(monitor.workers()), unlessOlderSchema(monitor.refusals())]);
  return {
    workers:
      workers === null
        ? null
        : {
            live: workers.filter((worker) => worker.live).length,
            gone: workers.filter((worker) => !worker.live).length,
            list: workers.map((worker) => ({
              id: worker.id,
              host: worker.host,
              pid: worker.pid,
              live: worker.live,
              startedAt: worker.startedAt.toISOString(),
              lastSeenAt: worker.lastSeenAt.toISOString(),
              running: worker.running,
              concurrency: worker.concurrency,
            })),
          },
    refusals: refusals === null ? null : { total: refusals.reduce((sum, refusal) => sum + refusal.count, 0), byCode: refusals },
  };
}

/** How many workers are live now; null on a schema without heartbeats. */
export async function liveWorkers(monitor: Pick<InboxMonitor, 'workers'>): Promise<number | null> {
  const workers = await unlessOlderSchema(monitor.workers());
  return workers === null ? null : workers.filter((worker) => worker.live).length;
}
