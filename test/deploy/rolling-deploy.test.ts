/**
 * Issue 38, point 2: a rolling deploy loses nothing. Two replicas of examples/express-inbox.mjs on
 * one PostgreSQL table behind a readiness-aware balancer that never retries; the "rack" sends 100
 * signed deliveries a second, each once, on keep-alive connections; each replica is replaced in turn
 * as Kubernetes does it (maxSurge 1, maxUnavailable 0: the new one ready, then SIGTERM to the old,
 * its endpoint removed once it exited). Every delivery must be answered 2xx and every 2xx be a row.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, POSTGRES_URL, type TestDatabase } from '../inbox/databases.js';
import { newKey, startExample, stopAllExamples, type Running } from '../examples/helpers.js';
import { waitFor } from '../kit/time.js';
import { ReadinessBalancer } from './balancer.js';
import { finishAndTally, Sender } from './sender.js';

let database: TestDatabase<'pg'> | undefined;
let balancer: ReadinessBalancer | undefined;
afterEach(async () => {
  await balancer?.close();
  await stopAllExamples();
  await database?.close();
  balancer = database = undefined;
});

const DRAIN_MS = '3000'; // the balancer's 3 failed probes (200 ms apart), with room for a loaded machine

describe('a rolling deploy of examples/express-inbox.mjs', () => {
  it('answers every delivery 2xx and stores every 2xx while each of two replicas is replaced', { timeout: 180_000 }, async () => {
    database = await openDatabase('pg');
    const key = newKey();
    const env = { RACK_WEBHOOK_SECRETS: key, DATABASE_URL: POSTGRES_URL, INBOX_TABLE: database.table, SHUTDOWN_DRAIN_MS: DRAIN_MS };
    const lb = (balancer = new ReadinessBalancer(200));
    const lbPort = await lb.listen();

    const replicas = new Map<string, Running>();
    const startReplica = async (name: string) => {
      const running = await startExample('express-inbox.mjs', env, 60_000);
      replicas.set(name, running);
      lb.add(name, Number(new URL(running.url).port));
      await waitFor(
        () => lb.isReady(name),
        30_000,
        () => `${name} never became ready behind the balancer`,
      );
    };
    const replace = async (old: string, next: string) => {
      await startReplica(next);
      const exit = await replicas.get(old)!.stop(60_000);
      lb.remove(old); // the endpoint goes once the pod is gone
      expect(exit, `${old} exits 0 on SIGTERM`).toEqual({ code: 0, signal: null });
    };

    await Promise.all([startReplica('a'), startReplica('b')]);
    const sender = new Sender(new URL(`http://127.0.0.1:${lbPort}/webhooks`), key, 100);
    sender.start();
    await waitFor(
      () => sender.sent >= 100,
      30_000,
      () => 'the sender did not start',
    );
    await replace('a', 'c');
    await replace('b', 'd');
    const { outcomes, rows, figures } = await finishAndTally(sender, database);
    console.info(`rolling deploy: ${JSON.stringify(figures)}; balancer failures: ${JSON.stringify(lb.failures.slice(0, 5))}`);
    expect(lb.failures).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.status !== 200).slice(0, 5)).toEqual([]);
    expect(figures).toMatchObject({ refusedOrReset: 0, otherStatus: 0, okNotStored: 0 });
    expect(figures.answered2xx).toBe(figures.sent);
    expect(figures.sent).toBeGreaterThanOrEqual(300);
    expect(rows).toHaveLength(figures.sent); // each once: no row without its delivery

    for (const name of ['c', 'd']) expect(await replicas.get(name)!.stop(60_000)).toEqual({ code: 0, signal: null });
    expect(replicas.get('a')!.stdout()).toMatch(/^\[shutdown\] SIGTERM: not ready; taking deliveries for 3000 ms more$/m);
  });
});
