import type { AnyWebhookEvent } from '../events/types.js';
import type { AutoShutdownPhase, AutoShutdownState } from './types.js';
import { field } from './read-field.js';

/**
 * The auto-shutdown lifecycle as a state machine over the spec's events (docs/rack-state.md
 * has the table). Each row: from which phases an action moves, and where to.
 */
const PREFIX = 'app:budget:auto-shutdown:';

type Step = (state: AutoShutdownState, event: AnyWebhookEvent, data: Data) => AutoShutdownState;
type Data = Readonly<Record<string, unknown>>;

function enter(
  state: AutoShutdownState,
  phase: AutoShutdownPhase,
  event: AnyWebhookEvent,
  data: Data,
  by: string,
  extra: Partial<AutoShutdownState> = {},
): AutoShutdownState {
  const tickId = field(data, 'tick_id');
  const actor = field(data, 'actor');
  const cancelReason = by === 'cancelled' ? field(data, 'cancel_reason') : undefined;
  return {
    phase,
    ...(tickId === undefined ? {} : { tickId }),
    since: event.timestamp,
    ...(actor === undefined ? {} : { actor }),
    previous: {
      phase: state.phase,
      by,
      at: event.timestamp,
      ...(cancelReason === undefined ? {} : { cancelReason }),
      ...(tickId === undefined ? {} : { tickId }),
      ...(actor === undefined ? {} : { actor }),
    },
    ...(state.lastFlapSuppressed === undefined ? {} : { lastFlapSuppressed: state.lastFlapSuppressed }),
    ...extra,
  };
}

const STEP_TABLE: Readonly<Record<string, Step>> = {
  // A new countdown, from any phase (after a lapse or a recovery a tick arms again).
  armed: (state, event, data) => {
    const scheduledAt = field(data, 'scheduled_at');
    const expectedShutdownAt = field(data, 'expected_shutdown_at');
    return enter(state, 'armed', event, data, 'armed', {
      ...(scheduledAt === undefined ? {} : { scheduledAt }),
      ...(expectedShutdownAt === undefined ? {} : { expectedShutdownAt }),
    });
  },
  fired: (state, event, data) => enter(state, 'shut-down', event, data, 'fired'),
  failed: (state, event, data) => enter(state, 'shutdown-failed', event, data, 'failed'),
  // Only an armed countdown can be cancelled; a late or stray :cancelled changes nothing else.
  cancelled: (state, event, data) => (state.phase === 'armed' ? enter(state, 'idle', event, data, 'cancelled') : state),
  // Services come back from a shutdown (or a failed one); the banner stays until dismissed.
  restored: (state, event, data) =>
    state.phase === 'shut-down' || state.phase === 'shutdown-failed' ? enter(state, 'restored', event, data, 'restored') : state,
  dismissed: (state, event, data) => (state.phase === 'restored' ? enter(state, 'idle', event, data, 'dismissed') : state),
  // Manual-mode month rollover: whatever was in flight ends.
  expired: (state, event, data) => (state.phase === 'idle' ? state : enter(state, 'idle', event, data, 'expired')),
  'flap-suppressed': (state, event, data) => {
    const tickId = field(data, 'tick_id');
    return { ...state, lastFlapSuppressed: { at: event.timestamp, ...(tickId === undefined ? {} : { tickId }) } };
  },
  // Routine: the reconciler found nothing to do, or a dry run. No phase changes.
  noop: (state) => state,
  simulated: (state) => state,
};

// A Map: `app:budget:auto-shutdown:constructor` finds no step.
const STEPS: ReadonlyMap<string, Step> = /* @__PURE__ */ new Map(/* @__PURE__ */ Object.entries(STEP_TABLE));

export const IDLE: AutoShutdownState = { phase: 'idle' };

export function stepAutoShutdown(state: AutoShutdownState, event: AnyWebhookEvent): AutoShutdownState {
  if (!event.action.startsWith(PREFIX)) return state;
  const step = STEPS.get(event.action.slice(PREFIX.length));
  // dry_run "true" sequences (simulations) never move the real lifecycle.
  const data = event.data as Data;
  if (step === undefined || data['dry_run'] === 'true' || data['dry_run'] === true) return state;
  return step(state, event, data);
}
