// Run by scripts/smoke-runtimes.mjs on Node 20, 22 and 24 against the packed package (ESM).
import assert from 'node:assert/strict';
import { WebhookError, WebhookPayloadError, WebhookVerificationError, parseEvent, sign, signSync, verify, verifySync } from 'rack-webhooks';
import { WebhookInboxError } from 'rack-webhooks/inbox';
import { WebhookMountError } from 'rack-webhooks/web';

const body =
  '{"action":"app:budget:auto-shutdown:fired","status":"success","timestamp":"2026-04-27T10:30:00.1Z","data":{"rack":"r","app":"a","actor":"system","tick_id":"tick-2026-04-27T10:30:00Z-1f0c9a7e5b2d4c3e8a9b0c1d2e3f4a5b"}}';
const header = await sign(body, { secrets: ['old', 'new'] });
assert.deepEqual((await verify(body, header, { secrets: 'new' })).secretIndex, 0);
assert.equal(verifySync(Buffer.from(body), signSync(body, { secrets: 'k' }), { secrets: ['x', 'k'] }).secretIndex, 1);
await assert.rejects(
  verify(body.replace('fired', 'armed'), header, { secrets: 'new' }),
  (e) => e instanceof WebhookVerificationError && e.code === 'signature_mismatch',
);
// One error family across subpaths: the shared chunk holds one WebhookError per format.
assert.ok(new WebhookInboxError('inbox_failed', 'x') instanceof WebhookError);
assert.ok(new WebhookMountError('x') instanceof WebhookError);
// validate: true needs rack-webhooks/validate loaded; once imported, it registers its validators.
const invalid = body.replace('"actor":"system"', '"actor":"ops@example.com"');
assert.throws(
  () => parseEvent(invalid, { validate: true }),
  (e) => e instanceof TypeError && e.message.includes("import 'rack-webhooks/validate'"),
);
const { validators } = await import('rack-webhooks/validate');
assert.throws(
  () => parseEvent(invalid, { validate: validators }),
  (e) => e instanceof WebhookPayloadError && e.path === '/data/actor',
);
assert.throws(
  () => parseEvent(invalid, { validate: true }),
  (e) => e instanceof WebhookPayloadError && e.path === '/data/actor',
);
console.log(`smoke ok: ESM on Node ${process.version}`);
