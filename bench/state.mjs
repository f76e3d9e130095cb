// createRackState().apply on a realistic stream, in order and with each event moved 1 to 5
// positions late, as a ratio to parseEvent of the same events' bodies: what a receiver already
// pays per event.
import { readFileSync } from 'node:fs';
import { compareEvents, createRackState, parseEvent, timestampNanos } from '../dist/index.js';
import { checkBar, compare, printTable } from './harness.mjs';

const APPS = [
  'billing-api',
  'checkout-web',
  'data-pipeline',
  'search-api',
  'auth',
  'notifications',
  'reports',
  'media',
  'ledger',
  'gateway',
  'scheduler',
  'admin',
];
const DAYS = 3; // past the 24 h window, so the logs are compacted as in a long-running receiver
const NS_PER_MS = 1_000_000n;
const START_MS = Date.parse('2026-04-20T00:00:00Z');
const CANCEL_REASONS = ['reset-during-armed', 'cap-raised', 'manual-detected', 'config-changed', 'countdown-lapsed'];

/** Seeded, so every run measures the same stream (mulberry32). */
function prng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const templates = new Map();
function template(action) {
  if (!templates.has(action))
    templates.set(
      action,
      JSON.parse(readFileSync(new URL(`../test/fixtures/events/${action.replaceAll(':', '.')}.json`, import.meta.url), 'utf8')),
    );
  return templates.get(action);
}

/** RFC 3339 with 9 fractional digits, as racks send. */
function timestamp(ns) {
  return `${new Date(Number(ns / NS_PER_MS)).toISOString().slice(0, 19)}.${String(ns % 1_000_000_000n).padStart(9, '0')}Z`;
}

/**
 * A rack of 12 apps over 3 days, in timestamp order, at the volumes the spec suggests: per app and
 * day, a reconciler :noop every 15 minutes ("high volume"), 12 deploys (build, release, promote,
 * then one of completed, errored, cancelled), one auto-shutdown countdown sharing its tick_id
 * (fired, restored and dismissed; failed; cancelled with every cancel_reason; expired), a few
 * budget events (threshold, cap, set, reset, breaker-cleared) and override changes; about 160
 * events per app and day, from the fixtures' payloads.
 */
