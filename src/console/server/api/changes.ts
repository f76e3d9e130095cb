/**
 * Live updates: while at least one page is listening, a cheap fingerprint of the inbox (per state:
 * how many rows, their attempts, the newest id) is read every `pollMs`; when it differs, every
 * listener gets `event: change` with fresh stats. Polling rather than LISTEN works the same on
 * PostgreSQL and PGlite, and costs one index-only aggregate per interval.
 */
import type { ServerResponse } from 'node:http';
import { type Clock, type InboxOperator, type InboxStats, systemClock } from '../../../inbox/facade/index.js';

const HEARTBEAT_MS = 15_000;

export class ChangeFeed {
  private readonly listeners = new Set<ServerResponse>();
  private fingerprint: string | undefined;
  private cancelPoll: (() => void) | undefined;
  private cancelHeartbeat: (() => void) | undefined;
  private closed = false;
  /** Bumped by stopPolling: a poll that was running then does not schedule another loop. */
  private generation = 0;
  /** Told once per outage, not twice a second while the database is down. */
  private failing = false;

  constructor(
    private readonly operator: Pick<InboxOperator, 'stats' | 'changeFingerprint'>,
    private readonly pollMs: number,
    private readonly onError: (error: unknown) => void,
    /** Its polls' and heartbeats' timers (a test moves it). */
    private readonly clock: Clock = systemClock,
  ) {}

  /** Holds the response open as an event stream; the first event carries the current stats. */
  async subscribe(res: ServerResponse): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    this.listeners.add(res);
    res.once('close', () => {
      this.listeners.delete(res);
      if (this.listeners.size === 0) this.stopPolling();
    });
    try {
      // The baseline first, so a change between this read and the first poll is still seen.
      if (this.fingerprint === undefined) await this.check();
      this.send(res, await this.operator.stats());
    } catch (error) {
      // The page shows its last data and the next change brings the rest.
      if (!this.failing) this.onError(error);
      this.failing = true;
    }
    this.startPolling();
  }

  private send(res: ServerResponse, stats: InboxStats): void {
    res.write(`event: change\ndata: ${JSON.stringify({ stats })}\n\n`);
  }

  private startPolling(): void {
    if (this.closed || this.cancelPoll !== undefined || this.listeners.size === 0) return;
    const beat = () => {
      for (const res of this.listeners) res.write(': keep-alive\n\n');
      this.cancelHeartbeat = this.clock.after(HEARTBEAT_MS, beat, true);
    };
    this.cancelHeartbeat ??= this.clock.after(HEARTBEAT_MS, beat, true);
    const generation = this.generation;
    const tick = async () => {
      try {
        await this.check();
        this.failing = false;
      } catch (error) {
        if (!this.failing) this.onError(error);
        this.failing = true;
      }
      if (generation === this.generation) this.cancelPoll = this.clock.after(this.pollMs, () => void tick(), true);
    };
    this.cancelPoll = this.clock.after(this.pollMs, () => void tick(), true);
  }

  private stopPolling(): void {
    this.generation++;
    this.cancelPoll?.();
    this.cancelHeartbeat?.();
    this.cancelPoll = undefined;
    this.cancelHeartbeat = undefined;
  }

  /** Reads the fingerprint; tells every listener when it moved. Exposed for the first read at start. */
  async check(): Promise<boolean> {
    const fingerprint = await this.operator.changeFingerprint();
    const changed = this.fingerprint !== undefined && fingerprint !== this.fingerprint;
    this.fingerprint = fingerprint;
    if (changed && this.listeners.size > 0) {
      const stats = await this.operator.stats();
      for (const res of this.listeners) this.send(res, stats);
    }
    return changed;
  }

  close(): void {
    this.closed = true;
    this.stopPolling();
    for (const res of this.listeners) res.end();
    this.listeners.clear();
  }
}
