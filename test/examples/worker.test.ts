// examples/cloudflare-worker.mjs: bundled with esbuild as wrangler would, run in workerd (miniflare).
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../kit/time.js';
import { ROOT, answer, assertBuilt, deliveryHeaders, fixture, newKey, signature } from './helpers.js';

const outfile = `${ROOT}.tmp/examples-worker-${process.pid}-${Date.now()}.mjs`;
let bundle: string;

beforeAll(async () => {
  assertBuilt();
  mkdirSync(`${ROOT}.tmp`, { recursive: true });
  await build({
    entryPoints: [`${ROOT}examples/cloudflare-worker.mjs`],
    absWorkingDir: ROOT,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    outfile,
    logLevel: 'silent',
  });
  bundle = readFileSync(outfile, 'utf8');
});
afterAll(() => rmSync(outfile, { force: true }));

const FIRED = fixture('app.budget.auto-shutdown.fired');

async function dispatch(mf: Miniflare, url: string, body: string, signatureValue: string | undefined) {
  const response = await mf.dispatchFetch(url, { method: 'POST', headers: deliveryHeaders(signatureValue), body });
  return answer(response as unknown as Response);
}

describe('examples/cloudflare-worker.mjs', () => {
  it('bundles without any node: import', () => {
    expect(bundle.length).toBeGreaterThan(0);
    expect(bundle).not.toMatch(/\bfrom\s*["']node:|\bimport\s*\(\s*["']node:|\brequire\s*\(\s*["']node:|\bimport\s*["']node:/);
    // and none of the Node-only packages the examples use elsewhere
    expect(bundle).not.toMatch(/\bfrom\s*["'](?:express|fastify|hono|@hono\/node-server)["']/);
  });

  it('verifies and deduplicates in workerd, answers 404 elsewhere and 500 without its secret', { timeout: 30_000 }, async () => {
    const key = newKey();
    const logs: string[] = [];
    const options = {
      modules: true,
      scriptPath: outfile,
      compatibilityDate: '2025-01-01',
      handleStructuredLogs: ({ message }: { message: string }) => void logs.push(message),
    };
    const mf = new Miniflare({ ...options, bindings: { RACK_WEBHOOK_SECRETS: key } });
    try {
      await mf.ready;
      const sig = signature(FIRED.body, key);
      expect(await dispatch(mf, 'http://localhost/webhooks', FIRED.body, sig)).toEqual({
        status: 200,
        json: { status: 'processed' },
        text: '{"status":"processed"}',
      });
      expect(await dispatch(mf, 'http://localhost/webhooks', FIRED.body, sig)).toMatchObject({
        status: 200,
        json: { status: 'duplicate' },
      });
      const forged = FIRED.body.replace('"billing-api"', '"payments-api"');
      expect(await dispatch(mf, 'http://localhost/webhooks', forged, sig)).toMatchObject({
        status: 401,
        json: { error: 'signature_mismatch' },
      });
      expect(await dispatch(mf, 'http://localhost/webhooks', FIRED.body, undefined)).toMatchObject({
        status: 401,
        json: { error: 'missing_header' },
      });
      const noop = fixture('app.budget.auto-shutdown.noop');
      expect(await dispatch(mf, 'http://localhost/webhooks', noop.body, signature(noop.body, key))).toMatchObject({
        status: 200,
        json: { status: 'ignored' },
      });
      expect(await dispatch(mf, 'http://localhost/other', FIRED.body, sig)).toMatchObject({ status: 404, json: { error: 'not_found' } });
      const summary =
        'auto-shutdown fired: app=billing-api rack=example-rack tick=tick-2026-04-27T10:30:00Z-9fe533fc297241caa6ca5760dc9b9836 (spend $103.90 of $100 cap)';
      await waitFor(
        () => logs.some((line) => line.includes('signature_mismatch')),
        10_000,
        () => `worker logs:\n${logs.join('\n')}`,
      );
      expect(logs.filter((line) => line.includes(summary))).toHaveLength(1);
      expect(logs.join('\n')).not.toContain(key);
      expect(logs.join('\n')).not.toContain('"spend_usd"');

      await mf.setOptions({ ...options, bindings: {} });
      expect(await dispatch(mf, 'http://localhost/webhooks', FIRED.body, sig)).toMatchObject({
        status: 500,
        json: { error: 'not_configured' },
      });
    } finally {
      await mf.dispose();
    }
  });
});
