/**
 * Read tokens as the rack mints them (a JWT with `user`, `role`, `expiresAt`), for the emulator's
 * API. The emulator knows the tokens it minted instead of checking an HS256 signature: a token it
 * did not mint, or one minted before `rotateTokens()`, is refused as a deployed rack refuses it.
 */

/** `r` reads; `rw` also writes; `rwa` is admin (rack-api.md 1.3). */
export type RackRole = 'r' | 'rw' | 'rwa';

const USERS: Record<RackRole, string> = { r: 'system-read', rw: 'system-write', rwa: 'system-admin' };

function base64Url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  return btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(''))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

function randomPart(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(32));
  return base64Url(Array.from(bytes, (byte) => String.fromCharCode(byte)).join('')).slice(0, 43);
}

export interface MintedToken {
  readonly role: RackRole;
  readonly expiresAt: number;
}

/** The tokens of one emulated rack. */
export class TokenBook {
  #tokens = new Map<string, MintedToken>();

  /** A token as `POST /system/jwt/token` returns it. */
  mint(role: RackRole, expiresAt: Date): string {
    const seconds = Math.floor(expiresAt.getTime() / 1000);
    const header = base64Url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const payload = base64Url(JSON.stringify({ user: USERS[role], role, expiresAt: seconds }));
    const token = `${header}.${payload}.${randomPart()}`;
    this.#tokens.set(token, { role, expiresAt: seconds });
    return token;
  }

  /** `PUT /system/jwt/rotate`: every token minted so far stops working. */
  rotate(): void {
    this.#tokens.clear();
  }

  /** The token's grant, or the reason the rack gives for refusing it. */
  check(token: string, now: Date): MintedToken | { refused: string } {
    const minted = this.#tokens.get(token);
    if (minted === undefined) return { refused: 'token signature is invalid' };
    if (minted.expiresAt * 1000 <= now.getTime()) return { refused: 'token is expired' };
    return minted;
  }
}
