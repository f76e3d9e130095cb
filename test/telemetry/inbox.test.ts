import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { setUp } from '../kit/setup.js';
import { createReceiver } from '../../src/index.js';
import { SNAPSHOT_MAX_AGE_MS } from '../../src/telemetry/inbox-probes.js';
import { deliverInServerSpan, event, SECRET, setup } from './inbox-setup.js';
import { everythingSaid, points, registerSdk, total } from './otel-sdk.js';

// PGlite's first boot compiles its WebAssembly: once, before the tests, with room for a loaded machine.
setUp({ testTimeoutMs: 60_000, hookTimeoutMs: 60_000 });

describe.each(['pglite', 'pg'] as const)('inbox telemetry on %s', (kind) => {
  it('a receive span per stored delivery, its traceparent in the row, and a process span per attempt linked to it', async () => {
    const sdk = registerSdk();
    const { db, inbox, deliver, work } = await setup(kind);
    const receiver = createReceiver({ secrets: SECRET, inbox });
    let calls = 0;
    receiver.on('app:budget:cap', async () => {
      calls++;
      if (calls === 1) throw new Error('the first attempt fails');
    });
    const server = await deliverInServerSpan(sdk, () => deliver(receiver, event('app:budget:cap', 't1')));
    const [receive] = sdk.spans().filter((span) => span.name.startsWith('receive'));
    expect(receive?.parentSpanContext?.spanId).toBe(server.spanId);
    const [row] = await db.query<{ id: string; trace_context: string | null }>(`SELECT id::text AS id, trace_context FROM ${db.table}`);
    expect(receive?.attributes).toMatchObject({
      'messaging.operation.type': 'receive',
      'messaging.message.id': row!.id,
      'rack_webhooks.outcome': 'accepted',
      'rack_webhooks.action': 'app:budget:cap',
      'rack_webhooks.app': 'billing-api',
    });
    const { traceId, spanId } = receive!.spanContext();
    expect(row!.trace_context).toBe(`00-${traceId}-${spanId}-01`);
    const worker = work(receiver);
    // drain() does not wait for a retry scheduled later (10 ms here): drain until both attempts ran.
    const processSpans = () => sdk.spans().filter((span) => span.name.startsWith('process'));
    await vi.waitFor(
      async () => {
        await worker.drain();
        expect(processSpans()).toHaveLength(2);
      },
      { timeout: 20_000, interval: 50 },
    );
    const processes = processSpans();
    expect(
      processes.map((span) => [span.name, span.attributes['rack_webhooks.delivery.attempt'], span.attributes['rack_webhooks.outcome']]),
    ).toEqual([
      ['process app:budget:cap', 1, 'retry'],
      ['process app:budget:cap', 2, 'done'],
    ]);
    for (const span of processes) {
      expect(span.kind).toBe(4);
      expect(span.parentSpanContext).toBeUndefined(); // a trace of its own...
      expect(span.links.map((link) => [link.context.traceId, link.context.spanId])).toEqual([[traceId, spanId]]); // ...linked to the receive
      expect(span.attributes).toMatchObject({
        'messaging.system': 'rack-webhooks',
        'messaging.operation.type': 'process',
        'messaging.message.id': row!.id,
        'messaging.destination.name': 'app:budget:cap',
        'rack_webhooks.app': 'billing-api',
      });
    }
    expect(processes[0]!.status).toEqual({ code: 2, message: 'handler_failed' });
    expect(processes[0]!.attributes['error.type']).toBe('handler_failed');
    expect(everythingSaid(sdk.spans())).not.toContain('the first attempt fails'); // the error message is the row's, not the span's

    const metrics = await sdk.collect();
    const attempts = metrics.get('messaging.process.duration');
    expect(attempts?.descriptor.unit).toBe('s');
    expect(total(attempts, { 'rack_webhooks.outcome': 'retry', 'error.type': 'handler_failed' })).toBe(1);
    expect(total(attempts, { 'rack_webhooks.outcome': 'done' })).toBe(1);
    expect(total(metrics.get('messaging.client.consumed.messages'), { 'rack_webhooks.outcome': 'accepted' })).toBe(1);
  });

  it('dead deliveries, deliveries by state, the oldest pending age and live workers', async () => {
    const sdk = registerSdk();
    const { inbox, deliver, work } = await setup(kind);
    const receiver = createReceiver({ secrets: SECRET, inbox });
    receiver.on('app:budget:cap', () => {
      throw new Error('always');
    });
    receiver.on('app:create', () => {});
    await deliver(receiver, event('app:budget:cap', 'd1'));
    await deliver(receiver, event('app:create', 'c1'));
    await deliver(receiver, { ...event('app:unknown-action', 'u1') }); // stored as ignored

    // No worker in this process yet: nothing reads the table.
    let metrics = await sdk.collect();
    expect(points(metrics.get('rack_webhooks.inbox.deliveries'))).toEqual([]);
    const worker = work(receiver, { maxAttempts: 2 });
    // drain() does not wait for a retry scheduled later (10 ms here): drain until the delivery is dead.
    await vi.waitFor(
      async () => {
        await worker.drain();
        expect((await inbox.stats()).dead).toBe(1);
      },
      { timeout: 20_000, interval: 50 },
    );
    metrics = await sdk.collect();
    expect(total(metrics.get('rack_webhooks.deliveries.dead'), { 'messaging.destination.name': 'app:budget:cap' })).toBe(1);
    expect(total(metrics.get('messaging.process.duration'), { 'rack_webhooks.outcome': 'dead' })).toBe(1);
    const byState = metrics.get('rack_webhooks.inbox.deliveries');
    const table = inbox.table;
    const stateOf = (state: string) => points(byState, { 'rack_webhooks.state': state, 'rack_webhooks.inbox.table': table })[0]?.value;
    // The counts may be up to 5 s old: read them again until the drain shows (never a sleep in an assertion).
    await expect
      .poll(
        async () => {
          const fresh = (await sdk.collect()).get('rack_webhooks.inbox.deliveries');
          return ['pending', 'done', 'dead', 'ignored'].map((state) => points(fresh, { 'rack_webhooks.state': state })[0]?.value);
        },
        { timeout: 15_000, interval: 500 },
      )
      .toEqual([0, 1, 1, 1]);
    expect(stateOf('running')).toBeDefined();
    expect(points(metrics.get('rack_webhooks.inbox.oldest_pending.age'), { 'rack_webhooks.inbox.table': table })).toHaveLength(1);
    expect(metrics.get('rack_webhooks.inbox.oldest_pending.age')?.descriptor.unit).toBe('s');
    expect(points(metrics.get('rack_webhooks.workers.live'), { 'rack_webhooks.inbox.table': table })[0]?.value).toBe(1);

    await worker.stop();
    const after = await sdk.collect();
    expect(points(after.get('rack_webhooks.workers.live'), { 'rack_webhooks.inbox.table': table })[0]?.value).toBe(0);
  });

  it('telemetry: false on the inbox: no span, no metric, no trace context stored', async () => {
    const sdk = registerSdk();
    const { db, inbox, deliver, work } = await setup(kind, { telemetry: false });
    const receiver = createReceiver({ secrets: SECRET, inbox });
    receiver.on('app:budget:cap', () => {});
    await deliverInServerSpan(sdk, () => deliver(receiver, event('app:budget:cap', 'off1')));
    await work(receiver).drain();
    expect(sdk.spans().map((span) => span.name)).toEqual(['POST /webhooks']); // the test's own server span only
    expect((await db.query(`SELECT trace_context FROM ${db.table}`)).map((row) => row['trace_context'])).toEqual([null]);
    const metrics = await sdk.collect();
    for (const name of ['messaging.client.consumed.messages', 'messaging.process.duration', 'rack_webhooks.inbox.deliveries']) {
      expect(points(metrics.get(name))).toEqual([]);
    }
  });
});

