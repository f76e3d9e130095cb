// Issue 18, point 2: a receiver built with nothing but the key accepts what a deployed rack sends
// (`<Vendor>-Signature`, the key hex-decoded) and what a rack following the spec sends, refuses
// every forgery, and says what was really there when it refuses.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  WEBHOOK_ACTIONS,
  WebhookVerificationError,
  createReceiver,
  signSync,
  verifySync,
  type ReceiverLogRecord,
} from '../../src/index.js';
import { createTestEvent, deployedJson } from '../../src/testing/index.js';
import { T0, manualClock } from './helpers.js';

/** A key a deployed rack accepts, pasted exactly as the rack parameter holds it. */
const KEY = '8f3a1c9e5b7d2f4a6c8e0b1d3f5a7c9e2b4d6f8a0c1e3f5a7b9d1c3e5f7a9b2d';
const OLD_KEY = '3c9e5b7d2f4a6c8e0b1d3f5a7c9e2b4d6f8a0c1e3f5a7b9d1c3e5f7a9b2d8f1a';

function deployed(body: string, options: { keys?: string | string[]; header?: string; t?: number } = {}) {
  const header = signSync(body, { secrets: options.keys ?? KEY, secretEncoding: 'hex', timestamp: options.t ?? T0 });
  return { body, headers: { 'content-type': 'application/json', [options.header ?? 'acme-signature']: header } };
}

function spec(body: string, options: { keys?: string | string[]; t?: number } = {}) {
  const header = signSync(body, { secrets: options.keys ?? KEY, timestamp: options.t ?? T0 });
  return { body, headers: { 'content-type': 'application/json', 'service-signature': header } };
}

function receiverOf(extra: Partial<Parameters<typeof createReceiver>[0]> = {}, records: ReceiverLogRecord[] = []) {
  return createReceiver({ secrets: KEY, now: manualClock().now, dedup: false, logger: (r) => records.push(r), ...extra });
}

async function refusal(promise: Promise<unknown>): Promise<WebhookVerificationError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return error as WebhookVerificationError;
}

const body = (action: string) => deployedJson(createTestEvent(action as never));

describe('with only secrets, a receiver accepts every delivery a deployed rack sends, and one that follows the spec', () => {
  it.each(WEBHOOK_ACTIONS.map((action) => [action]))(
    '%s: deployed (Acme-Signature, hex key) and spec (Service-Signature, UTF-8)',
    async (action) => {
      const records: ReceiverLogRecord[] = [];
      const receiver = receiverOf({}, records);
      await expect(receiver.receive(deployed(body(action)))).resolves.toMatchObject({
        outcome: expect.stringMatching(/processed|ignored/),
      });
      await expect(receiver.receive(spec(body(action)))).resolves.toMatchObject({ outcome: expect.stringMatching(/processed|ignored/) });
      expect(records.map((r) => [r.secretIndex, r.secretEncoding, r.headerName])).toEqual([
        [0, 'hex', 'acme-signature'],
        [0, 'utf8', 'Service-Signature'],
      ]);
    },
  );

  it('an action beyond the catalog (rack:update) verifies and is reported as ignored', async () => {
    const update = deployedJson({
      action: 'rack:update',
      status: 'success',
      timestamp: '2026-04-27T10:30:00Z',
      data: { name: 'r', rack: 'r', version: '3.25.0' },
    });
    await expect(receiverOf().receive(deployed(update))).resolves.toMatchObject({ outcome: 'ignored' });
  });

  it('during a rotation ("new,old" pasted as is), each key in each form, and says which matched', async () => {
    const records: ReceiverLogRecord[] = [];
    const receiver = receiverOf({ secrets: `${KEY}, ${OLD_KEY}` }, records);
    const text = body('app:budget:cap');
    await receiver.receive(deployed(text, { keys: [OLD_KEY] }));
    await receiver.receive(deployed(text, { keys: [KEY, OLD_KEY] }));
    await receiver.receive(spec(text, { keys: [OLD_KEY] }));
    expect(records.map((r) => [r.secretIndex, r.secretEncoding])).toEqual([
      [1, 'hex'],
      [0, 'hex'],
      [1, 'utf8'],
    ]);
  });

  it('finds the vendor header in every shape headers come in', async () => {
    const { body: text, headers } = deployed(body('app:budget:cap'));
    const value = headers['acme-signature']!;
    const shapes: Array<[string, unknown]> = [
      ['plain object, lower-case', { 'content-type': 'application/json', 'acme-signature': value }],
      ['plain object, as sent', { 'Content-Type': 'application/json', 'Acme-Signature': value }],
      ['Node array value', { 'acme-signature': [value] }],
      ['fetch Headers', new Headers({ 'Acme-Signature': value, 'content-type': 'application/json' })],
      ['Map', new Map([['Acme-Signature', value]])],
      [
        'entry pairs',
        [
          ['X-Request-Id', 'abc'],
          ['ACME-SIGNATURE', value],
        ],
      ],
    ];
    for (const [name, shape] of shapes) {
      const records: ReceiverLogRecord[] = [];
      await expect(receiverOf({}, records).receive({ body: text, headers: shape as never }), name).resolves.toMatchObject({
        outcome: 'processed',
      });
      expect(records[0]!.headerName!.toLowerCase(), name).toBe('acme-signature');
    }
  });

  it('verify, verifySync and constructEvent accept the deployed form with only secrets, and report the encoding', () => {
    const { body: text, headers } = deployed(body('app:budget:cap'));
    expect(verifySync(text, headers['acme-signature'], { secrets: KEY, now: T0 })).toEqual({
      timestamp: T0,
      secretIndex: 0,
      secretEncoding: 'hex',
    });
    expect(verifySync(text, spec(text).headers['service-signature'], { secrets: KEY, now: T0 })).toEqual({
      timestamp: T0,
      secretIndex: 0,
      secretEncoding: 'utf8',
    });
  });
});

