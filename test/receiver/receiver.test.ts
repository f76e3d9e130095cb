import { describe, expect, it, vi } from 'vitest';
import {
  MemoryDedupStore,
  ROUTINE_ACTIONS,
  WebhookDedupError,
  WebhookHandlerError,
  WebhookPayloadError,
  WebhookVerificationError,
  createReceiver,
  type DedupStore,
  type ReceiverLogRecord,
} from '../../src/index.js';
import { validators } from '../../src/validate.js'; // also registers them, for `validate: true`
import { SECRET, T0, delivery, manualClock } from './helpers.js';

const base = () => {
  const clock = manualClock();
  return { clock, options: { secrets: SECRET, now: clock.now, dedup: new MemoryDedupStore({ now: clock.now }) } };
};

describe('dispatch', () => {
  it('calls the handler of the exact action with the parsed event, once', async () => {
    const { options } = base();
    const receiver = createReceiver(options);
    const fired = vi.fn();
    const other = vi.fn();
    receiver.on('app:budget:auto-shutdown:fired', fired).on('app:budget:cap', other);
    const result = await receiver.receive(delivery('app:budget:auto-shutdown:fired'));
    expect(result.outcome).toBe('processed');
    expect(fired).toHaveBeenCalledTimes(1);
    expect(fired.mock.calls[0]![0]).toMatchObject({ action: 'app:budget:auto-shutdown:fired', data: { actor: 'system' } });
    expect(other).not.toHaveBeenCalled();
  });

  it('takes lists and prefix patterns, each handler once per delivery', async () => {
    const { options } = base();
    const receiver = createReceiver(options);
    const list = vi.fn();
    const prefix = vi.fn();
    const app = vi.fn();
    receiver.on(['app:budget:cap', 'app:budget:auto-shutdown:failed'], list);
    receiver.on('app:budget:auto-shutdown:*', prefix).on('app:budget:*', prefix);
    receiver.on('app:*', app);
    await receiver.receive(delivery('app:budget:auto-shutdown:failed'));
    await receiver.receive(delivery('app:budget:cap'));
    await receiver.receive(delivery('build:create'));
    expect(list).toHaveBeenCalledTimes(2);
    expect(prefix).toHaveBeenCalledTimes(2); // failed (both patterns, once) and cap
    expect(app).toHaveBeenCalledTimes(2);
  });

  it('sends unknown actions to onAny only, with outcome ignored', async () => {
    const { options } = base();
    const receiver = createReceiver(options);
    const any = vi.fn();
    const everythingApp = vi.fn();
    receiver.onAny(any).on('app:*', everythingApp);
    const body = '{"action":"app:budget:forecast","status":"success","timestamp":"2027-01-01T00:00:00Z","data":{"rack":"r"}}';
    const { headers } = delivery('app:create');
    headers['service-signature'] = (await import('../../src/index.js')).signSync(body, { secrets: SECRET, timestamp: T0 });
    const result = await receiver.receive({ body, headers });
    expect(result.outcome).toBe('ignored');
    expect(any).toHaveBeenCalledTimes(1);
    expect(everythingApp).not.toHaveBeenCalled();
  });

  it('treats an action named like an Object.prototype member as unknown, with a tick_id deduplicated', async () => {
    const { options } = base();
    const receiver = createReceiver({ ...options, validate: true });
    const any = vi.fn();
    receiver.onAny(any);
    const { signSync } = await import('../../src/index.js');
    for (const action of ['constructor', '__proto__', 'toString']) {
      const body = JSON.stringify({
        action,
        status: 'success',
        timestamp: '2026-04-27T10:30:00Z',
        data: { rack: 'r', tick_id: `tick-${action}` },
      });
      const headers = { 'service-signature': signSync(body, { secrets: SECRET, timestamp: T0 }) };
      expect((await receiver.receive({ body, headers })).outcome).toBe('ignored');
      expect((await receiver.receive({ body, headers })).outcome).toBe('duplicate');
    }
    expect(any).toHaveBeenCalledTimes(3);
  });

  it('a name close to a known action throws a TypeError naming it: a typo, another case, a space, a pattern', () => {
    const receiver = createReceiver({ secrets: SECRET, logger: () => {} });
    const on = (name: string) => () => receiver.on(name as 'app:create', () => {});
    const cases: [string, string][] = [
      ['app:budget:auto-shutdown:fird', 'app:budget:auto-shutdown:fired'],
      ['app:budget:auto-shutdown:fired ', 'app:budget:auto-shutdown:fired'],
      ['App:Budget:Cap', 'app:budget:cap'],
      ['app.budget.auto_shutdown.armed', 'app:budget:auto-shutdown:armed'],
      ['app:budget:auto-shutdwn:*', 'app:budget:auto-shutdown:*'],
    ];
    for (const [typo, intended] of cases) {
      expect(on(typo), typo).toThrow(TypeError);
      expect(on(typo), typo).toThrow(`did you mean ${JSON.stringify(intended)}?`);
    }
    expect(() => receiver.on(['app:budget:cap', 'app:budget:capp' as 'app:budget:cap'], () => {})).toThrow('"app:budget:cap"');
  });

  it('a name far from every known action is accepted with a warning naming it; warnUnknownActions: false silences it', async () => {
    const records: ReceiverLogRecord[] = [];
    const receiver = createReceiver({ secrets: SECRET, dedup: false, logger: (record) => records.push(record) });
    const handler = vi.fn();
    receiver.on('app:budget:forecast' as 'app:create', handler).on('app:budget:forecast:*' as 'app:*', handler);
    const warnings = records.filter((record) => record.event === 'unknown_action_handler');
    expect(warnings.map((record) => [record.level, record.action])).toEqual([
      ['warn', 'app:budget:forecast'],
      ['warn', 'app:budget:forecast:*'],
    ]);
    // It says the handler will not run, and the pattern that fits (issue 38, point 7).
    expect(warnings[0]!.message).toBe('on("app:budget:forecast"): no such action: this handler will not run; use on("app:budget:*")?');
    expect(warnings[1]!.message).toMatch(/will not run; use on\("app:budget:\*"\)\?$/);
    // Known names and patterns warn about nothing.
    receiver.on('app:budget:auto-shutdown:*', handler).on('build:*', handler).on('app:budget:set', handler);
    expect(records).toHaveLength(2);

    const quiet: ReceiverLogRecord[] = [];
    createReceiver({ secrets: SECRET, warnUnknownActions: false, logger: (record) => quiet.push(record) }).on(
      'app:budget:forecast' as 'app:create',
      handler,
    );
    expect(quiet).toEqual([]);

    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      createReceiver({ secrets: SECRET }).on('app:budget:forecast' as 'app:create', handler);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]![0]).toMatch(/^\[rack-webhooks\] on\("app:budget:forecast"\): no such action: this handler will not run; /);
      // No known prefix, no pattern suggested.
      createReceiver({ secrets: SECRET }).on('deploy:started' as 'app:create', handler);
      expect(warn.mock.calls[1]![0]).toMatch(/: no such action: this handler will not run$/);
    } finally {
      warn.mockRestore();
    }
  });

  it('off removes a handler from a pattern or everywhere', async () => {
    const { options } = base();
    const receiver = createReceiver({ ...options, dedup: false });
    const handler = vi.fn();
    receiver.on('app:budget:cap', handler).on('app:budget:*', handler).onAny(handler);
    receiver.off('app:budget:cap', handler);
    await receiver.receive(delivery('app:budget:cap'));
    // Still registered through app:budget:* and onAny: a function runs at most once per delivery.
    expect(handler).toHaveBeenCalledTimes(1);
    receiver.off('app:budget:*', handler);
    await receiver.receive(delivery('app:budget:cap'));
    expect(handler).toHaveBeenCalledTimes(2); // onAny only
    receiver.off(handler);
    await receiver.receive(delivery('app:budget:cap'));
    expect(handler).toHaveBeenCalledTimes(2);
  });

  it('runs the handlers of one event concurrently', async () => {
    const { options } = base();
    const receiver = createReceiver(options);
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    receiver.on('app:budget:cap', async () => {
      order.push('a start');
      await gate;
      order.push('a end');
    });
    receiver.on('app:budget:cap', async () => {
      order.push('b start');
      release();
    });
    await receiver.receive(delivery('app:budget:cap'));
    expect(order).toEqual(['a start', 'b start', 'a end']);
  });

  it('ignores the routine actions before any handler or claim when told to', async () => {
    const { options } = base();
    const store = new MemoryDedupStore();
    const receiver = createReceiver({ ...options, dedup: store, ignore: ROUTINE_ACTIONS });
    const any = vi.fn();
    receiver.onAny(any);
    expect((await receiver.receive(delivery('app:budget:auto-shutdown:noop'))).outcome).toBe('ignored');
    expect((await receiver.receive(delivery('app:budget:auto-shutdown:simulated'))).outcome).toBe('ignored');
    expect(any).not.toHaveBeenCalled();
    expect(store.size).toBe(0);
    expect((await receiver.receive(delivery('app:budget:auto-shutdown:fired'))).outcome).toBe('processed');
  });
});

