/**
 * The page's files, read once at start into memory. A request is answered from this fixed map by
 * its exact path, so no request path ever reaches the file system: `..`, encoded slashes and
 * absolute paths simply name nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface Asset {
  readonly type: string;
  readonly body: Buffer;
  /** The same, gzip-compressed, for clients that accept it. */
  readonly gzip: Buffer;
}

/** The page's shell: everything else is built by its script. */
export const PAGE_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="color-scheme" content="light dark">
<title>rack-webhooks console</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="assets/console.css"><script type="module" src="assets/console.js"></script></head>
<body><div id="root"></div></body></html>
`;

/**
 * Nothing but this origin's own files and data: no inline script, no other host, no framing.
 * `img-src data:` is for the empty favicon above (no request at all).
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const BUILT_FILES: readonly [path: string, file: string, type: string][] = [
  ['/assets/console.js', 'console.js', 'text/javascript; charset=utf-8'],
  ['/assets/console.css', 'console.css', 'text/css; charset=utf-8'],
];

function asset(type: string, body: Buffer): Asset {
  return { type, body, gzip: gzipSync(body, { level: 9 }) };
}

export class ConsoleAssetsMissingError extends Error {
  override readonly name = 'ConsoleAssetsMissingError';
}

/** `/`, the script and the stylesheet; throws a clear error when the page was not built. */
export function loadAssets(directory: string): ReadonlyMap<string, Asset> {
  const assets = new Map<string, Asset>([['/', asset('text/html; charset=utf-8', Buffer.from(PAGE_HTML))]]);
  for (const [path, file, type] of BUILT_FILES) {
    let body: Buffer;
    try {
      body = readFileSync(join(directory, file));
    } catch {
      throw new ConsoleAssetsMissingError(`the console's page is not built (${join(directory, file)} is missing): run npm run build`);
    }
    assets.set(path, asset(type, body));
  }
  return assets;
}

/** What the page costs to load: every file, as sent to a browser that accepts gzip. */
export function transferSize(assets: ReadonlyMap<string, Asset>): { raw: number; gzip: number } {
  let raw = 0;
  let gzip = 0;
  for (const item of assets.values()) {
    raw += item.body.length;
    gzip += item.gzip.length;
  }
  return { raw, gzip };
}
