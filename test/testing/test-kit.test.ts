import { describe, expect, it } from 'vitest';
import { createFetchHandler } from '../../src/adapters/web.js';
import { INTEGER_FIELDS } from '../../src/generated/catalog.js';
import { WEBHOOK_ACTIONS, createReceiver, parseEvent, verifySync } from '../../src/index.js';
import '../../src/validate.js'; // `validate: true` needs the validators registered
import {
  createSignedRequest,
  createSignedRequestSync,
  createTestEvent,
  rackTickId,
  rackTimestamp,
  toFetchRequest,
} from '../../src/testing/index.js';

describe('createTestEvent', () => {
  it.each(WEBHOOK_ACTIONS.map((a) => [a] as const))('%s: realistic, valid against its schema, shaped as racks send it', (action) => {
    const event = createTestEvent(action);
    expect(event.action).toBe(action);
    for (const [field, value] of Object.entries(event.data)) expect(typeof value, field).toBe('string');
    expect(event.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/);
    const parsed = parseEvent(JSON.stringify(event), { validate: true });
    for (const field of INTEGER_FIELDS[action] ?? []) expect(typeof (parsed.data as Record<string, unknown>)[field]).toBe('number');
  });

  it("gives every event with a tick_id a fresh one, in the rack's shape", () => {
    const a = createTestEvent('app:budget:auto-shutdown:fired');
    const b = createTestEvent('app:budget:auto-shutdown:fired');
    expect(a.data.tick_id).not.toBe(b.data.tick_id);
    expect(a.data.tick_id).toMatch(/^tick-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z-[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(rackTickId()).toMatch(/^tick-/);
    expect(rackTimestamp(new Date('2026-04-27T10:30:00.100Z'))).toMatch(/^2026-04-27T10:30:00\.1\d{0,8}Z$/);
  });

  it('puts every time in data relative to the timestamp, keeping the lifecycle in order, unless overridden', () => {
    const seconds = (time: string) => Date.parse(time) / 1000;
    const armed = createTestEvent('app:budget:auto-shutdown:armed', { timestamp: '2026-11-27T20:00:00.123456789Z' });
    expect(armed.data).toMatchObject({ scheduled_at: '2026-11-27T20:00:00Z', expected_shutdown_at: '2026-11-27T21:00:00Z' });
    expect(armed.data.tick_id).toMatch(/^tick-2026-11-27T20:00:00Z-/);
    const fired = createTestEvent('app:budget:auto-shutdown:fired', { timestamp: '2026-11-27T21:00:00Z' });
    expect(fired.data).toMatchObject({ shutdown_at: '2026-11-27T21:00:00Z' });
    expect(fired.data.tick_id).toMatch(/^tick-2026-11-27T20:00:00Z-/); // the tick that armed it
    expect(JSON.parse(fired.data.snapshot_annotation!)).toMatchObject({ shutdown_at: '2026-11-27T21:00:00Z' });
    const cancelled = createTestEvent('app:budget:auto-shutdown:cancelled', { timestamp: '2026-11-27T20:17:17Z' });
    expect(cancelled.data).toMatchObject({
      armed_at: '2026-11-27T20:00:00Z',
      cancelled_at: '2026-11-27T20:17:17Z',
      expected_shutdown_at: '2026-11-27T21:00:00Z',
    });
    const expired = createTestEvent('app:budget:auto-shutdown:expired', { timestamp: '2027-01-01T00:00:00Z' });
    expect(expired.data).toMatchObject({
      expired_at: '2027-01-01T00:00:00Z',
      new_month_label: '2027-01',
      prev_month_label: '2026-12',
      original_armed_at: '2026-12-30T16:00:00Z',
      original_shutdown_at: '2026-12-30T17:00:00Z',
    });
    // Without a timestamp: now. Every time of every action lies within a few days of it.
    for (const action of WEBHOOK_ACTIONS) {
      const event = createTestEvent(action);
      const times = JSON.stringify(event.data).match(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/g) ?? [];
      for (const time of times) expect(Math.abs(seconds(time) - seconds(event.timestamp)), `${action} ${time}`).toBeLessThan(3 * 86_400);
    }
    // What inbox.watch() reads as overdue: an armed event made now expects its shutdown ahead.
    expect(seconds(createTestEvent('app:budget:auto-shutdown:armed').data.expected_shutdown_at!)).toBeGreaterThan(Date.now() / 1000);
    // A field given is sent as given.
    const given = createTestEvent('app:budget:auto-shutdown:armed', { data: { expected_shutdown_at: '2026-04-27T11:30:00Z' } });
    expect(given.data.expected_shutdown_at).toBe('2026-04-27T11:30:00Z');
  });

  it('applies overrides and refuses an unknown action', () => {
    const event = createTestEvent('app:budget:auto-shutdown:cancelled', {
      status: 'success',
      timestamp: '2026-01-01T00:00:00Z',
      data: { cancel_reason: 'cap-raised', app: 'checkout' },
    });
    expect(event).toMatchObject({
      timestamp: '2026-01-01T00:00:00Z',
      data: { cancel_reason: 'cap-raised', app: 'checkout', rack: 'example-rack' },
    });
    expect(() => createTestEvent('app:nothing' as 'app:create')).toThrow(TypeError);
  });
});

describe('signed requests', () => {
  it('produce the exact bytes and headers a receiver verifies', async () => {
    const event = createTestEvent('app:budget:cap');
    for (const request of [
      await createSignedRequest(event, { secrets: 'k' }),
      createSignedRequestSync(event, { secrets: ['k', 'k2'], timestamp: 1000 }),
    ]) {
      expect(request.body).toBe(JSON.stringify(event));
      expect(new TextDecoder().decode(request.bytes)).toBe(request.body);
      expect(request.headers['content-type']).toBe('application/json');
      const { secretIndex } = verifySync(request.bytes, request.headers['service-signature'], { secrets: 'k', tolerance: Infinity });
      expect(secretIndex).toBe(0);
    }
  });

  it('sends a raw body as is, under a custom header name, and works as a fetch Request', async () => {
    const raw =
      '{"action":"app:budget:cap", "status":"success","timestamp":"2026-04-27T10:30:00Z","data":{"rack":"r","app":"a","actor":"system"}}';
    const request = createSignedRequestSync(raw, { secrets: 'k', headerName: 'Acme-Signature' });
    expect(request.body).toBe(raw);
    expect(request.headers['acme-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const handler = createFetchHandler(createReceiver({ secrets: 'k', headerName: 'Acme-Signature' }));
    const response = await handler(toFetchRequest('http://localhost/webhooks', request));
    expect(await response.json()).toEqual({ status: 'processed' });
  });
});
