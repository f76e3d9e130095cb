// One error family across the published subpaths: an error raised by `rack-webhooks/inbox` (or any
// other subpath) is `instanceof WebhookError` from `rack-webhooks`, and an adapter from a third
// subpath recognises it, in the ESM build and in the CommonJS build alike. Each format runs in its
// own Node process against dist/, importing the package by its name as a user would.
import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, assertBuilt } from '../examples/helpers.js';

/** A port nothing listens on: the inbox's database "is down", a real connection refused. */
const DOWN_DATABASE = 'postgres://postgres@127.0.0.1:1/none';

const scenario = (load: string) => `
${load}
const secrets = 'k';
const body = JSON.stringify({ action: 'app:budget:cap', status: 'success', timestamp: '2026-04-27T10:30:00Z', data: { rack: 'r', app: 'a', actor: 'system' } });
const post = (handler, payload, header) => handler(new Request('http://localhost/webhooks', {
  method: 'POST', body: payload, headers: { 'content-type': 'application/json', 'service-signature': header },
})).then(async (response) => [response.status, (await response.json()).error ?? 'ok']);

const pool = new pg.Pool({ connectionString: '${DOWN_DATABASE}', connectionTimeoutMillis: 2000 });
pool.on('error', () => {});
const inboxError = await createInbox({ database: pool }).migrate().then(() => undefined, (error) => error);
await pool.end();

const plain = createReceiver({ secrets });
plain.on('app:budget:cap', () => { throw new Error('handler broke'); });
const handler = web.createFetchHandler(plain);
const withInbox = web.createFetchHandler(createReceiver({ secrets, inbox: createInbox({ database: new pg.Pool({ connectionString: '${DOWN_DATABASE}', connectionTimeoutMillis: 2000 }), storeRetry: { maxWaitMs: 200 } }) }));

console.log(JSON.stringify({
  inbox: [inboxError instanceof WebhookError, inboxError instanceof Error, isWebhookError(inboxError), inboxError.name, inboxError.code, inboxError.status],
  classes: [WebhookInboxError, redis.WebhookDedupError, node.WebhookMountError, web.WebhookMountError, express.WebhookMountError]
    .map((Class) => Class.prototype instanceof WebhookError),
  sameMountClass: node.WebhookMountError === web.WebhookMountError && web.WebhookMountError === express.WebhookMountError,
  sameDedupClass: redis.WebhookDedupError === WebhookDedupError,
  responses: [
    await post(handler, body, signSync(body, { secrets: 'wrong' })),
    await post(handler, '{"action":', signSync('{"action":', { secrets })),
    await post(handler, body, signSync(body, { secrets })),
    await post(withInbox, body, signSync(body, { secrets })),
  ],
}));
`;

const ESM = scenario(`
import { WebhookError, WebhookDedupError, createReceiver, isWebhookError, signSync } from 'rack-webhooks';
import { WebhookInboxError, createInbox } from 'rack-webhooks/inbox';
import * as redis from 'rack-webhooks/redis';
import * as node from 'rack-webhooks/node';
import * as web from 'rack-webhooks/web';
import * as express from 'rack-webhooks/express';
import pg from 'pg';
`);

// The same scenario required as CommonJS: top-level await needs an async wrapper there.
const CJS = `(async () => {${scenario(`
const { WebhookError, WebhookDedupError, createReceiver, isWebhookError, signSync } = require('rack-webhooks');
const { WebhookInboxError, createInbox } = require('rack-webhooks/inbox');
const redis = require('rack-webhooks/redis');
const node = require('rack-webhooks/node');
const web = require('rack-webhooks/web');
const express = require('rack-webhooks/express');
const pg = require('pg');
`)}})().catch((error) => { console.error(error); process.exit(1); });`;

function run(format: 'esm' | 'cjs'): unknown {
  const args = format === 'esm' ? ['--input-type=module', '-e', ESM] : ['--input-type=commonjs', '-e', CJS];
  return JSON.parse(execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 20_000 }));
}

describe.each(['esm', 'cjs'] as const)('the built package (%s): one WebhookError across subpaths', (format) => {
  let result: Record<string, unknown>;
  beforeAll(() => {
    assertBuilt();
    result = run(format) as Record<string, unknown>;
  }, 30_000);

  it('a WebhookInboxError raised by rack-webhooks/inbox is instanceof WebhookError from rack-webhooks', () => {
    expect(result['inbox']).toEqual([true, true, true, 'WebhookInboxError', 'inbox_unavailable', 503]);
  });

  it("every subpath's error class extends the one WebhookError, and is one object whichever subpath exports it", () => {
    expect(result['classes']).toEqual([true, true, true, true, true]);
    expect(result['sameMountClass']).toBe(true);
    expect(result['sameDedupClass']).toBe(true);
  });

  it("the fetch adapter (rack-webhooks/web) answers each family member's own status and code, the inbox's included", () => {
    expect(result['responses']).toEqual([
      [401, 'signature_mismatch'],
      [400, 'invalid_json'],
      [500, 'handler_failed'],
      [503, 'inbox_unavailable'],
    ]);
  });
});
