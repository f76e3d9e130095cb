/** {@link createShutdown}'s options, checked once: a mistake is a `ShutdownError` at start-up, not at the first SIGTERM. */
import { MAX_TIMER_MS } from '../shared/timers.js';
import { invalidOption } from './errors.js';
import type { ShutdownInbox, ShutdownLogRecord, ShutdownOptions, ShutdownServer, ShutdownStep, ShutdownWorker } from './types.js';

export interface ShutdownSettings {
  readonly drainMs: number;
  readonly requestTimeoutMs: number;
  readonly worker: ShutdownWorker | undefined;
  readonly workerTimeoutMs: number;
  readonly inbox: ShutdownInbox | undefined;
  readonly close: readonly ShutdownStep[];
  readonly signals: readonly NodeJS.Signals[];
  readonly exit: boolean;
  readonly log: (record: ShutdownLogRecord) => void;
}

function consoleLogger(record: ShutdownLogRecord): void {
  const write = record.level === 'warn' ? console.warn : console.info;
  write(`[rack-webhooks] shutdown: ${record.message}`);
}

function milliseconds(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value >= 0) || value > MAX_TIMER_MS)
    throw invalidOption(`${name} must be a number of ms from 0 to ${MAX_TIMER_MS}, got ${String(value)}`);
  return value;
}

function hasMethods(value: unknown, names: readonly string[]): boolean {
  return (
    typeof value === 'object' && value !== null && names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
  );
}

function closeSteps(value: ShutdownOptions['close']): readonly ShutdownStep[] {
  if (value === undefined) return [];
  const steps: readonly unknown[] = Array.isArray(value) ? value : [value];
  if (!steps.every((step) => typeof step === 'function'))
    throw invalidOption('close must be a function (e.g. () => pool.end()) or an array of them');
  return steps as readonly ShutdownStep[];
}

function signalList(value: ShutdownOptions['signals']): readonly NodeJS.Signals[] {
  if (value === false) return [];
  if (value === undefined) return ['SIGTERM', 'SIGINT'];
  if (!Array.isArray(value) || !value.every((signal) => typeof signal === 'string' && /^SIG[A-Z0-9]+$/.test(signal)))
    throw invalidOption(`signals must be false or an array of signal names such as ['SIGTERM', 'SIGINT'], got ${JSON.stringify(value)}`);
  return value as readonly NodeJS.Signals[];
}

export function resolveShutdownOptions(server: ShutdownServer, options: ShutdownOptions): ShutdownSettings {
  if (!hasMethods(server, ['close', 'closeIdleConnections', 'closeAllConnections', 'prependListener']))
    throw invalidOption(
      'expects a node:http or node:https Server: the result of app.listen() for Express, fastify.server for Fastify, or http.createServer()',
    );
  if (typeof options !== 'object' || options === null) throw invalidOption('options must be an object');
  if (options.worker !== undefined && !hasMethods(options.worker, ['stop']))
    throw invalidOption('worker must be a worker from inbox.work() (an object with stop())');
  if (options.inbox !== undefined && !hasMethods(options.inbox, ['close']))
    throw invalidOption('inbox must be an inbox from createInbox() (an object with close())');
  const logger = options.logger;
  if (logger !== undefined && logger !== false && typeof logger !== 'function') throw invalidOption('logger must be a function or false');
  if (options.exit !== undefined && typeof options.exit !== 'boolean') throw invalidOption('exit must be true or false');
  return {
    drainMs: milliseconds('drainMs', options.drainMs, 5000),
    requestTimeoutMs: milliseconds('requestTimeoutMs', options.requestTimeoutMs, 10_000),
    worker: options.worker,
    workerTimeoutMs: milliseconds('workerTimeoutMs', options.workerTimeoutMs, 10_000),
    inbox: options.inbox,
    close: closeSteps(options.close),
    signals: signalList(options.signals),
    exit: options.exit ?? true,
    log: logger === false ? () => {} : (logger ?? consoleLogger),
  };
}
