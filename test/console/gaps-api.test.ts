/**
 * GET /api/gaps over a real inbox whose watcher found gaps of both kinds: the log gaps with the
 * deliveries that imply them, the scheduled reconcile's gaps with their proof and, for a recorded
 * one, its delivery; the token required as for every route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGapsFixture, type GapsFixture } from './gaps-fixture.js';

let gaps: GapsFixture;
beforeAll(async () => {
  gaps = await openGapsFixture();
}, 120_000);
afterAll(() => gaps?.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${gaps.fixture.console.origin}${path}`, { headers: { accept: 'application/json', ...headers } });

describe('GET /api/gaps', () => {
  it('lists the open log gaps and reconcile gaps with their evidence', async () => {
    const response = await get('/api/gaps', { authorization: `Bearer ${gaps.fixture.console.token}` });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      logGaps: [
        {
          key: `log_gap:web:release:create:${gaps.releaseId}`,
          severity: 'critical',
          app: 'web',
          id: gaps.releaseId,
          missing: 'release:create',
          evidence: [{ deliveryId: gaps.buildDeliveryId, action: 'build:create' }],
        },
      ],
      reconcile: {
        problems: [],
        gaps: [
          {
            key: `reconcile_gap:web:release:create:${gaps.releaseId}`,
            action: 'release:create',
            app: 'web',
            id: gaps.releaseId,
            status: null,
            evidence: { route: '/apps/web/releases?limit=50', field: 'id', value: gaps.releaseId },
            recorded: null,
          },
          {
            key: `reconcile_gap:web:app:budget:auto-shutdown:armed:${gaps.tick}`,
            action: 'app:budget:auto-shutdown:armed',
            id: gaps.tick,
            evidence: { route: '/apps/web/budget/shutdown-state', field: 'armedNotificationFiredAt' },
            recorded: { id: gaps.recordedId },
          },
        ],
      },
    });
    const [first] = (body['reconcile'] as { gaps: { since: string; openedAt: string; evidence: { at: string } }[] }).gaps;
    expect(first!.since).toBe(new Date(first!.evidence.at).toISOString());
    expect(Number.isNaN(Date.parse(first!.openedAt))).toBe(false);
  });

  it('answers 401 without the token', async () => {
    const response = await get('/api/gaps');
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: 'unauthorized' } });
  });
});
