/** A PostgreSQL identifier in double quotes, its own quotes doubled: the one quoting function (schema/ and pg.ts use it). */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
