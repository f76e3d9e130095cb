import { activeContext, withContext } from '../../telemetry/otel-api.js';
import type { AttemptOutcomeKind, WorkerTelemetry } from '../../telemetry/process.js';
import type { Completion, Recording } from './run-batched.js';
import type { Claimed } from './run-delivery.js';

/** The default mode's outcome kind (run-delivery's `Outcome`) of a batched attempt, once its completion statement ran. */
function outcomeKind(state: Completion['state'], recording: Recording): AttemptOutcomeKind {
  if (recording === 'lost') return 'lease-lost';
  if (recording === 'unrecorded') return 'unrecorded';
  return state === 'done' ? 'succeeded' : state === 'pending' ? 'failed' : 'dead';
}

/**
 * `mode: 'batched'` with the default mode's per-attempt telemetry (`workerTelemetry().attempt`):
 * the `process` span opens when the handlers start (they run inside it, their spans its
 * children) and ends once the batch statement has recorded the outcome (or failed to), as the
 * default mode's ends after its done-mark or `fail`: so its outcome, the duration metric and the
 * dead counter say what the table says, never a dead delivery counted twice (once here, once by
 * recovery when the statement failed). The completion goes to the loop as soon as the handlers
 * end; its `settle` (run in the span's context, as onError is in the default mode) ends the span.
 */
export function withAttemptTelemetry(
  telemetry: WorkerTelemetry,
  run: (claimed: Claimed) => Promise<Completion>,
): (claimed: Claimed) => Promise<Completion> {
  return (claimed) =>
    new Promise<Completion>((handOver, fail) => {
      const attempt: Promise<unknown> = telemetry
        .attempt(claimed, async () => {
          const completion = await run(claimed);
          const inSpan = activeContext();
          return new Promise<{ kind: AttemptOutcomeKind }>((ended) => {
            handOver({
              ...completion,
              async settle(recording) {
                try {
                  await withContext(inSpan, () => completion.settle(recording));
                } finally {
                  ended({ kind: outcomeKind(completion.state, recording) });
                }
                // The span has ended when the loop's flush is over (stop() and drain() wait for that).
                await attempt;
              },
            });
          });
        })
        .catch(fail);
    });
}