describe('headerName and secretEncoding, when set, mean exactly that', () => {
  it("headerName: 'Service-Signature' does not fall back to a vendor header, and says where the signature was", async () => {
    const records: ReceiverLogRecord[] = [];
    const error = await refusal(receiverOf({ headerName: 'Service-Signature' }, records).receive(deployed(body('app:budget:cap'))));
    expect(error).toMatchObject({ code: 'missing_header', status: 401, suggestedHeaderName: 'acme-signature' });
    expect(error.headerNames).toEqual(['content-type', 'acme-signature']);
    expect(error.message).toMatch(
      /no Service-Signature header .*but it is signed: .*acme-signature header carries a t=…,v1=… value; set headerName: 'acme-signature'/,
    );
    expect(error.message).not.toMatch(/sent unsigned|\ba acme/);
    expect(records[0]).toMatchObject({
      event: 'rejected',
      code: 'missing_header',
      suggestedHeaderName: 'acme-signature',
      headerNames: ['content-type', 'acme-signature'],
    });
  });

  it('a t=…,v1=… value under a name that is not *-Signature is named, never read unpinned, and read once headerName names it', async () => {
    for (const name of ['X-Webhook-Sig', 'Signature']) {
      const request = deployed(body('app:budget:cap'), { header: name });
      const error = await refusal(receiverOf().receive(request));
      expect(error).toMatchObject({ code: 'missing_header', status: 401, suggestedHeaderName: name });
      expect(error.message).toMatch(
        new RegExp(`but it is signed: the ${name} header carries a t=…,v1=… value; set headerName: '${name}'\\.$`),
      );
      expect(error.message).not.toMatch(/sent unsigned|leave headerName unset/);
      await expect(receiverOf({ headerName: name }).receive(request)).resolves.toMatchObject({ outcome: 'processed' });
    }
    // Another scheme under such a name is no suggestion: the delivery is unsigned as far as the rack goes.
    const github = { ...spec(body('app:budget:cap')).headers, signature: 'sha256=abc' };
    delete (github as Record<string, string>)['service-signature'];
    const unsigned = await refusal(receiverOf().receive({ body: body('app:budget:cap'), headers: github }));
    expect(unsigned).toMatchObject({ code: 'missing_header', suggestedHeaderName: undefined });
    expect(unsigned.message).toMatch(/it was sent unsigned/);
  });

  it("headerName: 'Acme-Signature' reads only that header", async () => {
    const receiver = receiverOf({ headerName: 'Acme-Signature' });
    await expect(receiver.receive(deployed(body('app:budget:cap')))).resolves.toMatchObject({ outcome: 'processed' });
    const error = await refusal(receiver.receive(spec(body('app:budget:cap'))));
    expect(error).toMatchObject({ code: 'missing_header', headerNames: ['content-type', 'service-signature'] });
  });

  it("secretEncoding: 'utf8' does not try the hex form, and names the encoding that would have matched", async () => {
    const records: ReceiverLogRecord[] = [];
    const error = await refusal(receiverOf({ secretEncoding: 'utf8' }, records).receive(deployed(body('app:budget:cap'))));
    expect(error).toMatchObject({ code: 'signature_mismatch', suggestedSecretEncoding: 'hex', headerName: 'acme-signature' });
    expect(error.message).toMatch(/set secretEncoding: 'hex'/);
    expect(error.message).toMatch(/Signature read from acme-signature; headers present: content-type, acme-signature\./);
    expect(records[0]).toMatchObject({ code: 'signature_mismatch', suggestedSecretEncoding: 'hex', headerName: 'acme-signature' });
  });

  it("secretEncoding: 'hex' does not try the UTF-8 form", async () => {
    const error = await refusal(receiverOf({ secretEncoding: 'hex' }).receive(spec(body('app:budget:cap'))));
    expect(error).toMatchObject({ code: 'signature_mismatch', suggestedSecretEncoding: 'utf8', headerName: 'Service-Signature' });
  });

  it('a key shorter than a deployed rack takes is never tried hex-decoded (the rack would not sign with it)', async () => {
    const short = KEY.slice(0, 40);
    const text = body('app:budget:cap');
    const error = await refusal(receiverOf({ secrets: short }).receive(deployed(text, { keys: short })));
    expect(error).toMatchObject({ code: 'signature_mismatch', suggestedSecretEncoding: 'hex' });
  });
});