describe('handler failures', () => {
  it('gathers every failure into one WebhookHandlerError carrying the event, and onError sees it', async () => {
    const { options } = base();
    const receiver = createReceiver(options);
    const seen = vi.fn();
    receiver.on('app:budget:cap', () => {
      throw new Error('chat down');
    });
    receiver.on('app:budget:cap', async () => Promise.reject(new Error('pager down')));
    receiver.on('app:budget:cap', () => 'fine');
    receiver.onError(seen);
    const error = await receiver.receive(delivery('app:budget:cap')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookHandlerError);
    const handlerError = error as WebhookHandlerError;
    expect(handlerError.status).toBe(500);
    expect(handlerError.code).toBe('handler_failed');
    expect(handlerError.errors.map((e: Error) => e.message).sort()).toEqual(['chat down', 'pager down']);
    expect(handlerError.event.action).toBe('app:budget:cap');
    expect(seen).toHaveBeenCalledWith(handlerError);
  });

  it('an error inside onError never escapes and is logged', async () => {
    const { options } = base();
    const records: ReceiverLogRecord[] = [];
    const receiver = createReceiver({ ...options, logger: (r) => records.push(r) });
    receiver.on('app:budget:cap', () => Promise.reject(new Error('x')));
    receiver.onError(() => {
      throw new Error('onError broke');
    });
    receiver.onError(async () => Promise.reject(new Error('async onError broke')));
    await expect(receiver.receive(delivery('app:budget:cap'))).rejects.toBeInstanceOf(WebhookHandlerError);
    expect(records.filter((r) => r.event === 'on_error_failed')).toHaveLength(2);
    const failed = records.find((r) => r.event === 'handler_failed')!;
    expect(failed.message).toBe('1 handler failed (Error); the error passed to onError has the details');
    expect(JSON.stringify(records)).not.toMatch(/onError broke|"x"/);
  });

  // A handler may throw anything. Each of these once escaped as a bare TypeError: onError never
  // heard of it, the claims stayed held, and the next copy was answered as a duplicate.
  it.each([
    ['a null-prototype object', () => Object.create(null) as unknown],
    ['a Symbol', () => Symbol('s')],
    [
      'an object whose toString throws',
      () => ({
        toString: () => {
          throw new Error('no');
        },
      }),
    ],
    ['null', () => null],
    [
      'an Error whose name getter throws',
      () =>
        Object.defineProperty(new Error('m'), 'name', {
          get: () => {
            throw new Error('no');
          },
        }),
    ],
  ])('a handler throwing %s still fails as a WebhookHandlerError, reported, with the claims released', async (_, thrown) => {
    for (const acknowledge of ['after-handlers', 'before-handlers'] as const) {
      const { options } = base();
      const records: ReceiverLogRecord[] = [];
      const seen = vi.fn();
      const receiver = createReceiver({ ...options, logger: (r) => records.push(r) }).onError(seen);
      let calls = 0;
      receiver.on('app:budget:auto-shutdown:fired', () => {
        calls++;
        throw thrown();
      });
      const copy = delivery('app:budget:auto-shutdown:fired');
      if (acknowledge === 'after-handlers') {
        const error = await receiver.receive(copy).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(WebhookHandlerError);
        expect((error as WebhookHandlerError).message).toMatch(/^1 handler failed for app:budget:auto-shutdown:fired: /);
      } else {
        expect((await receiver.receive(copy, { acknowledge })).outcome).toBe('processed');
        await vi.waitFor(() => expect(seen).toHaveBeenCalledTimes(1));
      }
      expect(seen).toHaveBeenCalledWith(expect.any(WebhookHandlerError));
      expect(records.filter((r) => r.event === 'handler_failed')).toHaveLength(1);
      await receiver.receive(copy).catch(() => {});
      expect(calls).toBe(2); // released: the copy ran the handler again instead of being dropped
    }
  });

  it('a handler returning an object whose then getter throws fails like a throwing handler', async () => {
    const { options } = base();
    const receiver = createReceiver(options);
    receiver.on('app:budget:cap', () =>
      Object.defineProperty({}, 'then', {
        get: () => {
          throw new Error('then broke');
        },
      }),
    );
    const error = await receiver.receive(delivery('app:budget:cap')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookHandlerError);
    expect((error as WebhookHandlerError).errors.map((e: Error) => e.message)).toEqual(['then broke']);
  });

  it('an onError handler throwing a value whose code getter throws is still contained and logged', async () => {
    const { options } = base();
    const records: ReceiverLogRecord[] = [];
    const receiver = createReceiver({ ...options, logger: (r) => records.push(r) });
    receiver.on('app:budget:cap', () => Promise.reject(new Error('x')));
    receiver.onError(() => {
      throw Object.defineProperty({}, 'code', {
        get: () => {
          throw new Error('no');
        },
      });
    });
    await expect(receiver.receive(delivery('app:budget:cap'))).rejects.toBeInstanceOf(WebhookHandlerError);
    expect(records.find((r) => r.event === 'on_error_failed')).toMatchObject({ code: 'unknown_error' });
  });

  it('releases the claims so a copy can be processed, unless told to keep them', async () => {
    for (const releaseOnError of [true, false]) {
      const { options } = base();
      const receiver = createReceiver({ ...options, releaseOnError });
      let calls = 0;
      receiver.on('app:budget:auto-shutdown:fired', () => {
        calls++;
        if (calls === 1) throw new Error('first attempt fails');
      });
      await expect(receiver.receive(delivery('app:budget:auto-shutdown:fired'))).rejects.toBeInstanceOf(WebhookHandlerError);
      const second = await receiver.receive(delivery('app:budget:auto-shutdown:fired'));
      expect(second.outcome).toBe(releaseOnError ? 'processed' : 'duplicate');
      expect(calls).toBe(releaseOnError ? 2 : 1);
    }
  });
});

