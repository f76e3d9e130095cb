/**
 * createShutdown on a real node:http server with real keep-alive clients: readiness flips at once,
 * deliveries are still answered through the drain (each with `Connection: close`), idle keep-alive
 * connections close with the listener, a slow request finishes, a straggler's connection is cut at
 * its bound, and the worker, the inbox and the user's steps run once, in order, whatever fails.
 */
import { Agent } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createShutdown, ShutdownError, type ShutdownLogRecord, type ShutdownOptions } from '../../src/adapters/node.js';
import { deferred } from '../kit/time.js';
import { closed, oneConnection, send, serve, type Served } from './http.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function served(handler: Parameters<typeof serve>[0] = (_req, res) => res.end('ok')): Promise<Served> {
  const found = await serve(handler);
  cleanups.push(() => found.close());
  return found;
}

function agent(): Agent {
  const created = oneConnection();
  cleanups.push(() => created.destroy());
  return created;
}

/** Options for a test: no signal wired, records kept. */
function quiet(records: ShutdownLogRecord[], options: ShutdownOptions = {}): ShutdownOptions {
  return { signals: false, logger: (record) => records.push(record), ...options };
}

describe('createShutdown: the drain', () => {
  it(
    'goes unready at once, still answers deliveries on old and new connections, each with Connection: close',
    { timeout: 60_000 },
    async () => {
      const { server, port } = await served();
      const client = agent();
      const before = await send(port, client);
      expect(before.headers.connection).toBe('keep-alive');

      const records: ShutdownLogRecord[] = [];
      const shutdown = createShutdown(server, quiet(records, { drainMs: 4000 }));
      expect(shutdown.ready()).toBe(true);
      expect(shutdown.phase).toBe('serving');
      const done = shutdown.shutdown('deploy');
      expect(shutdown.ready()).toBe(false);
      expect(shutdown.phase).toBe('draining');

      // The keep-alive connection is reused, answered, then closed by the server.
      const reused = await send(port, client, '/', 'delivery');
      expect(reused.socket).toBe(before.socket);
      expect({ status: reused.status, connection: reused.headers.connection, phase: shutdown.phase }).toEqual({
        status: 200,
        connection: 'close',
        phase: 'draining',
      });
      await closed(reused.socket);
      // A new connection is still accepted while draining.
      const fresh = await send(port, agent(), '/', 'delivery');
      expect({ status: fresh.status, connection: fresh.headers.connection, phase: shutdown.phase }).toEqual({
        status: 200,
        connection: 'close',
        phase: 'draining',
      });

      expect(await done).toMatchObject({ reason: 'deploy', errors: [], cutConnections: 0 });
      expect(shutdown.phase).toBe('closed');
      await expect(send(port, agent())).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      expect(records.map((record) => [record.level, record.phase])).toEqual([
        ['info', 'draining'],
        ['info', 'closing'],
        ['info', 'closed'],
      ]);
      expect(records[0]!.message).toBe('deploy: not ready; taking deliveries for 4000 ms more');
    },
  );

  it('closes idle keep-alive connections when the listener closes', { timeout: 60_000 }, async () => {
    const { server, port } = await served();
    const idle = await send(port, agent());
    expect(idle.socket.destroyed).toBe(false);
    const result = await createShutdown(server, quiet([], { drainMs: 0 })).shutdown();
    await closed(idle.socket);
    expect(result.cutConnections).toBe(0);
  });
});

describe('createShutdown: requests in flight', () => {
  it('lets a slow request finish (answered with Connection: close) before the worker stops', { timeout: 60_000 }, async () => {
    const order: string[] = [];
    const arrived = deferred<void>();
    const release = deferred<void>();
    const { server, port } = await served((_req, res) => {
      arrived.resolve();
      void release.promise.then(() => {
        order.push('answered');
        res.end('stored');
      });
    });
    const shutdown = createShutdown(
      server,
      quiet([], { drainMs: 0, requestTimeoutMs: 60_000, worker: { stop: async () => void order.push('worker') } }),
    );
    const reply = send(port, agent(), '/', 'delivery');
    await arrived.promise;
    const done = shutdown.shutdown();
    await vi.waitFor(() => expect(shutdown.phase).toBe('closing'), { timeout: 30_000 });
    expect(server.listening).toBe(false);
    expect(order).toEqual([]);
    release.resolve();
    expect(await reply).toMatchObject({ status: 200, body: 'stored', headers: { connection: 'close' } });
    expect(await done).toMatchObject({ errors: [], cutConnections: 0 });
    expect(order).toEqual(['answered', 'worker']);
  });

  it('destroys the connection of a request still in flight past requestTimeoutMs, then goes on', { timeout: 60_000 }, async () => {
    const arrived = deferred<void>();
    const { server, port } = await served(() => arrived.resolve()); // never answers
    const stopped: unknown[] = [];
    const records: ShutdownLogRecord[] = [];
    const shutdown = createShutdown(
      server,
      quiet(records, { drainMs: 0, requestTimeoutMs: 300, worker: { stop: async (options) => void stopped.push(options) } }),
    );
    const reply = send(port, agent(), '/', 'delivery');
    await arrived.promise;
    const result = await shutdown.shutdown();
    await expect(reply).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(result).toMatchObject({ errors: [], cutConnections: 1 });
    expect(stopped).toEqual([{ timeoutMs: 10_000 }]);
    expect(records.find((record) => record.level === 'warn')?.message).toBe(
      '1 connection(s) destroyed with a request still in flight after 300 ms',
    );
  });
});