// On pg only: on PGlite the waiting handler's transaction holds the only connection, so the
// counts cannot be read while it waits (a collection then gets the last counts after 1 s).
describe('oldest pending age on pg', () => {
  it('the oldest pending age: how long the oldest delivery still waiting has waited; counts read at most once per 5 s', async () => {
    // The gauges read the table at most once per SNAPSHOT_MAX_AGE_MS of Date.now(): the test moves
    // that clock past it instead of waiting 5 s for each fresh read (the age itself is the database's now()).
    let now = Date.now();
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    onTestFinished(() => vi.mocked(Date.now).mockRestore());
    const sdk = registerSdk();
    const { inbox, deliver, work } = await setup('pg');
    const receiver = createReceiver({ secrets: SECRET, inbox });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    receiver.on('app:budget:cap', () => gate);
    await deliver(receiver, event('app:budget:cap', 'p1'));
    await deliver(receiver, event('app:budget:cap', 'p2'));
    // One at a time, and the first handler waits: the second delivery stays pending.
    const worker = work(receiver, { concurrency: 1, batchSize: 1, claimAhead: 0 });
    const read = async ({ fresh }: { fresh: boolean }) => {
      if (fresh) now += SNAPSHOT_MAX_AGE_MS;
      const metrics = await sdk.collect();
      const at = { 'rack_webhooks.inbox.table': inbox.table };
      return {
        age: points(metrics.get('rack_webhooks.inbox.oldest_pending.age'), at)[0]?.value as number | undefined,
        running: points(metrics.get('rack_webhooks.inbox.deliveries'), { ...at, 'rack_webhooks.state': 'running' })[0]?.value,
        pending: points(metrics.get('rack_webhooks.inbox.deliveries'), { ...at, 'rack_webhooks.state': 'pending' })[0]?.value,
      };
    };
    await expect.poll(() => read({ fresh: true }), { timeout: 15_000, interval: 50 }).toMatchObject({ running: 1, pending: 1 });
    const { age } = await read({ fresh: false });
    expect(age).toBeGreaterThan(0);
    expect(age).toBeLessThan(60);
    release();
    await worker.drain();
    // Within 5 s of the last read a collection gets the cached counts, not a query...
    expect(await read({ fresh: false })).toMatchObject({ running: 1, pending: 1, age });
    // ...and past them, the table as it is.
    await expect.poll(async () => (await read({ fresh: true })).age, { timeout: 15_000, interval: 50 }).toBe(0);
  });
});

// On pg: options of the worker and the receiver, whatever the client (the suite above runs on PGlite too).
describe('telemetry: false on a worker, or on the receiver', () => {
  it('work({ telemetry: false }): no process span; the receiver still traces its deliveries', async () => {
    const sdk = registerSdk();
    const { inbox, deliver, work } = await setup('pg');
    const receiver = createReceiver({ secrets: SECRET, inbox });
    receiver.on('app:budget:cap', () => {});
    await deliver(receiver, event('app:budget:cap', 'w1'));
    await work(receiver, { telemetry: false }).drain();
    expect(sdk.spans().map((span) => span.name)).toEqual(['receive app:budget:cap']);
  });

  it('createReceiver({ inbox, telemetry: false }): neither receive nor process spans', async () => {
    const sdk = registerSdk();
    const { inbox, deliver, work } = await setup('pg');
    const receiver = createReceiver({ secrets: SECRET, inbox, telemetry: false });
    receiver.on('app:budget:cap', () => {});
    await deliver(receiver, event('app:budget:cap', 'r1'));
    await work(receiver).drain();
    expect(sdk.spans()).toEqual([]);
  });
});
