import { trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, vi } from 'vitest';
import { setUp } from '../kit/setup.js';
import { createReceiver } from '../../src/index.js';
import type { Worker } from '../../src/inbox.js';
import { workerTelemetry, type AttemptFacts } from '../../src/telemetry/process.js';
import { deferred } from '../kit/time.js';
import { scenarioIt } from '../inbox/databases.js';
import { deliverInServerSpan, event, SECRET, setup } from './inbox-setup.js';
import { everythingSaid, points, registerSdk, total, type TestSdk } from './otel-sdk.js';

/**
 * `mode: 'batched'` emits the default mode's per-attempt telemetry (test/telemetry/inbox.test.ts):
 * a `process` span per handler attempt, ended once the batch statement recorded its outcome.
 */
setUp({ testTimeoutMs: 60_000, hookTimeoutMs: 60_000 });

const BATCHED = { mode: 'batched' as const, concurrency: 4, batchSize: 8 };

const processSpans = (sdk: TestSdk) => sdk.spans().filter((span) => span.name.startsWith('process'));

/** drain() does not wait for a retry scheduled later (10 ms here): drain until `count` process spans ended. */
async function drainUntilSpans(sdk: TestSdk, worker: Worker, count: number) {
  await vi.waitFor(
    async () => {
      await worker.drain();
      expect(processSpans(sdk)).toHaveLength(count);
    },
    { timeout: 20_000, interval: 50 },
  );
}

const byIdThenAttempt = (a: ReadableSpan, b: ReadableSpan) =>
  Number(a.attributes['messaging.message.id']) - Number(b.attributes['messaging.message.id']) ||
  Number(a.attributes['rack_webhooks.delivery.attempt']) - Number(b.attributes['rack_webhooks.delivery.attempt']);

