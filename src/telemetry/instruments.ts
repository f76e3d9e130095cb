import type { Counter, Histogram, Meter, ObservableResult } from '@opentelemetry/api';
import { currentMeter } from './otel-api.js';
import { ATTR, DURATION_BUCKETS, METRIC } from './conventions.js';
import { observeInboxes } from './inbox-probes.js';

/** The instruments a registered meter provider gets, created once per meter. */
export interface Instruments {
  readonly received: Counter;
  readonly receiveDuration: Histogram;
  readonly processDuration: Histogram;
  readonly dead: Counter;
}

const byMeter = new WeakMap<Meter, Instruments>();

function create(meter: Meter): Instruments {
  const advice = { explicitBucketBoundaries: DURATION_BUCKETS };
  const instruments: Instruments = {
    received: meter.createCounter(METRIC.received, {
      description: 'Deliveries that reached a receiver, by outcome (refused: error.type says why)',
      unit: '{message}',
    }),
    receiveDuration: meter.createHistogram(METRIC.receiveDuration, {
      description: 'Time from a delivery reaching the receiver to its answer',
      unit: 's',
      advice,
    }),
    processDuration: meter.createHistogram(METRIC.processDuration, {
      description: "Duration of one attempt at a stored delivery's handlers, by outcome",
      unit: 's',
      advice,
    }),
    dead: meter.createCounter(METRIC.dead, { description: 'Deliveries that went dead: no attempts left', unit: '{delivery}' }),
  };
  // Read only when the SDK collects (a Prometheus scrape, a periodic export), never per delivery.
  const deliveries = meter.createObservableGauge(METRIC.deliveries, {
    description: 'Deliveries in the inbox table by state (read at most every few seconds, by processes running a worker)',
    unit: '{delivery}',
  });
  const oldestPendingAge = meter.createObservableGauge(METRIC.oldestPendingAge, {
    description: 'How long the oldest pending delivery has waited since it was received (0 when none is pending)',
    unit: 's',
  });
  const liveWorkers = meter.createObservableUpDownCounter(METRIC.liveWorkers, {
    description: 'Workers running in this process (sum over processes: every live worker)',
    unit: '{worker}',
  });
  meter.addBatchObservableCallback(
    (result) =>
      observeInboxes({
        deliveries: (value, table, state) => result.observe(deliveries, value, { [ATTR.table]: table, [ATTR.state]: state }),
        oldestPendingAge: (value, table) => result.observe(oldestPendingAge, value, { [ATTR.table]: table }),
        liveWorkers: (value, table) => result.observe(liveWorkers, value, { [ATTR.table]: table }),
      }),
    [deliveries, oldestPendingAge, liveWorkers],
  );
  return instruments;
}

/** The instruments of the registered meter provider, or undefined when none is registered. */
export function currentInstruments(): Instruments | undefined {
  const meter = currentMeter();
  if (meter === undefined) return undefined;
  let instruments = byMeter.get(meter);
  if (instruments === undefined) {
    instruments = create(meter);
    byMeter.set(meter, instruments);
  }
  return instruments;
}

export type { ObservableResult };
