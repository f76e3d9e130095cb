// examples/nextjs/app/api/webhooks/route.mjs, imported in-process as Next.js would import it.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { answer, assertBuilt, deliveryHeaders, fixture, newKey, runToExit, signature } from './helpers.js';

const ROUTE = '../../examples/nextjs/app/api/webhooks/route.mjs';

interface RouteModule {
  runtime: string;
  POST: (request: Request) => Promise<Response>;
  [name: string]: unknown;
}

const key = newKey();
let route: RouteModule;
let saved: string | undefined;

beforeAll(async () => {
  assertBuilt();
  saved = process.env['RACK_WEBHOOK_SECRETS'];
  process.env['RACK_WEBHOOK_SECRETS'] = key; // read when the module loads
  route = (await import(ROUTE)) as RouteModule;
});
afterAll(() => {
  if (saved === undefined) delete process.env['RACK_WEBHOOK_SECRETS'];
  else process.env['RACK_WEBHOOK_SECRETS'] = saved;
  vi.restoreAllMocks();
});

const FIRED = fixture('app.budget.auto-shutdown.fired');
const request = (body: string, signatureValue: string | undefined, method = 'POST') =>
  new Request('http://localhost:3000/api/webhooks', {
    method,
    headers: deliveryHeaders(signatureValue),
    ...(method === 'POST' ? { body } : {}),
  });

describe('examples/nextjs/app/api/webhooks/route.mjs', () => {
  it('exports the Node runtime and a POST handler only', () => {
    expect(route.runtime).toBe('nodejs');
    expect(typeof route.POST).toBe('function');
    expect(Object.keys(route).sort()).toEqual(['POST', 'runtime']);
  });

  it('processes a signed delivery, drops its duplicate, refuses a forgery and an unsigned copy', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const warn = vi.spyOn(console, 'error').mockImplementation(() => {});
    const sig = signature(FIRED.body, key);

    const first = await answer(await route.POST(request(FIRED.body, sig)));
    expect(first).toEqual({ status: 200, json: { status: 'processed' }, text: '{"status":"processed"}' });
    expect(await answer(await route.POST(request(FIRED.body, sig)))).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    const forged = FIRED.body.replace('"billing-api"', '"payments-api"');
    expect(await answer(await route.POST(request(forged, sig)))).toMatchObject({ status: 401, json: { error: 'signature_mismatch' } });
    expect(await answer(await route.POST(request(FIRED.body, undefined)))).toMatchObject({
      status: 401,
      json: { error: 'missing_header' },
    });

    const printed = log.mock.calls.map((call) => call.join(' '));
    expect(printed).toEqual([
      'auto-shutdown fired: app=billing-api rack=example-rack tick=tick-2026-04-27T10:30:00Z-9fe533fc297241caa6ca5760dc9b9836 (spend $103.90 of $100 cap)',
    ]);
    const everything = [...printed, ...warn.mock.calls.map((call) => call.join(' '))].join('\n');
    expect(everything).not.toContain(key);
    expect(everything).not.toContain('"spend_usd"');
    log.mockRestore();
    warn.mockRestore();
  });

  it('answers the routine :noop with 200 ignored', async () => {
    const { body } = fixture('app.budget.auto-shutdown.noop');
    expect(await answer(await route.POST(request(body, signature(body, key))))).toMatchObject({ status: 200, json: { status: 'ignored' } });
  });

  it('fails at import with a clear message when RACK_WEBHOOK_SECRETS is missing', async () => {
    const result = await runToExit(['--input-type=module', '-e', "await import('./examples/nextjs/app/api/webhooks/route.mjs')"], {});
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("RACK_WEBHOOK_SECRETS is not set: export the rack's webhook_signing_key");
  });
});
