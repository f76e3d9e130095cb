import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import Stripe from 'stripe';
import { signSync, verify, verifySync } from '../dist/index.js';
import { checkBar, compare, printTable } from './harness.mjs';

const stripe = new Stripe('sk_test_bench_only');
const SECRET = 'whsec_' + randomBytes(24).toString('hex');
const OTHER_KEYS = ['k2', 'k3', 'k4'].map((k) => k + randomBytes(16).toString('hex'));

function bodyOf(size) {
  const base = { action: 'app:budget:auto-shutdown:fired', status: 'success', timestamp: '2026-04-27T10:30:00.106682533Z', data: { rack: 'example-rack', app: 'billing-api', actor: 'system' } };
  const json = JSON.stringify(base);
  const padding = 'x'.repeat(Math.max(0, size - json.length - 14));
  return Buffer.from(JSON.stringify({ ...base, data: { ...base.data, pad: padding } }).slice(0, size - 1) + '}');
}

export async function benchSignature() {
  const results = [];
  let ok = true;
  for (const size of [1024, 16 * 1024, 256 * 1024]) {
    for (const keys of [1, 4]) {
      const body = bodyOf(size);
      const t = Math.floor(Date.now() / 1000);
      // With 4 segments the matching key is signed last: the worst case for the verifier.
      const signers = keys === 1 ? [SECRET] : [...OTHER_KEYS, SECRET];
      const header = signSync(body, { secrets: signers, timestamp: t });
      const expected = createHmac('sha256', SECRET).update(`${t}.`).update(body).digest();
      const options = { secrets: SECRET };
      const cases = [
        { name: 'floor: createHmac + timingSafeEqual', fn: () => timingSafeEqual(createHmac('sha256', SECRET).update(`${t}.`).update(body).digest(), expected) },
        { name: 'verifySync', fn: () => verifySync(body, header, options) },
        { name: 'verify (async)', fn: () => verify(body, header, options), async: true },
        { name: 'stripe verifyHeader', fn: () => stripe.webhooks.signature.verifyHeader(body, header, SECRET, 300) },
      ];
      // More rounds at 1 KiB, where the bars are: the median of 41 is steadier on a noisy machine.
      const rows = await compare(cases, size >= 256 * 1024 ? { rounds: 15 } : size === 1024 ? { rounds: 41 } : {});
      const title = `${size / 1024} KiB body, ${keys} v1 segment${keys === 1 ? '' : 's'}`;
      const sync = rows[1];
      printTable(title, rows, { 'vs verifySync': (r) => `${(r.nsPerOp / sync.nsPerOp).toFixed(2)}x` });
      results.push({ title, rows });
      if (size === 1024 && keys === 1) {
        ok = checkBar('verifySync / floor at 1 KiB', sync.ratio, 1.2) && ok;
        ok = checkBar('stripe verifyHeader / verifySync at 1 KiB', rows[3].nsPerOp / sync.nsPerOp, 1.6, '>=') && ok;
        ok = checkBar('verify / verifySync at 1 KiB', rows[2].nsPerOp / sync.nsPerOp, 1.1) && ok;
      }
    }
  }
  return { ok, results };
}