describe('when receive() settles', () => {
  it('always returns a promise: a forged delivery is a rejection, never a synchronous throw', async () => {
    const { options } = base();
    const receiver = createReceiver(options);
    let pending: Promise<unknown> | undefined;
    expect(() => {
      pending = receiver.receive({ ...delivery('app:budget:cap'), headers: { 'service-signature': 't=1,v1=' + '0'.repeat(64) } });
    }).not.toThrow();
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).rejects.toBeInstanceOf(WebhookVerificationError);
  });

  it('waits for a handler that returns a thenable that is not a native promise', async () => {
    const { options } = base();
    const receiver = createReceiver(options);
    const order: string[] = [];
    receiver.on('app:budget:cap', () => ({
      then(resolve: () => void) {
        setTimeout(() => {
          order.push('handler done');
          resolve();
        }, 5);
      },
    }));
    await receiver.receive(delivery('app:budget:cap'));
    order.push('receive settled');
    expect(order).toEqual(['handler done', 'receive settled']);
  });

  it("'before-handlers' settles before a slow handler ends; a failure then goes to onError and frees the keys", async () => {
    const { options } = base();
    const receiver = createReceiver(options);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    receiver.on('app:budget:auto-shutdown:fired', async () => {
      calls++;
      if (calls === 1) {
        await gate;
        throw new Error('pager down');
      }
    });
    const seen = new Promise<unknown>((resolve) => receiver.onError(resolve));
    const result = await receiver.receive(delivery('app:budget:auto-shutdown:fired'), { acknowledge: 'before-handlers' });
    expect(result.outcome).toBe('processed');
    release();
    const error = await seen;
    expect(error).toBeInstanceOf(WebhookHandlerError);
    expect((error as WebhookHandlerError).errors.map((e: Error) => e.message)).toEqual(['pager down']);
    // The claims were given back, so a copy of the delivery is processed, not dropped.
    expect((await receiver.receive(delivery('app:budget:auto-shutdown:fired'))).outcome).toBe('processed');
  });

  it("'before-handlers' with a handler that throws synchronously still answers processed and reports it", async () => {
    const { options } = base();
    const receiver = createReceiver(options);
    receiver.on('app:budget:cap', () => {
      throw new Error('sync failure');
    });
    const seen = new Promise<unknown>((resolve) => receiver.onError(resolve));
    const result = await receiver.receive(delivery('app:budget:cap'), { acknowledge: 'before-handlers' });
    expect(result.outcome).toBe('processed');
    expect(await seen).toBeInstanceOf(WebhookHandlerError);
  });
});

