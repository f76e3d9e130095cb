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
