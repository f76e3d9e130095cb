/** Log helpers: codes and sentences about an error, never its payload. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown_error';
}

export function describeRejection(error: unknown, headerName: string): string {
  const code = errorCode(error);
  if (code === 'missing_header') {
    return `delivery rejected: it carried no ${headerName} header at all (an unsigned delivery: no key on the rack, a rack older than 3.24.6, more than 4 keys, or a proxy dropped it)`;
  }
  return `delivery rejected: ${code}`;
}