describe.each(['pglite', 'pg'] as const)('batched worker telemetry on %s', (kind) => {
  const scenario = scenarioIt(kind);
  it('a process span per attempt, linked to its receive span; a failed attempt says retry with status ERROR, then the retry its own', async () => {
    const sdk = registerSdk();
    const { inbox, deliver, work } = await setup(kind);
    const receiver = createReceiver({ secrets: SECRET, inbox });
    const handlerSpans: string[] = [];
    const onErrorSpans: string[] = [];
    let capCalls = 0;
    receiver.on('app:budget:cap', () => {
      handlerSpans.push(trace.getActiveSpan()!.spanContext().spanId);
      capCalls++;
      if (capCalls === 1) throw new Error('the first attempt fails');
    });
    receiver.on('app:create', () => {
      handlerSpans.push(trace.getActiveSpan()!.spanContext().spanId);
    });
    receiver.onError(() => {
      onErrorSpans.push(trace.getActiveSpan()?.spanContext().spanId ?? 'none');
    });
    await deliverInServerSpan(sdk, () => deliver(receiver, event('app:budget:cap', 'b1')));
    await deliverInServerSpan(sdk, () => deliver(receiver, event('app:create', 'b2', 'web')));
    const receives = new Map(
      sdk
        .spans()
        .filter((span) => span.name.startsWith('receive'))
        .map((span) => [span.attributes['messaging.message.id'], span.spanContext()]),
    );
    expect(receives.size).toBe(2);

    await drainUntilSpans(sdk, work(receiver, BATCHED), 3);
    const processes = processSpans(sdk).sort(byIdThenAttempt);
    expect(
      processes.map((span) => [
        span.name,
        span.attributes['rack_webhooks.delivery.attempt'],
        span.attributes['rack_webhooks.outcome'],
        span.attributes['error.type'],
        span.status,
      ]),
    ).toEqual([
      ['process app:budget:cap', 1, 'retry', 'handler_failed', { code: 2, message: 'handler_failed' }],
      ['process app:budget:cap', 2, 'done', undefined, { code: 0 }],
      ['process app:create', 1, 'done', undefined, { code: 0 }],
    ]);
    for (const span of processes) {
      const receive = receives.get(span.attributes['messaging.message.id']);
      expect(span.kind).toBe(4);
      expect(span.parentSpanContext).toBeUndefined(); // a trace of its own...
      expect(span.links.map((link) => [link.context.traceId, link.context.spanId])).toEqual([[receive!.traceId, receive!.spanId]]); // ...linked to its receive
      expect(span.attributes).toMatchObject({
        'messaging.system': 'rack-webhooks',
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'process',
        'messaging.destination.name': span.name.slice('process '.length),
        'rack_webhooks.action': span.name.slice('process '.length),
        'rack_webhooks.inbox.table': inbox.table,
      });
    }
    expect(processes.map((span) => span.attributes['rack_webhooks.app'])).toEqual(['billing-api', 'billing-api', 'web']);
    // The handlers ran inside their attempt's span, and onError heard the failure inside the failed attempt's.
    expect(handlerSpans.sort()).toEqual(processes.map((span) => span.spanContext().spanId).sort());
    expect(onErrorSpans).toEqual([processes[0]!.spanContext().spanId]);
    expect(everythingSaid(sdk.spans())).not.toContain('the first attempt fails');

    const metrics = await sdk.collect();
    const attempts = metrics.get('messaging.process.duration');
    expect(attempts?.descriptor.unit).toBe('s');
    expect(
      total(attempts, { 'messaging.operation.name': 'process', 'rack_webhooks.outcome': 'retry', 'error.type': 'handler_failed' }),
    ).toBe(1);
    expect(total(attempts, { 'rack_webhooks.outcome': 'done', 'messaging.destination.name': 'app:budget:cap' })).toBe(1);
    expect(total(attempts, { 'rack_webhooks.outcome': 'done', 'messaging.destination.name': 'app:create' })).toBe(1);
    expect(total(attempts)).toBe(3);
    expect(points(metrics.get('rack_webhooks.deliveries.dead'))).toEqual([]);
  });

  it('a dead delivery: its last span says dead, counted once; one whose worker stopped on its last attempt is counted by recovery', async () => {
    const sdk = registerSdk();
    const { db, inbox, deliver, work } = await setup(kind);
    const receiver = createReceiver({ secrets: SECRET, inbox });
    receiver.on('app:budget:cap', () => {
      throw new Error('always');
    });
    receiver.on('app:create', () => {});
    await deliver(receiver, event('app:budget:cap', 'd1'));
    const crashed = await deliver(receiver, event('app:create', 'c1'));
    // As a worker killed during its second (last) attempt leaves it: running, its lease run out.
    await db.query(
      `UPDATE ${db.table} SET state = 'running', attempts = attempt_base + 2, locked_by = 'gone', locked_until = now() - interval '1 second'
        WHERE id = $1`,
      [crashed.id],
    );
    const worker = work(receiver, { ...BATCHED, maxAttempts: 2 });
    await drainUntilSpans(sdk, worker, 2);
    expect((await inbox.stats()).dead).toBe(2);
    const processes = processSpans(sdk).sort(byIdThenAttempt);
    expect(processes.map((span) => [span.name, span.attributes['rack_webhooks.outcome'], span.status])).toEqual([
      ['process app:budget:cap', 'retry', { code: 2, message: 'handler_failed' }],
      ['process app:budget:cap', 'dead', { code: 2, message: 'handler_failed' }],
    ]);
    expect(processes[1]!.attributes['error.type']).toBe('handler_failed');

    const metrics = await sdk.collect();
    const dead = metrics.get('rack_webhooks.deliveries.dead');
    const at = { 'rack_webhooks.inbox.table': inbox.table };
    expect(total(dead, { ...at, 'messaging.destination.name': 'app:budget:cap' })).toBe(1);
    expect(total(dead, { ...at, 'messaging.destination.name': 'app:create' })).toBe(1);
    expect(total(dead)).toBe(2);
    expect(total(metrics.get('messaging.process.duration'), { 'rack_webhooks.outcome': 'dead', 'error.type': 'handler_failed' })).toBe(1);
    expect(total(metrics.get('messaging.process.duration'))).toBe(2); // recovery is no attempt
  });

  // An option of the worker, whatever the client: on pg.
  scenario('work({ mode: batched, telemetry: false }): no process span, no attempt metric', async () => {
    const sdk = registerSdk();
    const { inbox, deliver, work } = await setup(kind);
    const receiver = createReceiver({ secrets: SECRET, inbox });
    let calls = 0;
    receiver.on('app:budget:cap', () => {
      calls++;
      if (calls === 1) throw new Error('the first attempt fails');
    });
    await deliverInServerSpan(sdk, () => deliver(receiver, event('app:budget:cap', 'off1')));
    const worker = work(receiver, { ...BATCHED, telemetry: false });
    await vi.waitFor(
      async () => {
        await worker.drain();
        expect((await inbox.stats()).done).toBe(1);
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(sdk.spans().map((span) => span.name)).toEqual(['receive app:budget:cap', 'POST /webhooks']);
    const metrics = await sdk.collect();
    expect(points(metrics.get('messaging.process.duration'))).toEqual([]);
    expect(total(metrics.get('messaging.client.consumed.messages'), { 'rack_webhooks.outcome': 'accepted' })).toBe(1);
  });
});

describe('an attempt whose outcome was not recorded, in either mode', () => {
  const claimed = (id: string): AttemptFacts => ({ id, attempt: 1, action: 'app:create', app: 'web', traceContext: undefined });

  it('lost (another worker has it) says lease_lost; a failed record says unrecorded; each span ends with its outcome', async () => {
    const sdk = registerSdk();
    const telemetry = workerTelemetry(true, 'webhook_inbox');
    const recorded = deferred<void>();
    const lost = telemetry.attempt(claimed('1'), async () => {
      await recorded.promise;
      return { kind: 'lease-lost' };
    });
    const unrecorded = telemetry.attempt(claimed('2'), async () => ({ kind: 'unrecorded' }));
    expect(await unrecorded).toEqual({ kind: 'unrecorded' });
    expect(processSpans(sdk).map((span) => span.attributes['messaging.message.id'])).toEqual(['2']); // 1 open until recorded
    recorded.resolve();
    expect(await lost).toEqual({ kind: 'lease-lost' });
    expect(
      processSpans(sdk).map((span) => [span.attributes['messaging.message.id'], span.attributes['rack_webhooks.outcome'], span.status]),
    ).toEqual([
      ['2', 'unrecorded', { code: 2, message: 'inbox_unavailable' }],
      ['1', 'lease_lost', { code: 2, message: 'lease_lost' }],
    ]);
    const metrics = await sdk.collect();
    expect(total(metrics.get('messaging.process.duration'), { 'rack_webhooks.outcome': 'lease_lost' })).toBe(1);
    expect(total(metrics.get('messaging.process.duration'), { 'rack_webhooks.outcome': 'unrecorded' })).toBe(1);
  });
});
