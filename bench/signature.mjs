import * as crypto from 'node:crypto';
import Stripe from 'stripe';
import { constructEventSync, signSync, verify, verifySync } from '../dist/index.js';
import { checkBar, compare, printTable } from './harness.mjs';

const { createHmac, createSecretKey, randomBytes, timingSafeEqual } = crypto;
const stripe = new Stripe('sk_test_bench_only');
const SECRET = 'whsec_' + randomBytes(24).toString('hex');
const OTHER_KEYS = ['k2', 'k3', 'k4'].map((k) => k + randomBytes(16).toString('hex'));
// A key a deployed rack accepts (64 lowercase hex): with secretEncoding not set it is tried as
// UTF-8 (the spec) and, only when that misses, hex-decoded (a deployed rack).
const RACK_KEY = randomBytes(32).toString('hex');

/**
 * What the second candidate costs (issue 18): a spec delivery (UTF-8 matches first), a deployed
 * delivery (hex-decoded, after UTF-8 missed), and a forgery (both forms, then the diagnosis), each
 * against its one-form control. One-off calls with one options object, as the floors are.
 */
function rackKeyCases(body, t) {
  const specHeader = signSync(body, { secrets: RACK_KEY, timestamp: t });
  const deployedHeader = signSync(body, { secrets: RACK_KEY, secretEncoding: 'hex', timestamp: t });
  const forged = `t=${t},v1=${randomBytes(32).toString('hex')}`;
  const unset = { secrets: RACK_KEY };
  const utf8 = { secrets: RACK_KEY, secretEncoding: 'utf8' };
  const hex = { secrets: RACK_KEY, secretEncoding: 'hex' };
  const refused = (options) => () => {
    try {
      verifySync(body, forged, options);
    } catch {
      return;
    }
    throw new Error('a forgery verified');
  };
  return [
    { name: 'rack key, encoding not set: spec delivery (UTF-8, first try)', fn: () => verifySync(body, specHeader, unset) },
    { name: 'control: rack key, secretEncoding utf8: spec delivery', fn: () => verifySync(body, specHeader, utf8) },
    { name: 'rack key, encoding not set: deployed delivery (hex, second try)', fn: () => verifySync(body, deployedHeader, unset) },
    { name: 'control: rack key, secretEncoding hex: deployed delivery', fn: () => verifySync(body, deployedHeader, hex) },
    { name: 'rack key, encoding not set: forged (both forms, then the diagnosis)', fn: refused(unset) },
    { name: 'control: rack key, secretEncoding utf8: forged', fn: refused(utf8) },
  ];
}

function bodyOf(size) {
  const base = {
    action: 'app:budget:auto-shutdown:fired',
    status: 'success',
    timestamp: '2026-04-27T10:30:00.106682533Z',
    data: { rack: 'example-rack', app: 'billing-api', actor: 'system' },
  };
  // Valid JSON of exactly `size` bytes: constructEvent parses it.
  const withPad = (pad) => JSON.stringify({ ...base, data: { ...base.data, pad } });
  return Buffer.from(withPad('x'.repeat(size - withPad('').length)));
}

/**
 * Every way this runtime offers to compute HMAC-SHA256(key, `${t}.` + body), digest only (no
 * comparison): the group takes the fastest, measured in the same run, as the second floor, so the
 * table shows how close verification is to the hash itself. An Hmac object cannot be reused on
 * Node (digest() ends it), so there is no "reused Hmac" candidate.
 */