describe('replays and duplicates', () => {
  it('refuses a replay inside the window; after the window the time check refuses it', async () => {
    const { clock, options } = base();
    const receiver = createReceiver(options);
    const handler = vi.fn();
    receiver.on('app:budget:cap', handler);
    const copy = delivery('app:budget:cap');
    expect((await receiver.receive(copy)).outcome).toBe('processed');
    clock.advance(299);
    expect((await receiver.receive(copy)).outcome).toBe('duplicate');
    clock.advance(2); // t + 301: the replay key has expired, and so has the window
    const error = await receiver.receive(copy).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect((error as WebhookVerificationError).code).toBe('timestamp_too_old');
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('drops the same event sent again with another t and new time fields; processes one that says something else', async () => {
    const { clock, options } = base();
    const receiver = createReceiver(options);
    const handler = vi.fn();
    receiver.on('app:budget:auto-shutdown:fired', handler);
    await receiver.receive(delivery('app:budget:auto-shutdown:fired'));
    clock.advance(60);
    const resent = delivery('app:budget:auto-shutdown:fired', { t: T0 + 60, patch: { shutdown_at: '2026-04-27T10:31:00Z' } });
    expect((await receiver.receive(resent)).outcome).toBe('duplicate');
    // Same tick and action, but another spend: another fact, which on-call must see.
    const other = delivery('app:budget:auto-shutdown:fired', { t: T0 + 60, patch: { spend_usd: '151.00' } });
    expect((await receiver.receive(other)).outcome).toBe('processed');
    expect(handler).toHaveBeenCalledTimes(2);
    // Same tick, another action: a different event.
    expect((await receiver.receive(delivery('app:budget:auto-shutdown:armed', { t: T0 + 60 }))).outcome).toBe('processed');
    expect(handler).toHaveBeenCalledTimes(2);
  });

  it('holds the body key and the event key for eventKeyTtl (the body key at least while t can pass the window)', async () => {
    const claims: Array<{ key: string; ttlSeconds: number }> = [];
    const recording: DedupStore = {
      claim: async () => true,
      release: async () => {},
      claimAll: async (c) => (claims.push(...c), true),
    };
    const clock = manualClock(T0 + 100);
    const receiver = createReceiver({ secrets: SECRET, now: clock.now, dedup: recording, tolerance: 300, eventKeyTtl: 3600 });
    await receiver.receive(delivery('app:budget:auto-shutdown:fired', { t: T0 }));
    expect(claims).toEqual([
      { key: expect.stringMatching(/^body:[A-Za-z0-9_-]{43}$/), ttlSeconds: 3600 },
      {
        key: expect.stringMatching(
          /^event:app:budget:auto-shutdown:fired:tick-2026-04-27T10:30:00Z-9fe533fc297241caa6ca5760dc9b9836:[A-Za-z0-9_-]{43}$/,
        ),
        ttlSeconds: 3600,
      },
    ]);
    // With an event key shorter than the window, the body key is held while t can still pass: t + 300 - now + 1.
    claims.length = 0;
    const short = createReceiver({ secrets: SECRET, now: clock.now, dedup: recording, tolerance: 300, eventKeyTtl: 60 });
    await short.receive(delivery('app:budget:cap', { t: T0 }));
    expect(claims).toEqual([{ key: expect.stringMatching(/^body:/), ttlSeconds: 201 }]);
  });

  it('with dedup: false every copy is processed', async () => {
    const { options } = base();
    const receiver = createReceiver({ ...options, dedup: false });
    const handler = vi.fn();
    receiver.on('app:budget:cap', handler);
    await receiver.receive(delivery('app:budget:cap'));
    await receiver.receive(delivery('app:budget:cap'));
    expect(handler).toHaveBeenCalledTimes(2);
  });
});

describe('long windows', () => {
  // A TTL past the memory store's Int32 seconds once wrapped into one already expired: dedup off.
  it('a tolerance or eventKeyTtl of 2^31 s and more still drops the copy', async () => {
    for (const extra of [{ tolerance: 2 ** 31 }, { tolerance: Number.MAX_SAFE_INTEGER }, { eventKeyTtl: 2 ** 31 }]) {
      const receiver = createReceiver({ secrets: SECRET, now: () => T0 * 1000, ...extra });
      const copy = delivery('app:budget:auto-shutdown:fired');
      expect((await receiver.receive(copy)).outcome).toBe('processed');
      expect((await receiver.receive(copy)).outcome).toBe('duplicate');
      // Same event, new time field: only the event key can catch it.
      const later = delivery('app:budget:auto-shutdown:fired', { patch: { shutdown_at: '2026-04-27T10:35:00Z' } });
      expect((await receiver.receive(later)).outcome).toBe('duplicate');
    }
  });
});

describe('dedup store failure policy', () => {
  const broken: DedupStore = {
    claim: () => Promise.reject(new Error('ECONNREFUSED')),
    release: () => Promise.reject(new Error('ECONNREFUSED')),
  };
  it("'open' (default) processes the delivery and reports the store error", async () => {
    const { options } = base();
    const records: ReceiverLogRecord[] = [];
    const receiver = createReceiver({ ...options, dedup: broken, logger: (r) => records.push(r) });
    const handler = vi.fn();
    const onError = vi.fn();
    receiver.on('app:budget:cap', handler).onError(onError);
    expect((await receiver.receive(delivery('app:budget:cap'))).outcome).toBe('processed');
    expect(handler).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0]![0]).toBeInstanceOf(WebhookDedupError);
    expect(records.find((r) => r.event === 'dedup_unavailable')).toMatchObject({ level: 'warn', code: 'dedup_unavailable' });
  });
  it("'closed' refuses with a 503 WebhookDedupError and runs no handler", async () => {
    const { options } = base();
    const receiver = createReceiver({ ...options, dedup: broken, dedupFailure: 'closed' });
    const handler = vi.fn();
    receiver.on('app:budget:cap', handler);
    const error = await receiver.receive(delivery('app:budget:cap')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookDedupError);
    expect(error).toMatchObject({ status: 503, code: 'dedup_unavailable' });
    expect(handler).not.toHaveBeenCalled();
  });
});

