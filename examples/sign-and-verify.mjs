// `npm run example`: sign a sample delivery the way the rack does, verify it, then show what a
// receiver gets for a forged, a stale and an unsigned copy. Uses the built package.
import { randomBytes } from 'node:crypto';
import { WebhookVerificationError, signSync, verifySync } from 'rack-webhooks';

const secret = randomBytes(32).toString('hex'); // the spec's recommended key: 32 random bytes, hex
const body = JSON.stringify({
  action: 'app:budget:auto-shutdown:fired',
  status: 'success',
  timestamp: '2026-04-27T10:30:00.106682533Z',
  data: {
    rack: 'example-rack',
    app: 'billing-api',
    actor: 'system',
    tick_id: 'tick-2026-04-27T10:30:00Z-1f0c9a7e5b2d4c3e8a9b0c1d2e3f4a5b',
  },
});
const now = Math.floor(Date.now() / 1000);
const header = signSync(body, { secrets: secret, timestamp: now });

const deliveries = [
  ['genuine', body, header],
  ['forged (body edited)', body.replace('billing-api', 'payments-api'), header],
  ['stale (signed 10 minutes ago)', body, signSync(body, { secrets: secret, timestamp: now - 600 })],
  ['unsigned (no header)', body, undefined],
];

let unexpected = 0;
console.log(`Service-Signature: t=${now},v1=<64 hex, not printed>\n`);
for (const [label, payload, signature] of deliveries) {
  try {
    const { timestamp, secretIndex } = verifySync(payload, signature, { secrets: secret });
    console.log(`${label.padEnd(32)} accepted  t=${timestamp} secret #${secretIndex + 1}`);
    if (label !== 'genuine') unexpected++;
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    console.log(`${label.padEnd(32)} rejected  ${error.status} ${error.code}: ${error.message.split('. ')[0]}.`);
    if (label === 'genuine') unexpected++;
  }
}
process.exitCode = unexpected === 0 ? 0 : 1;
