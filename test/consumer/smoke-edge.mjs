// Run by scripts/smoke-edge-runtimes.mjs under Bun, Deno and Node with node:crypto hidden
// (the Web Crypto path), against the packed package: verify, parse, receive through the fetch adapter.
import { createReceiver, sign, verify, WebhookVerificationError } from 'rack-webhooks';
import { createFetchHandler } from 'rack-webhooks/web';
import { validators } from 'rack-webhooks/validate';

const runtime =
  typeof Bun !== 'undefined' ? `Bun ${Bun.version}` : typeof Deno !== 'undefined' ? `Deno ${Deno.version.deno}` : `Node ${process.version}`;
const crypto = typeof globalThis.process?.getBuiltinModule === 'function' ? 'node:crypto' : 'Web Crypto';
const fail = (message) => {
  throw new Error(`${runtime}: ${message}`);
};

const body =
  '{"action":"app:budget:auto-shutdown:fired","status":"success","timestamp":"2026-04-27T10:30:00.1Z","data":{"rack":"r","app":"a","actor":"system","tick_id":"tick-2026-04-27T10:30:00Z-1f0c9a7e5b2d4c3e8a9b0c1d2e3f4a5b"}}';
const header = await sign(body, { secrets: ['old', 'new'] });
const { secretIndex } = await verify(new TextEncoder().encode(body), header, { secrets: 'new' });
if (secretIndex !== 0) fail(`secretIndex ${secretIndex}`);
try {
  await verify(body.replace('fired', 'armed'), header, { secrets: 'new' });
  fail('a forged body verified');
} catch (error) {
  if (!(error instanceof WebhookVerificationError) || error.code !== 'signature_mismatch') throw error;
}

let fired = 0;
const handler = createFetchHandler(
  createReceiver({ secrets: 'new' }).on('app:budget:auto-shutdown:fired', () => {
    fired++;
  }),
);
const post = (text, signature) =>
  handler(
    new Request('http://localhost/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'service-signature': signature },
      body: text,
    }),
  );
const statuses = [];
for (const [text, signature] of [
  [body, header],
  [body, header],
  [body + ' ', header],
]) {
  const response = await post(text, signature);
  statuses.push(`${response.status} ${JSON.stringify(await response.json())}`);
}
const expected = ['200 {"status":"processed"}', '200 {"status":"duplicate"}', '401 {"error":"signature_mismatch"}'];
if (JSON.stringify(statuses) !== JSON.stringify(expected) || fired !== 1) fail(`got ${JSON.stringify(statuses)}, handler ran ${fired}x`);
// The validators from their own subpath, passed in: a schema violation is a 400.
const validating = createFetchHandler(createReceiver({ secrets: 'new', validate: validators }));
const invalid = body.replace('"actor":"system"', '"actor":"ops@example.com"');
const refused = await validating(
  new Request('http://localhost/webhooks', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'service-signature': await sign(invalid, { secrets: 'new' }) },
    body: invalid,
  }),
);
const refusal = `${refused.status} ${JSON.stringify(await refused.json())}`;
if (refusal !== '400 {"error":"invalid_event"}') fail(`an invalid event got ${refusal}`);
console.log(`edge smoke ok: ${runtime} (${crypto})`);
