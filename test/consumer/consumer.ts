// Compiled against the packed package by scripts/check-package.mjs, on several TypeScript versions.
import {
  WebhookVerificationError,
  parseSignatureHeader,
  sign,
  verify,
  type VerifiedSignature,
  type WebhookVerificationErrorCode,
} from 'rack-webhooks';

const header: string = await sign('{}', { secrets: ['a', 'b'], timestamp: 1 });
const result: VerifiedSignature = await verify('{}', header, { secrets: 'a,b', tolerance: Infinity, secretEncoding: 'utf8' });
const index: number = result.secretIndex;
const parsed: { timestamp: number; signatures: string[] } = parseSignatureHeader(header);
try {
  await verify(new Uint8Array(2), null, { secrets: 'a' });
} catch (error) {
  if (error instanceof WebhookVerificationError) {
    const code: WebhookVerificationErrorCode = error.code;
    const status: number = error.status;
    console.log(code, status, index, parsed);
  }
}
// @ts-expect-error a parsed object is not a raw payload
await verify({ action: 'x' }, header, { secrets: 'a' });
// @ts-expect-error base64 is not a supported key encoding
await verify('{}', header, { secrets: 'a', secretEncoding: 'base64' });
export {};

// Events: exact narrowing through the published .d.ts.
import { isKnownEvent, parseEvent, WEBHOOK_ACTIONS, type WebhookEvent, type WebhookAction } from 'rack-webhooks';
const parsedEvent = parseEvent(
  '{"action":"app:create","status":"success","timestamp":"2026-04-27T10:30:00Z","data":{"rack":"r","actor":"a","name":"n"}}',
);
if (isKnownEvent(parsedEvent)) {
  const known: WebhookEvent = parsedEvent;
  switch (known.action) {
    case 'app:budget:per-service-truncated': {
      const dropped: number = known.data.dropped;
      console.log(dropped);
      break;
    }
    case 'app:scale-override:toggled': {
      const state: 'on' | 'off' = known.data.state;
      // @ts-expect-error cancel_reason is not a field of toggled
      console.log(state, known.data.cancel_reason);
      break;
    }
  }
}
const firstAction: 'app:create' = WEBHOOK_ACTIONS[0];
const anyAction: WebhookAction = firstAction;
console.log(anyAction);

// Validation: the validators come from their own subpath, passed in or registered for `validate: true`.
import { validators, type EventValidators } from 'rack-webhooks/validate';
const validatorSet: EventValidators = validators;
console.log(parseEvent('{}', { validate: validatorSet }).action, parseEvent('{}', { validate: true }).action);
// @ts-expect-error validate takes a boolean or the validators, not a string
parseEvent('{}', { validate: 'yes' });

// Receiver and the Redis subpath: handler types follow the pattern.
import { createReceiver, MemoryDedupStore, ROUTINE_ACTIONS } from 'rack-webhooks';
import { RedisDedupStore } from 'rack-webhooks/redis';
const receiver = createReceiver({ secrets: 'k', dedup: new MemoryDedupStore({ maxEntries: 10 }), ignore: ROUTINE_ACTIONS });
receiver.on('app:budget:auto-shutdown:*', (event) => {
  const tick: string = event.data.tick_id ?? '';
  console.log(tick, event.action);
});
receiver.on(['app:budget:cap', 'app:scale-override:toggled'], (event) => {
  if (event.action === 'app:scale-override:toggled') {
    const state: 'on' | 'off' = event.data.state;
    console.log(state);
  }
});
// @ts-expect-error not an action or a prefix of one
receiver.on('app:nothing', () => {});
const redisStore = new RedisDedupStore({ sendCommand: async (args: string[]) => args.length });
console.log(redisStore.prefix);

// The inbox subpath compiles with no database client's types installed (they are optional peers).
import { createInbox, WebhookInboxError, schemaSql } from 'rack-webhooks/inbox';
declare const someDatabase: {
  query(text: string): Promise<{ rows: unknown[] }>;
  exec(text: string): Promise<unknown>;
  transaction<T>(fn: (tx: { query(text: string): Promise<{ rows: unknown[] }> }) => Promise<T>): Promise<T>;
};
const inbox = createInbox({ database: someDatabase, table: 'ops.deliveries' });
const inboxReceiver = createReceiver({ secrets: 'k', inbox });
inboxReceiver.on('app:budget:cap', (_event, context) => console.log(context.delivery.id, context.delivery.attempt));
const inboxError: WebhookInboxError | undefined = undefined;
console.log(inboxError, schemaSql().length, typeof inbox.work);

// The error family: one base class, a union keyed on code, across subpaths.
import { WebhookError, isWebhookError, type AnyWebhookError, type WebhookErrorCode } from 'rack-webhooks';
function answer(error: unknown): [number, WebhookErrorCode | 'internal_error'] {
  if (!isWebhookError(error)) return [500, 'internal_error'];
  const member: AnyWebhookError = error;
  switch (member.code) {
    case 'inbox_unavailable': {
      const fromInbox: WebhookInboxError = member;
      return [fromInbox.status, fromInbox.code];
    }
    case 'timestamp_too_old': {
      const skew: number | undefined = member.skewSeconds;
      console.log(skew);
      return [member.status, member.code];
    }
    default:
      return [member.status, member.code];
  }
}
const base: WebhookError | undefined = inboxError;
console.log(answer(base));
