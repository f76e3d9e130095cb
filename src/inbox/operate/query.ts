import { inboxError } from '../../database/errors.js';

/**
 * One statement on the inbox's database, rows as plain objects: what the reads made for the CLI
 * and the console take, since they run over the CLI's pool or PGlite rather than an inbox's driver.
 */
export type Query = (text: string, params?: readonly unknown[]) => Promise<Record<string, unknown>[]>;

/** What `run` resolves with; its failure as the WebhookInboxError that says what to do, while `doing`. */
export async function failingAs<T>(table: string, doing: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw inboxError(error, table, doing);
  }
}
