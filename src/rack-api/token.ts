import type { RackTokenClaims } from './types.js';

function base64UrlText(part: string): string | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) return undefined;
  const padded = part.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (part.length % 4)) % 4);
  try {
    const binary = atob(padded);
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

/**
 * A rack token's claims, read from its payload without the rack's key (the rack checks the
 * signature; the client only wants the role and the expiry, to say why a 401 happened and to warn
 * before it lapses). Undefined when the text is not a JWT with these claims.
 */
export function decodeRackToken(token: string): RackTokenClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const text = base64UrlText(parts[1]!);
  if (text === undefined) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof payload !== 'object' || payload === null) return undefined;
  const { user, role, expiresAt } = payload as Record<string, unknown>;
  if (typeof role !== 'string' || typeof expiresAt !== 'number') return undefined;
  return { user: typeof user === 'string' ? user : '', role, expiresAt };
}
