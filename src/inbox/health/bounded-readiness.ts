/**
 * A readiness check that answers within a bound. A statement can wait forever without failing: a
 * database host gone silent behind an established connection, a PGlite owner that stopped answering,
 * a pool whose connections are all stuck. A probe then hung (a balancer's probe times out as no
 * answer, a person's curl waits), and every probe after the cache lapsed started one more stuck query.
 */
import { settleWithin } from '../../shared/timers.js';
import { checkStates, READINESS_CHECKS } from './checks.js';
import type { InboxReadiness } from './health.js';

/** What readiness says when the check did not answer in `timeoutMs`: the database is failing, the schema unknown. */
function unanswered(timeoutMs: number): InboxReadiness {
  const text = `the database did not answer the readiness check within ${timeoutMs} ms`;
  return {
    ready: false,
    reasons: [text],
    checks: checkStates(READINESS_CHECKS, new Set(), [{ check: 'database', severity: 'failing', text }]),
  };
}

/**
 * `check`, answered within `timeoutMs` (not ready once the bound passes). A check still under way is
 * not started again: the next call waits on the same one (with a bound of its own), so a stuck
 * database costs one stuck query, not one per probe.
 */
export function boundedReadiness(check: () => Promise<InboxReadiness>, timeoutMs: number): () => Promise<InboxReadiness> {
  let underWay: Promise<InboxReadiness> | undefined;
  return () => {
    if (underWay === undefined) {
      const started = Promise.resolve()
        .then(check)
        .finally(() => {
          if (underWay === started) underWay = undefined;
        });
      underWay = started;
    }
    return settleWithin(underWay, timeoutMs, () => unanswered(timeoutMs));
  };
}
