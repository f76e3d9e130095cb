import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { describe, expect, it, onTestFinished } from 'vitest';
import { setUp } from '../kit/setup.js';
import { createNodeHandler } from '../../src/adapters/node.js';
import { createReceiver } from '../../src/index.js';
import { createInbox } from '../../src/inbox.js';
import { createSignedRequestSync } from '../../src/testing/index.js';
import { openDatabase } from '../inbox/databases.js';
import { registerSdk } from './otel-sdk.js';

setUp({ testTimeoutMs: 60_000, hookTimeoutMs: 60_000, pglite: false });

const SECRET = 'telemetry-prometheus-secret';

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('through the Prometheus exporter, scraped over HTTP', () => {
  // This exporter (0.2xx) writes names as they are, dots to underscores, `_total` on counters, no
  // unit suffix: the README's Prometheus column.
  it('every metric a scrape shows, named as the README lists them', async () => {
    const exporter = new PrometheusExporter({ preventServerStart: true });
    registerSdk({ readers: [exporter] });
    const db = await openDatabase('pg');
    onTestFinished(() => db.close());
    const inbox = createInbox({ database: db.database, table: db.table });
    await inbox.migrate();
    const receiver = createReceiver({ secrets: SECRET, inbox });
    receiver.on('app:budget:cap', () => {
      throw new Error('fails');
    });
    const webhooks = await serve(createNodeHandler(receiver));
    const metricsUrl = await serve((req, res) => exporter.getMetricsRequestHandler(req, res));

    const body = {
      action: 'app:budget:cap',
      status: 'success',
      timestamp: new Date().toISOString(),
      data: { app: 'billing-api', tick_id: 'p1' },
    };
    const delivery = createSignedRequestSync(body, { secrets: SECRET, timestamp: Math.floor(Date.now() / 1000) });
    expect((await fetch(webhooks, { method: 'POST', headers: delivery.headers, body: delivery.body })).status).toBe(200);
    const forged = createSignedRequestSync(body, { secrets: 'forged', timestamp: Math.floor(Date.now() / 1000) });
    expect((await fetch(webhooks, { method: 'POST', headers: forged.headers, body: forged.body })).status).toBe(401);
    const worker = inbox.work(receiver, { pollIntervalMs: 20, maxAttempts: 1 });
    onTestFinished(() => worker.stop());
    await worker.drain();

    const scrape = async () => {
      const response = await fetch(`${metricsUrl}/metrics`);
      expect(response.status).toBe(200);
      return response.text();
    };
    // The inbox gauges' counts are cached for up to 5 s: scrape until the drained state shows.
    await expect
      .poll(scrape, { timeout: 20_000, interval: 500 })
      .toMatch(/rack_webhooks_inbox_deliveries\{[^}]*rack_webhooks_state="dead"[^}]*\} 1/);
    const text = await scrape();
    const line = (pattern: RegExp) => text.split('\n').find((one) => pattern.test(one));
    expect(line(/^messaging_client_consumed_messages_total\{.*rack_webhooks_outcome="accepted".*\} 1$/)).toBeDefined();
    expect(
      line(/^messaging_client_consumed_messages_total\{(?=.*error_type="signature_mismatch")(?=.*rack_webhooks_outcome="refused").*\} 1$/),
    ).toBeDefined();
    expect(line(/^messaging_client_operation_duration_count\{.*rack_webhooks_outcome="accepted".*\} 1$/)).toBeDefined();
    expect(line(/^messaging_process_duration_count\{.*rack_webhooks_outcome="dead".*\} 1$/)).toBeDefined();
    expect(line(/^messaging_process_duration_bucket\{.*le="0\.005".*\}/)).toBeDefined(); // seconds buckets
    expect(line(/^rack_webhooks_deliveries_dead_total\{.*messaging_destination_name="app:budget:cap".*\} 1$/)).toBeDefined();
    expect(line(/^rack_webhooks_inbox_oldest_pending_age\{.*\} 0$/)).toBeDefined();
    expect(line(/^rack_webhooks_workers_live\{.*\} 1$/)).toBeDefined();
    expect(text).not.toContain(SECRET);
  });
});
