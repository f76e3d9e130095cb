// One base class for every error the SDK raises for a delivery, with the codes, statuses and names
// each class had before; the adapters recognise the family by instanceof, never by its shape.
import { describe, expect, it } from 'vitest';
import { errorResponse } from '../../src/adapters/core.js';
import { WebhookMountError, rawBodyGone } from '../../src/adapters/errors.js';
import {
  WebhookDedupError,
  WebhookError,
  WebhookHandlerError,
  WebhookPayloadError,
  WebhookVerificationError,
  isWebhookError,
  isWebhookPayloadError,
  isWebhookVerificationError,
  parseEvent,
  verifySync,
  type AnyWebhookEvent,
} from '../../src/index.js';
import { WebhookInboxError } from '../../src/inbox.js';

const event = { action: 'app:budget:cap', status: 'success', timestamp: '2026-04-27T10:30:00Z', data: {} } as unknown as AnyWebhookEvent;

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** [what, the error, its name, code and status as they were before the base class] */
const family: Array<[string, Error, string, string, number]> = [
  [
    'a signature mismatch',
    thrownBy(() => verifySync('{}', `t=1,v1=${'0'.repeat(64)}`, { secrets: 'k', tolerance: Infinity })) as Error,
    'WebhookVerificationError',
    'signature_mismatch',
    401,
  ],
  ['a missing secret', thrownBy(() => verifySync('{}', 't=1', { secrets: [] })) as Error, 'WebhookVerificationError', 'no_secrets', 500],
  ['a body that is not JSON', thrownBy(() => parseEvent('{"action":')) as Error, 'WebhookPayloadError', 'invalid_json', 400],
  ['a dedup store down', new WebhookDedupError('down'), 'WebhookDedupError', 'dedup_unavailable', 503],
  ['a handler failure', new WebhookHandlerError(event, [new Error('a'), 'b']), 'WebhookHandlerError', 'handler_failed', 500],
  ['an inbox database down', new WebhookInboxError('inbox_unavailable', 'down'), 'WebhookInboxError', 'inbox_unavailable', 503],
  ['an inbox never migrated', new WebhookInboxError('inbox_not_migrated', 'migrate'), 'WebhookInboxError', 'inbox_not_migrated', 500],
  ['a consumed raw body', rawBodyGone('express'), 'WebhookMountError', 'raw_body_unavailable', 500],
];

describe('WebhookError: the base of the family', () => {
  it.each(family)('%s is a WebhookError and an Error, with its name, code and status unchanged', (_, error, name, code, status) => {
    expect(error).toBeInstanceOf(WebhookError);
    expect(error).toBeInstanceOf(Error);
    expect(isWebhookError(error)).toBe(true);
    expect({ name: error.name, code: (error as WebhookError).code, status: (error as WebhookError).status }).toEqual({
      name,
      code,
      status,
    });
    expect(String(error)).toMatch(new RegExp(`^${name}: `));
  });

  it('the older guards still tell their own class apart from the rest of the family', () => {
    const [verification, , payload, dedup] = family.map(([, error]) => error);
    expect([isWebhookVerificationError(verification), isWebhookVerificationError(payload), isWebhookVerificationError(dedup)]).toEqual([
      true,
      false,
      false,
    ]);
    expect([isWebhookPayloadError(payload), isWebhookPayloadError(verification)]).toEqual([true, false]);
    expect(payload).toBeInstanceOf(WebhookPayloadError);
    expect(verification).toBeInstanceOf(WebhookVerificationError);
  });

  it('WebhookHandlerError keeps its failures in errors (a copy, as AggregateError made) and the event', () => {
    const failures: unknown[] = [new Error('a'), 'b'];
    const error = new WebhookHandlerError(event, failures);
    failures.push('added later');
    expect(error.errors).toEqual([new Error('a'), 'b']);
    expect(error.event).toBe(event);
    expect(error.message).toBe('2 handlers failed for app:budget:cap: a; b');
  });

  it('keeps a cause where the class takes one', () => {
    const cause = new Error('ECONNREFUSED');
    expect(new WebhookDedupError('down', { cause }).cause).toBe(cause);
    expect(new WebhookInboxError('inbox_failed', 'refused', { cause }).cause).toBe(cause);
  });

  it('is not a WebhookError just for looking like one: a code and a status are not enough', () => {
    const lookalike = Object.assign(new Error('from some library'), { code: 'signature_mismatch', status: 401 });
    expect(isWebhookError(lookalike)).toBe(false);
    expect(isWebhookError({ code: 'dedup_unavailable', status: 503 })).toBe(false);
    expect(isWebhookError(undefined)).toBe(false);
  });
});

describe('the adapters answer by instanceof', () => {
  it.each(family.filter(([, , name]) => name !== 'WebhookMountError'))(
    '%s: its own status and { error: code }',
    (_, error, _name, code, status) => {
      const response = errorResponse(error);
      expect({ status: response.status, body: JSON.parse(response.body) }).toEqual({ status, body: { error: code } });
      expect(response.cause).toBe(error);
    },
  );

  it('a mounting mistake: 500 with the fix in the message', () => {
    const error = rawBodyGone('node');
    const response = errorResponse(error);
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body)).toEqual({ error: 'raw_body_unavailable', message: error.message });
    expect(error).toBeInstanceOf(WebhookMountError);
  });

  it('anything else, a lookalike with a code and a status included, is 500 internal_error', () => {
    for (const thrown of [
      Object.assign(new Error('x'), { code: 'signature_mismatch', status: 401 }),
      { code: 'raw_body_unavailable', status: 500, message: 'not ours' },
      new TypeError('bug'),
      'a string',
      null,
    ]) {
      const response = errorResponse(thrown);
      expect({ status: response.status, body: response.body }).toEqual({ status: 500, body: '{"error":"internal_error"}' });
    }
  });
});
