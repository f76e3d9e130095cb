/** A mistake in how the tool was called (exit 2), as opposed to a failed check or delivery (exit 1). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
