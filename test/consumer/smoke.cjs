// Run by scripts/smoke-runtimes.mjs on Node 20, 22 and 24 against the packed package (CommonJS).
const assert = require('node:assert/strict');
const { WebhookError, WebhookPayloadError, WebhookVerificationError, parseEvent, signSync, verifySync, verify } = require('rack-webhooks');
const { WebhookInboxError } = require('rack-webhooks/inbox');
const { WebhookMountError } = require('rack-webhooks/web');

const body = Buffer.from(
  '{"action":"app:create","status":"success","timestamp":"2026-04-27T10:30:00Z","data":{"rack":"r","name":"a","actor":"ops@example.com"}}',
);
const header = signSync(body, { secrets: 'k' });
assert.equal(verifySync(body, header, { secrets: 'k' }).secretIndex, 0);
assert.throws(
  () => verifySync(body, header, { secrets: 'k', now: Math.floor(Date.now() / 1000) + 301 }),
  (e) => e instanceof WebhookVerificationError && e.code === 'timestamp_too_old',
);
// One error family across subpaths: the shared chunk holds one WebhookError per format.
assert.ok(new WebhookInboxError('inbox_failed', 'x') instanceof WebhookError);
assert.ok(new WebhookMountError('x') instanceof WebhookError);
// The CommonJS copy registers its own validators when rack-webhooks/validate is required.
const invalid = body.toString().replace('"rack":"r"', '"rack":""');
assert.throws(
  () => parseEvent(invalid, { validate: true }),
  (e) => e instanceof TypeError && e.message.includes("import 'rack-webhooks/validate'"),
);
const { validators } = require('rack-webhooks/validate');
assert.throws(
  () => parseEvent(invalid, { validate: validators }),
  (e) => e instanceof WebhookPayloadError && e.path === '/data/rack',
);
assert.throws(
  () => parseEvent(invalid, { validate: true }),
  (e) => e instanceof WebhookPayloadError && e.path === '/data/rack',
);
verify(body, header, { secrets: 'k' }).then((r) => {
  assert.equal(r.secretIndex, 0);
  console.log(`smoke ok: CJS on Node ${process.version}`);
});