async function hmacCandidates(t, body) {
  const prefix = Buffer.from(`${t}.`);
  const message = Buffer.concat([prefix, body]);
  const key = Buffer.from(SECRET);
  const keyObject = createSecretKey(key);
  const candidates = [
    {
      name: 'createHmac(text key).update(t.).update(body).digest()',
      fn: () => createHmac('sha256', SECRET).update(prefix).update(body).digest(),
    },
    {
      name: 'createHmac(KeyObject).update(t.).update(body).digest()',
      fn: () => createHmac('sha256', keyObject).update(prefix).update(body).digest(),
    },
  ];
  if (typeof crypto.hash === 'function') {
    // RFC 2104 over the one-shot crypto.hash (Node 20.12+, 21.7+): key XOR ipad, then key XOR opad,
    // into buffers prepared once; text output, since a 'buffer' result allocates per call.
    const block = 64;
    const keyBytes = key.length > block ? crypto.createHash('sha256').update(key).digest() : key;
    const inner = Buffer.alloc(block + message.length, 0x36);
    const outer = Buffer.alloc(block + 32, 0x5c);
    for (let i = 0; i < keyBytes.length; i++) {
      inner[i] ^= keyBytes[i];
      outer[i] ^= keyBytes[i];
    }
    candidates.push({
      name: 'crypto.hash twice (RFC 2104 over the one-shot hash, pads prepared once)',
      fn: () => {
        inner.set(prefix, block); // the message is copied in per call, as a verifier must
        inner.set(body, block + prefix.length);
        outer.write(crypto.hash('sha256', inner, 'latin1'), block, 'latin1');
        return crypto.hash('sha256', outer, 'hex');
      },
    });
  }
  const subtleKey = crypto.webcrypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  let imported;
  candidates.push({
    name: 'crypto.subtle.sign (imported CryptoKey, one buffer)',
    fn: async () => crypto.webcrypto.subtle.sign('HMAC', (imported ??= await subtleKey), message),
    async: true,
  });
  // A floor that computes something else measures nothing: each must give createHmac's digest.
  const expected = createHmac('sha256', SECRET).update(message).digest('hex');
  for (const c of candidates) {
    const digest = await c.fn();
    const hex = typeof digest === 'string' ? digest : Buffer.from(digest).toString('hex');
    if (hex !== expected) throw new Error(`HMAC candidate "${c.name}" does not compute HMAC-SHA256`);
  }
  return candidates;
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
      const hmacs = (await hmacCandidates(t, body)).map((c) => ({ ...c, name: `HMAC-SHA256: ${c.name}` }));
      const extras = size === 1024 && keys === 1 ? rackKeyCases(body, t) : [];
      const cases = [
        {
          name: 'floor 1: createHmac + timingSafeEqual',
          fn: () => timingSafeEqual(createHmac('sha256', SECRET).update(`${t}.`).update(body).digest(), expected),
        },
        { name: 'verifySync', fn: () => verifySync(body, header, options) },
        { name: 'verify (async)', fn: () => verify(body, header, options), async: true },
        { name: 'stripe verifyHeader', fn: () => stripe.webhooks.signature.verifyHeader(body, header, SECRET, 300) },
        // The quick start's pattern (issue 19): a new options object on every request.
        { name: 'verifySync, a new options object per call', fn: () => verifySync(body, header, { secrets: SECRET }) },
        { name: 'verify (async), a new options object per call', fn: () => verify(body, header, { secrets: SECRET }), async: true },
        // constructEvent also parses: its floor is floor 1 plus JSON.parse of the same body.
        {
          name: "floor 1 + JSON.parse (constructEvent's floor)",
          fn: () => timingSafeEqual(createHmac('sha256', SECRET).update(`${t}.`).update(body).digest(), expected) && JSON.parse(body),
        },
        { name: 'constructEventSync, a new options object per call', fn: () => constructEventSync(body, header, { secrets: SECRET }) },
        ...extras,
        ...hmacs,
      ];
      // On the CPU clock, so a preemption costs no case anything; at 1 KiB, where the bars are,
      // many short rounds (about 5 ms per case), so a burst from a noisy neighbour lands on a few
      // samples of every case and the median steps over it.
      const rows = await compare(cases, {
        clock: 'cpu',
        ...(size >= 256 * 1024 ? { rounds: 15 } : size === 1024 ? { rounds: 161, targetMs: 5 } : {}),
      });
      const title = `${size / 1024} KiB body, ${keys} v1 segment${keys === 1 ? '' : 's'} (CPU time per op)`;
      const sync = rows[1];
      // Floor 2: the fastest HMAC-SHA256 of this runtime, in this run.
      const [freshSync, freshAsync] = [rows[4], rows[5]];
      const [parseFloor, freshConstruct] = [rows[6], rows[7]];
      const hmacRows = rows.slice(8 + extras.length);
      const fastest = hmacRows.reduce((best, row) => (row.nsPerOp < best.nsPerOp ? row : best));
      const fastestName = fastest.name.replace('HMAC-SHA256: ', '');
      fastest.name = `floor 2 (the fastest HMAC-SHA256 here): ${fastestName}`;
      for (const row of hmacRows) if (row !== fastest) row.name = `information: ${row.name}`;
      printTable(title, rows, {
        'vs verifySync': (r) => `${(r.nsPerOp / sync.nsPerOp).toFixed(2)}x`,
        'vs floor 2': (r) => `${(r.nsPerOp / fastest.nsPerOp).toFixed(2)}x`,
      });
      results.push({ title, rows });
      if (size === 1024 && keys === 1) {
        ok = checkBar('verifySync / floor 1 (createHmac + timingSafeEqual) at 1 KiB', sync.ratio, 1.2) && ok;
        ok = checkBar('stripe verifyHeader / verifySync at 1 KiB', rows[3].nsPerOp / sync.nsPerOp, 1.6, '>=') && ok;
        ok = checkBar('verify / verifySync at 1 KiB', rows[2].nsPerOp / sync.nsPerOp, 1.1) && ok;
        // Issue 19: the quick start's pattern, a new options object per call.
        ok = checkBar('verifySync, new options object per call / floor 1 at 1 KiB', freshSync.ratio, 1.0) && ok;
        ok = checkBar('verify (async), new options object per call / floor 1 at 1 KiB', freshAsync.ratio, 1.0) && ok;
        ok =
          checkBar(
            'constructEventSync, new options object per call / floor 1 + JSON.parse',
            freshConstruct.nsPerOp / parseFloor.nsPerOp,
            1.0,
          ) && ok;
        ok = checkBar('stripe verifyHeader / verifySync, new options object per call', rows[3].nsPerOp / freshSync.nsPerOp, 2, '>=') && ok;
        ok =
          checkBar('stripe verifyHeader / verify (async), new options object per call', rows[3].nsPerOp / freshAsync.nsPerOp, 2, '>=') &&
          ok;
        // Information, not a bar: what the hex-decoded candidate costs each kind of delivery.
        const [a, b, c, d, e, f] = rows.slice(8, 14);
        for (const [row, control] of [
          [a, b],
          [c, d],
          [e, f],
        ]) {
          console.log(
            `information: ${row.name}: ${row.ratio.toFixed(2)}x floor 1, ${(row.nsPerOp / control.nsPerOp).toFixed(2)}x its control`,
          );
        }
      }
      console.log(`information: verifySync / floor 2 (${fastestName}): ${(sync.nsPerOp / fastest.nsPerOp).toFixed(2)}`);
    }
  }
  return { ok, results };
}
