// With BARE_VERIFY_HMAC=1 the bare routes also check the signature the cheapest way there is: one
// createHmac over `${t}.` and the body, then timingSafeEqual (no parsing rules, no dedup, no event).
// With BARE_REQUIRED_WORK=1 as well they do, inline, everything a receiver with replay protection
// must do per delivery and nothing more: that check, JSON.parse, the body's SHA-256, and the two
// claims in the SDK's own MemoryDedupStore. That is the floor under the adapter (bench:http's
// second control), as bench/receiver.mjs's "required work" row is under receive().
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { MemoryDedupStore } from '../../dist/index.js';

const secret = process.env.RACK_WEBHOOK_SECRETS ?? '';
const enabled = process.env.BARE_VERIFY_HMAC === '1';
const required = process.env.BARE_REQUIRED_WORK === '1';
const store = new MemoryDedupStore();

/** True when the one-key header `t=…,v1=…` matches (and, under BARE_REQUIRED_WORK, the delivery is new); false for anything else. */
export function hmacMatches(header, body) {
  if (!enabled) return true;
  if (typeof header !== 'string') return false;
  const comma = header.indexOf(',');
  const expected = Buffer.from(header.slice(comma + 4), 'hex');
  const actual = createHmac('sha256', secret)
    .update(`${header.slice(2, comma)}.`)
    .update(body)
    .digest();
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return false;
  if (!required) return true;
  const event = JSON.parse(body.toString('utf8'));
  const hash = createHash('sha256').update(body).digest('hex');
  return store.claimAllSync([
    { key: `replay:${header.slice(2, comma)}:${hash}`, ttlSeconds: 300 },
    { key: `event:${event.action}:${event.data?.tick_id}:${event.data?.service}`, ttlSeconds: 86_400 },
  ]);
}
