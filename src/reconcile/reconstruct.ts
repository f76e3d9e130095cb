/**
 * The `data` of a missing event, as far as the rack's records give it (rack-api.md 3.1, field-notes.md):
 * what a delivery rebuilt by `reconcile(..., { record: true })` carries. Never a release's `env`.
 * What the records do not hold (the actor of a deploy, a failed build's message, most of an
 * auto-shutdown event's figures) is left out rather than guessed.
 */
import type { RackBuild, RackRelease, RackShutdownState } from '../rack-api/types.js';

type Data = Readonly<Record<string, string>>;

export function releaseData(app: string, release: RackRelease): Data {
  return { app, id: release.id };
}

export function buildData(app: string, build: RackBuild): Data {
  return build.status === 'complete' && build.release !== '' ? { app, id: build.id, release_id: build.release } : { app, id: build.id };
}

/** The state's value as the rack's events carry it: every `data` value is a string. */
function asText(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
}

/** Fields of the state that a lifecycle step's event carries under another name (the same value). */
const STEP_EXTRAS: Readonly<Record<string, ReadonlyArray<readonly [string, string]>>> = {
  armed: [
    ['recoveryMode', 'recovery_mode'],
    ['shutdownOrder', 'shutdown_order'],
    ['notifyBeforeMinutes', 'notify_before_minutes'],
    ['eligibleServiceCount', 'eligible_service_count'],
  ],
  fired: [['shutdownOrder', 'shutdown_order']],
  failed: [['failureReason', 'failure_reason']],
  expired: [['recoveryMode', 'recovery_mode']],
};

/**
 * An auto-shutdown lifecycle event: its tick, the time its stamp holds under the event's own field
 * name (`timeField`), and what the stored state says that the event says too. Every such event
 * carries `schema_version` `1`, and a stamped one is no dry run.
 */
export function shutdownData(app: string, step: string, state: RackShutdownState, timeField: string, time: string): Data {
  const data: Record<string, string> = { app, tick_id: state.shutdownTickId, schema_version: '1', dry_run: 'false', [timeField]: time };
  for (const [from, to] of Object.hasOwn(STEP_EXTRAS, step) ? STEP_EXTRAS[step]! : []) {
    const value = asText(state[from]);
    if (value !== undefined) data[to] = value;
  }
  return data;
}
