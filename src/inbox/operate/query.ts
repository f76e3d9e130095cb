/**
 * One statement on the inbox's database, rows as plain objects: what the reads made for the CLI
 * and the console take, since they run over the CLI's pool or PGlite rather than an inbox's driver.
 */
export type Query = (text: string, params?: readonly unknown[]) => Promise<Record<string, unknown>[]>;