describe('createShutdown: the steps', () => {
  it('stops the worker with its timeout, then closes the inbox, then each close step in order', { timeout: 60_000 }, async () => {
    const { server } = await served();
    const calls: unknown[] = [];
    const result = await createShutdown(
      server,
      quiet([], {
        drainMs: 0,
        worker: { stop: async (options) => void calls.push(['worker', options]) },
        workerTimeoutMs: 1234,
        inbox: { close: async () => void calls.push('inbox') },
        close: [() => calls.push('close 1'), async () => void calls.push('close 2')],
      }),
    ).shutdown();
    expect(calls).toEqual([['worker', { timeoutMs: 1234 }], 'inbox', 'close 1', 'close 2']);
    expect(result.errors).toEqual([]);
  });

  it('is idempotent: a second call returns the same promise, and each step runs once', { timeout: 60_000 }, async () => {
    const { server } = await served();
    let stops = 0;
    let ends = 0;
    const shutdown = createShutdown(server, quiet([], { drainMs: 0, worker: { stop: async () => void stops++ }, close: () => ends++ }));
    const first = shutdown.shutdown('SIGTERM');
    const second = shutdown.shutdown('SIGINT');
    expect(second).toBe(first);
    expect((await first).reason).toBe('SIGTERM');
    expect(await shutdown.shutdown()).toBe(await first);
    expect({ stops, ends, ready: shutdown.ready() }).toEqual({ stops: 1, ends: 1, ready: false });
  });

  it('reports a failing step (a rejection or a throw) and still runs the later ones; never rejects', { timeout: 60_000 }, async () => {
    const { server } = await served();
    const calls: string[] = [];
    const records: ShutdownLogRecord[] = [];
    const result = await createShutdown(
      server,
      quiet(records, {
        drainMs: 0,
        worker: { stop: () => Promise.reject(new Error('worker boom')) },
        inbox: { close: async () => void calls.push('inbox') },
        close: [
          () => {
            throw new Error('pool boom');
          },
          () => calls.push('telemetry'),
        ],
      }),
    ).shutdown();
    expect(calls).toEqual(['inbox', 'telemetry']);
    expect(
      result.errors.map((error) => [error instanceof ShutdownError, (error as ShutdownError).code, (error as ShutdownError).step]),
    ).toEqual([
      [true, 'shutdown_step_failed', 'worker'],
      [true, 'shutdown_step_failed', 'close[0]'],
    ]);
    expect(result.errors.map((error) => error.message)).toEqual([
      'shutdown step worker failed: worker boom',
      'shutdown step close[0] failed: pool boom',
    ]);
    expect(records.at(-1)).toMatchObject({ level: 'warn', phase: 'closed' });
    expect(records.at(-1)!.message).toMatch(/^done in \d+ ms with 2 failed step\(s\)$/);
  });

  it('refuses what it cannot use with a ShutdownError (code shutdown_invalid_option)', async () => {
    const { server } = await served();
    const refused = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return [error instanceof ShutdownError, (error as ShutdownError).code, (error as Error).message];
      }
      return 'accepted';
    };
    const express = Object.assign(() => {}, { listen: () => {} }); // an Express app, not its server
    expect(refused(() => createShutdown(express as never))).toEqual([
      true,
      'shutdown_invalid_option',
      'createShutdown: expects a node:http or node:https Server: the result of app.listen() for Express, fastify.server for Fastify, or http.createServer()',
    ]);
    expect(refused(() => createShutdown(server, { signals: false, drainMs: -1 }))).toEqual([
      true,
      'shutdown_invalid_option',
      'createShutdown: drainMs must be a number of ms from 0 to 2147483647, got -1',
    ]);
    expect(refused(() => createShutdown(server, { signals: false, requestTimeoutMs: Number.NaN }))[1]).toBe('shutdown_invalid_option');
    expect(refused(() => createShutdown(server, { signals: false, close: 'pool.end' as never }))[1]).toBe('shutdown_invalid_option');
    expect(refused(() => createShutdown(server, { signals: 'SIGTERM' as never }))[1]).toBe('shutdown_invalid_option');
    expect(refused(() => createShutdown(server, { signals: false, worker: {} as never }))[1]).toBe('shutdown_invalid_option');
    expect(refused(() => createShutdown(server, { signals: false, inbox: {} as never }))[1]).toBe('shutdown_invalid_option');
  });
});
