/** Why a shutdown could not be set up, or which of its steps failed. */
export class ShutdownError extends Error {
  /** Always `'ShutdownError'`. */
  override readonly name = 'ShutdownError';
  /** `shutdown_invalid_option`: `createShutdown` was given something it cannot use. `shutdown_step_failed`: a step threw or rejected. */
  readonly code: 'shutdown_invalid_option' | 'shutdown_step_failed';
  /** The step that failed (`worker`, `inbox`, `close[0]`, ...); undefined for an invalid option. */
  readonly step: string | undefined;

  constructor(code: ShutdownError['code'], message: string, options: { step?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.step = options.step;
  }
}

export function invalidOption(message: string): ShutdownError {
  return new ShutdownError('shutdown_invalid_option', `createShutdown: ${message}`);
}
