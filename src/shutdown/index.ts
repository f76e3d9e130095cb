export { createShutdown } from './create-shutdown.js';
export { ShutdownError } from './errors.js';
export type {
  Shutdown,
  ShutdownInbox,
  ShutdownLogger,
  ShutdownLogRecord,
  ShutdownOptions,
  ShutdownPhase,
  ShutdownResult,
  ShutdownServer,
  ShutdownStep,
  ShutdownWorker,
} from './types.js';