function stream() {
  const random = prng(0x5eed);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const hex = () => Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  const id = () => Array.from({ length: 11 }, () => String.fromCharCode(65 + Math.floor(random() * 26))).join('');
  const minutes = (m) => BigInt(Math.round(m * 60_000)) * NS_PER_MS + BigInt(Math.floor(random() * 1_000_000));
  const spanMs = DAYS * 86_400_000;
  const anytime = () => BigInt(START_MS + Math.floor(random() * spanMs)) * NS_PER_MS + BigInt(Math.floor(random() * 1_000_000));
  const events = [];
  for (const app of APPS) {
    const emit = (action, atNs, data = {}) => {
      const base = template(action);
      events.push({ ...base, timestamp: timestamp(atNs), data: { ...base.data, app, ...data } });
    };
    const times = (perDay, each) => {
      for (let n = Math.round(perDay * DAYS); n > 0; n--) each(anytime());
    };
    const tick = (at) => `tick-${timestamp(at).slice(0, 19)}Z-${hex()}`;
    for (let at = BigInt(START_MS) * NS_PER_MS; at < BigInt(START_MS + spanMs) * NS_PER_MS; at += minutes(15))
      emit('app:budget:auto-shutdown:noop', at, { tick_id: tick(at) });
    times(12, (at) => {
      const release = id();
      emit('build:create', at, { id: id(), release_id: release });
      emit('release:create', at + minutes(3), { id: release });
      emit('release:promote', at + minutes(4), { id: release });
      emit(
        pick(['app:promote:completed', 'app:promote:completed', 'app:promote:completed', 'app:promote:errored', 'app:promote:cancelled']),
        at + minutes(6 + random() * 10),
        { id: release },
      );
    });
    times(1, (at) => {
      const as = (action, offset, data = {}) => emit(`app:budget:auto-shutdown:${action}`, at + offset, { tick_id: tickId, ...data });
      const tickId = tick(at);
      as('armed', 0n, { scheduled_at: `${timestamp(at).slice(0, 19)}Z` });
      const ending = random();
      if (ending < 0.4) {
        as('fired', minutes(60));
        as('restored', minutes(90 + random() * 600));
        as('dismissed', minutes(720));
      } else if (ending < 0.5)
        as('failed', minutes(60)); // the spec shows no :restored after :failed
      else if (ending < 0.9) as('cancelled', minutes(random() * 59), { cancel_reason: pick(CANCEL_REASONS) });
      else as('expired', minutes(30));
    });
    times(0.3, (at) => emit('app:budget:auto-shutdown:flap-suppressed', at, { tick_id: tick(at) }));
    times(1, (at) => emit('app:budget:threshold', at));
    times(0.3, (at) => emit('app:budget:cap', at));
    times(0.5, (at) => emit('app:budget:set', at));
    times(0.2, (at) => emit('app:budget:reset', at));
    times(0.1, (at) => emit('app:budget:breaker-cleared', at));
    times(2, (at) => emit('app:scale-override:toggled', at, { service: pick(['web', 'worker']), state: pick(['on', 'off']) }));
    times(1, (at) => emit('app:triggers-override:toggled', at, { service: pick(['web', 'worker']), state: pick(['on', 'off']) }));
    times(2, (at) =>
      emit('app:triggers-override:threshold-set', at, {
        service: pick(['web', 'worker']),
        type: pick(['cpu', 'memory', 'rps']),
        threshold: String(50 + Math.floor(random() * 40)),
      }),
    );
  }
  return { bodies: events.sort(compareEvents).map((event) => JSON.stringify(event)), random };
}

/**
 * Each item, in order, moved 1 to 5 positions back from where it stands: it arrives after the 1
 * to 5 items that followed it (fewer when an item moved before it already passed them).
 */
function delayed(items, random) {
  const out = [...items];
  for (const item of items) {
    const from = out.indexOf(item);
    out.splice(from, 1);
    out.splice(Math.min(out.length, from + 1 + Math.floor(random() * 5)), 0, item);
  }
  return out;
}

/**
 * Each event 1 to 5 positions late among its own app's events (the only order the state sees:
 * each app has its own log), the apps still interleaved as in the rack's stream.
 */
function latePerApp(events, random) {
  const slots = new Map(APPS.map((app) => [app, []]));
  for (const event of events) slots.get(event.data.app).push(event);
  const reordered = new Map([...slots].map(([app, list]) => [app, delayed(list, random)]));
  const taken = new Map();
  return events.map((event) => {
    const index = taken.get(event.data.app) ?? 0;
    taken.set(event.data.app, index + 1);
    return reordered.get(event.data.app)[index];
  });
}

/** Applies `events` lap after lap, a fresh state per lap (so no event is a duplicate). */
function applier(events) {
  let state = createRackState();
  let next = 0;
  return () => {
    state.apply(events[next++]);
    if (next === events.length) {
      state = createRackState();
      next = 0;
    }
  };
}

/** Folds once, counting what apply reported, and how many applied events of its app each one sorted before. */
function fold(events, rank) {
  const state = createRackState();
  const counts = { late: 0, notApplied: 0, transitions: 0, passed: 0 };
  const seen = new Map(APPS.map((app) => [app, []]));
  for (const event of events) {
    const result = state.apply(event);
    if (result.late) counts.late++;
    if (!result.applied) counts.notApplied++;
    counts.transitions += result.transitions.length;
    const earlier = seen.get(event.data.app);
    for (const other of earlier) if (other > rank.get(event)) counts.passed++;
    earlier.push(rank.get(event));
  }
  return { state, counts };
}