describe('headers and options', () => {
  it.each([
    ['a lower-case object (Node)', (h: string) => ({ 'service-signature': h })],
    ['an object with original case', (h: string) => ({ 'Service-Signature': h })],
    ['a string array', (h: string) => ({ 'service-signature': [h] })],
    ['fetch Headers', (h: string) => new Headers({ 'Service-Signature': h })],
    ['a Map', (h: string) => new Map([['SERVICE-SIGNATURE', h]])],
    // Not a HeadersInput by type, but what untyped code can hand over: skipped, never a crash.
    [
      'entries mixed with things that are not [name, value] pairs',
      (h: string) => [5, null, [Symbol('x'), 'v'], 'text', ['service-signature', h]] as never,
    ],
    [
      'a Map with a Symbol key too',
      (h: string) =>
        new Map<unknown, string>([
          [Symbol('x'), 'v'],
          ['Service-Signature', h],
        ]) as never,
    ],
  ])('finds the signature header in %s', async (_, make) => {
    const { options } = base();
    const { body, headers } = delivery('app:budget:cap');
    const result = await createReceiver(options).receive({ body, headers: make(headers['service-signature']!) });
    expect(result.outcome).toBe('processed');
  });

  it('a missing delivery is a TypeError that says what receive expects', async () => {
    const receiver = createReceiver(base().options);
    for (const delivery of [null, undefined, 'body']) {
      await expect(receiver.receive(delivery as never)).rejects.toThrow(
        /^receive expects \{ body, headers \}, got (null|undefined|string)$/,
      );
    }
  });

  it('reads a vendor-prefixed header name when configured', async () => {
    const { options } = base();
    const receiver = createReceiver({ ...options, headerName: 'Acme-Signature' });
    expect((await receiver.receive(delivery('app:budget:cap', { headerName: 'Acme-Signature' }))).outcome).toBe('processed');
    const error = await receiver.receive(delivery('app:budget:cap')).catch((e: unknown) => e);
    expect((error as WebhookVerificationError).code).toBe('missing_header');
  });

  it('fails at construction on a bad configuration, not on the first delivery', () => {
    expect(() => createReceiver({ secrets: '' })).toThrow(WebhookVerificationError);
    expect(() => createReceiver({ secrets: 'k', tolerance: -1 })).toThrow(RangeError);
    expect(() => createReceiver({ secrets: 'k', eventKeyTtl: 0 })).toThrow(RangeError);
    expect(() => createReceiver({ secrets: 'k', headerName: ' ' })).toThrow(TypeError);
    expect(() => createReceiver({ secrets: 'k', dedupFailure: 'maybe' as 'open' })).toThrow(RangeError);
    expect(() => createReceiver({ secrets: 'k', ignore: ['app:bud*'] })).toThrow(TypeError);
    expect(() => createReceiver({ secrets: 'k' }).on('app:*budget' as 'app:*', () => {})).toThrow(TypeError);
  });

  it('rejects bad bodies with WebhookPayloadError after a good signature', async () => {
    const { options } = base();
    const { signSync } = await import('../../src/index.js');
    const body =
      '{"action":"app:scale-override:toggled","status":"success","timestamp":"2026-04-27T10:30:00Z","data":{"rack":"r","app":"a","actor":"x","service":"web","state":"maybe"}}';
    const receiver = createReceiver({ ...options, validate: validators });
    const error = await receiver
      .receive({ body, headers: { 'service-signature': signSync(body, { secrets: SECRET, timestamp: T0 }) } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookPayloadError);
    expect((error as WebhookPayloadError).path).toBe('/data/state');
  });
});

describe('logging', () => {
  it('writes structured records without secrets, signatures or bodies, and says when a delivery was unsigned', async () => {
    const { options } = base();
    const records: ReceiverLogRecord[] = [];
    const receiver = createReceiver({ ...options, logger: (r) => records.push(r) });
    const signed = delivery('app:budget:auto-shutdown:fired');
    await receiver.receive(signed);
    await receiver.receive(signed);
    await receiver.receive({ body: signed.body, headers: {} }).catch(() => {});
    await receiver
      .receive({ body: signed.body, headers: { 'service-signature': signed.headers['service-signature']!.replace(/.$/, '0') } })
      .catch(() => {});
    expect(records.map((r) => r.event)).toEqual(['processed', 'duplicate', 'rejected', 'rejected']);
    expect(records[0]).toMatchObject({
      level: 'info',
      action: 'app:budget:auto-shutdown:fired',
      timestamp: T0,
      secretIndex: 0,
      tickId: expect.stringMatching(/^tick-/),
    });
    expect(records[2]).toMatchObject({ level: 'warn', code: 'missing_header' });
    expect(records[2]!.message).toMatch(/carries no Service-Signature header, nor any \*-Signature header.*: it was sent unsigned/);
    const text = JSON.stringify(records);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(signed.headers['service-signature']!.slice(-64));
    expect(text).not.toContain('billing-api');
  });

  it('a throwing logger never breaks a delivery', async () => {
    const { options } = base();
    const receiver = createReceiver({
      ...options,
      logger: () => {
        throw new Error('log sink down');
      },
    });
    expect((await receiver.receive(delivery('app:budget:cap'))).outcome).toBe('processed');
  });
});