describe('the extra candidate cannot help a forger', () => {
  const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);

  it('property: random signatures over random bodies, under the spec or a vendor name, never verify', async () => {
    const receiver = receiverOf();
    await fc.assert(
      fc.asyncProperty(
        fc.string(),
        fc.array(hex64, { minLength: 1, maxLength: 4 }),
        fc.constantFrom('service-signature', 'acme-signature', 'x-signature'),
        async (text, sigs, name) => {
          const header = `t=${T0},${sigs.map((s) => `v1=${s}`).join(',')}`;
          const error = await refusal(receiver.receive({ body: text, headers: { [name]: header } }));
          expect(error.code).toBe('signature_mismatch');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('property: a MAC under any other key, in either form, never verifies; only the key itself does', async () => {
    fc.assert(
      fc.property(hex64, fc.string({ minLength: 1 }), fc.constantFrom<'utf8' | 'hex'>('utf8', 'hex'), (other, text, encoding) => {
        fc.pre(other !== KEY);
        const forged = signSync(text, { secrets: other, secretEncoding: encoding, timestamp: T0 });
        expect(() => verifySync(text, forged, { secrets: KEY, now: T0 })).toThrow(WebhookVerificationError);
        // The genuine key in either form verifies: both candidates derive from the one secret.
        const genuine = signSync(text, { secrets: KEY, secretEncoding: encoding, timestamp: T0 });
        expect(verifySync(text, genuine, { secrets: KEY, now: T0 }).secretEncoding).toBe(encoding);
      }),
      { numRuns: 200 },
    );
  });

  it('a second *-Signature header beside Service-Signature changes nothing: Service-Signature alone is read', async () => {
    const text = body('app:budget:cap');
    const genuine = spec(text).headers;
    const forgedValue = `t=${T0},v1=${'ab'.repeat(32)}`;
    const records: ReceiverLogRecord[] = [];
    await expect(
      receiverOf({}, records).receive({ body: text, headers: { ...genuine, 'x-signature': forgedValue } }),
    ).resolves.toMatchObject({
      outcome: 'processed',
    });
    expect(records[0]!.headerName).toBe('Service-Signature');
    // A forged Service-Signature is refused even when a genuine vendor header rides along: no fallback past a present header.
    const both = { 'service-signature': forgedValue, 'acme-signature': deployed(text).headers['acme-signature']! };
    expect(await refusal(receiverOf().receive({ body: text, headers: both }))).toMatchObject({
      code: 'signature_mismatch',
      headerName: 'Service-Signature',
    });
  });

  it('two vendor candidates and no Service-Signature: refused, naming both, rather than guessing', async () => {
    const text = body('app:budget:cap');
    const value = deployed(text).headers['acme-signature']!;
    const error = await refusal(
      receiverOf().receive({ body: text, headers: { 'acme-signature': value, 'x-signature': `t=${T0},v1=${'cd'.repeat(32)}` } }),
    );
    expect(error.code).toBe('malformed_header');
    expect(error.message).toMatch(
      /No Service-Signature header, and 2 headers with a t=…,v1=… value \(acme-signature, x-signature\): refusing to guess/,
    );
    // Another scheme under a *-Signature name is not a candidate: the rack's header is still found.
    await expect(
      receiverOf().receive({ body: text, headers: { 'acme-signature': value, 'x-hub-signature': 'sha256=abc' } }),
    ).resolves.toMatchObject({
      outcome: 'processed',
    });
  });
});

describe('an unsigned delivery is reported with every cause a deployed rack has', () => {
  it('names the headers that were there (names only), and every cause, in the error, the log record and onError', async () => {
    const records: ReceiverLogRecord[] = [];
    const seen: unknown[] = [];
    const receiver = receiverOf({}, records).onError((error) => void seen.push(error));
    const text = body('app:budget:cap');
    const error = await refusal(
      receiver.receive({ body: text, headers: { 'content-type': 'application/json', 'x-request-id': 'req-SECRETVALUE' } }),
    );
    expect(error).toMatchObject({
      code: 'missing_header',
      status: 401,
      headerNames: ['content-type', 'x-request-id'],
      rackKeyProblems: [],
    });
    expect(error.message).toMatch(
      /carries no Service-Signature header, nor any \*-Signature header with a t=…,v1=… value \(headers present: content-type, x-request-id\): it was sent unsigned/,
    );
    expect(error.unsignedCauses).toEqual([
      'the rack has no webhook_signing_key set',
      'the rack is older than 3.24.6',
      expect.stringMatching(
        /^the rack has more than 4 keys, or a key that fails its own checks, which turns signing off \(the checks: at most 4 keys, no empty entry, each 64 to 4,096 lowercase \[0-9a-f\] characters of even length, not a placeholder, .*3\.5\+ bits of entropy per byte\)$/,
      ),
      'a proxy dropped the header',
    ]);
    expect(records[0]).toMatchObject({ event: 'rejected', code: 'missing_header', headerNames: ['content-type', 'x-request-id'] });
    expect(records[0]!.message).toBe(`delivery rejected (missing_header): ${error.message}`);
    expect(seen).toEqual([error]);
    expect(JSON.stringify(records) + error.message).not.toContain('SECRETVALUE');
    expect(JSON.stringify(records) + error.message).not.toContain(KEY);
  });

  it("says specifically when the receiver's own key would make a deployed rack send unsigned", async () => {
    const short = 'a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0';
    const error = await refusal(receiverOf({ secrets: short }).receive({ body: '{}', headers: {} }));
    expect(error.message).toContain(
      'your key #1 is 40 characters; the rack needs at least 64, and the rack sends unsigned with such a key',
    );
    expect(error.rackKeyProblems).toEqual([
      { check: 'too_short', keyIndex: 0, message: 'key #1 is 40 characters; the rack needs at least 64' },
    ]);
    expect(error.unsignedCauses![0]).toMatch(/^your key #1 is 40 characters/);
    expect(error.message).not.toContain(short);

    const five = [KEY, OLD_KEY, KEY.replace('8f', '9e'), OLD_KEY.replace('3c', '4d'), KEY.replace('8f', '7a')];
    const many = await refusal(receiverOf({ secrets: five }).receive({ body: '{}', headers: {} }));
    expect(many.rackKeyProblems!.map((p) => p.check)).toEqual(['too_many_keys']);
    expect(many.message).toContain('your secrets hold 5 keys; the rack signs with at most 4, and the rack sends unsigned with that many');

    const weak = await refusal(receiverOf({ secrets: `${KEY},${'ab'.repeat(32)}` }).receive({ body: '{}', headers: {} }));
    expect(weak.rackKeyProblems).toEqual([{ check: 'repeated_byte', keyIndex: 1, message: 'key #2 decodes to one byte repeated' }]);
  });

  it("verify() without a header names the causes too (the full diagnosis is the receiver's, which sees the headers)", () => {
    let error: unknown;
    try {
      verifySync('{}', undefined, { secrets: 'passphrase' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'missing_header', status: 401 });
    expect((error as Error).message).toMatch(
      /no webhook_signing_key set, the rack is older than 3\.24\.6, the rack has more than 4 keys or a key that fails its own checks/,
    );
  });
});