const describe = ({ counts }, total) =>
  // Each late event re-folds the app's events it sorts before.
  `${counts.late} late (${((100 * counts.late) / total).toFixed(0)}%, ${(counts.passed / Math.max(1, counts.late)).toFixed(1)} newer events re-folded per late one), ${counts.notApplied} not applied, ${counts.transitions} transitions`;
/** Where two folds of the same events differ: 'none', or the apps' fields and the anomalies. */
function differences(a, b) {
  const found = [];
  const theirs = new Map(b.state.apps().map((app) => [app.app, app]));
  for (const app of a.state.apps()) {
    for (const field of Object.keys(app))
      if (JSON.stringify(app[field]) !== JSON.stringify(theirs.get(app.app)?.[field])) found.push(`${app.app}.${field}`);
  }
  if (JSON.stringify(a.state.anomalies()) !== JSON.stringify(b.state.anomalies())) found.push('anomalies()');
  return found.length === 0 ? 'none' : found.join(', ');
}

/**
 * A floor under `apply`: what any fold that orders by timestamp must do per event, without the
 * sorted log, the phase machines or the lifecycle indexes.
 */
function leastFold(events) {
  const apps = new Map();
  let next = 0;
  return () => {
    const event = events[next++ % events.length];
    const nanos = timestampNanos(event.timestamp);
    const app = event.data.app ?? event.data.name;
    let entry = apps.get(app);
    if (entry === undefined) apps.set(app, (entry = { newest: 0n, state: { app, updatedAt: '' } }));
    if (nanos >= entry.newest || next % events.length === 0) {
      entry.newest = nanos;
      entry.state = { ...entry.state, updatedAt: event.timestamp };
    }
  };
}

export async function benchState() {
  const { bodies, random } = stream();
  const inOrder = bodies.map((body) => parseEvent(body));
  const late = latePerApp(inOrder, random);
  const lateInRack = delayed(inOrder, random);
  const bytes = bodies.reduce((sum, body) => sum + body.length, 0);
  const rank = new Map(inOrder.map((event, index) => [event, index]));
  const folds = [inOrder, late, lateInRack].map((events) => fold(events, rank));
  console.log(
    `\n${bodies.length} events, ${APPS.length} apps, ${DAYS * 24} h of event time, bodies ${Math.round(bytes / bodies.length)} bytes on average`,
  );
  console.log(`in order: ${describe(folds[0], bodies.length)}`);
  console.log(
    `1 to 5 late among the app's events: ${describe(folds[1], bodies.length)}; differs from in order in: ${differences(folds[0], folds[1])}`,
  );
  console.log(
    `1 to 5 late in the rack's stream: ${describe(folds[2], bodies.length)}; differs from in order in: ${differences(folds[0], folds[2])}`,
  );

  let next = 0;
  const rows = await compare(
    [
      { name: 'floor: parseEvent(body)', fn: () => parseEvent(bodies[next++ % bodies.length]) },
      { name: 'apply, in order', fn: applier(inOrder) },
      { name: "apply, each event 1 to 5 positions late among its app's events", fn: applier(late) },
      { name: "apply, each event 1 to 5 positions late in the rack's stream (information)", fn: applier(lateInRack) },
      {
        name: 'information: the least any timestamp-ordered fold does per event (read the timestamp, find the app, compare with its newest, build its next state)',
        fn: leastFold(inOrder),
      },
    ],
    { rounds: 41 },
  );
  printTable('createRackState().apply per event, against parseEvent of its body', rows);
  console.log(`apply in order / the least fold: ${(rows[1].ratio / rows[4].ratio).toFixed(2)}x`);
  let ok = checkBar('apply in order / parseEvent', rows[1].ratio, 1);
  ok = checkBar('apply 1 to 5 late / parseEvent', rows[2].ratio, 3) && ok;
  return { ok };
}
