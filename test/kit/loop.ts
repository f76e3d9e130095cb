/**
 * The worker loop driven step by step, the one harness for it: a ManualClock whose timers fire only
 * when the test says, a source whose claims hand out a queue of rows, and attempts that end (or hand
 * their slot over) when the test says. No database and no real timer: each state change is observed
 * in `log`. The loop on real databases is the inbox's own `work()` (test/inbox/helpers.ts `openInbox`).
 */
import type { Row } from '../../src/database/driver.js';
import { WorkerLoop, type LoopSettings } from '../../src/inbox/work/loop.js';
import type { Attempts } from '../../src/inbox/work/run-attempt.js';
import type { LoopSource } from '../../src/inbox/work/source.js';
import type { Outcome } from '../../src/telemetry/process.js';
import { deferred, flush, ManualClock } from './time.js';

/** One slot, one row per claim, nothing ahead, a poll every second, a lease of 30 s. */
export const LOOP_SETTINGS: LoopSettings = { concurrency: 1, batchSize: 1, claimAhead: 0, pollIntervalMs: 1000, leaseSeconds: 30 };

/** The source's steps a test may hold: each call, once held, runs (and logs) and then waits for `release()`. */
export type HeldStep = 'claim' | 'release' | 'renew';

export interface ScriptedLoop {
  readonly loop: WorkerLoop;
  readonly clock: ManualClock;
  /** What the loop asked, in order: `claim 2`, `run 1`, `release 3`, `renew 3,2`, `abandon 1`, `recover`. */
  readonly log: string[];
  /** Each run's context.signal, by row id. */
  readonly signals: Map<string, AbortSignal>;
  /** start(), then the event loop's turn: the first claim and runs are in `log`. */
  start(): Promise<void>;
  /** The attempt of row `id` frees its slot (its COMMIT or outcome queued); its outcome is still to come. */
  handOver(id: string): void;
  /** The attempt of row `id` ends with `outcome` (succeeded by default). */
  finish(id: string, outcome?: Outcome): void;
  /** From now on, claims fail (the database refused them) until told otherwise. */
  failClaims(fails: boolean): void;
  /** From now on, calls of `step` wait, once done, until the returned function is called. */
  hold(step: HeldStep): () => void;
}

/**
 * A WorkerLoop over rows `ids` (claimed in that order), with `settings` over LOOP_SETTINGS, on a
 * new ManualClock. `renewsLeases`: the attempts leave lease renewal to the loop (batched mode).
 */
export function scriptedLoop(ids: readonly string[], settings: Partial<LoopSettings> = {}, renewsLeases = false): ScriptedLoop {
  const queue: Row[] = ids.map((id) => ({ id }));
  const log: string[] = [];
  const runs = new Map<string, (outcome: Outcome) => void>();
  const handOvers = new Map<string, () => void>();
  const signals = new Map<string, AbortSignal>();
  const gates = new Map<HeldStep, Promise<void>>();
  let claimFails = false;
  const idsOf = (rows: readonly Row[]) => rows.map((row) => String(row['id']));
  async function gated<T>(step: HeldStep, answer: T): Promise<T> {
    await gates.get(step);
    return answer;
  }
  const source: LoopSource = {
    async claim(wanted) {
      log.push(`claim ${wanted}`);
      return gated('claim', claimFails ? undefined : queue.splice(0, wanted));
    },
    async release(released) {
      for (const id of idsOf(released)) log.push(`release ${id}`);
      return gated('release', undefined);
    },
    async renew(renewed) {
      log.push(`renew ${idsOf(renewed).join(',')}`);
      return gated('renew', true);
    },
    async recover() {
      log.push('recover');
    },
  };
  const attempts: Attempts = {
    renewsLeases,
    run(row, signal, handedOver) {
      const id = String(row['id']);
      log.push(`run ${id}`);
      signals.set(id, signal);
      const done = deferred<Outcome>();
      runs.set(id, done.resolve);
      handOvers.set(id, handedOver);
      return done.promise;
    },
    async abandon(abandoned) {
      log.push(`abandon ${idsOf(abandoned).join(',')}`);
    },
  };
  const clock = new ManualClock();
  const loop = new WorkerLoop(source, attempts, { ...LOOP_SETTINGS, ...settings }, clock);
  return {
    loop,
    clock,
    log,
    signals,
    async start() {
      loop.start();
      await flush();
    },
    handOver(id) {
      handOvers.get(id)!();
    },
    finish(id, outcome = { kind: 'succeeded' }) {
      runs.get(id)!(outcome);
      runs.delete(id);
    },
    failClaims(fails) {
      claimFails = fails;
    },
    hold(step) {
      const gate = deferred<void>();
      gates.set(step, gate.promise);
      return () => gate.resolve();
    },
  };
}
