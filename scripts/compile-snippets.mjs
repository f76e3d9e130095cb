// Compiles documentation snippets (README blocks, TSDoc @example blocks) against the BUILT package,
// as a user's project would: each snippet is its own module in a scratch directory where
// `rack-webhooks` resolves to this package through a symlinked node_modules entry (so through
// package.json "exports" to dist/*.d.ts), checked by `tsc --noEmit` with `strict` on.
//
// The names a snippet takes from the reader's own application (the request's `rawBody`, a
// `receiver` built in an earlier snippet, a `page()` function) are declared once in PRELUDE;
// everything from this package must be imported by the snippet itself.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, tmp } from './lib.mjs';

/** The reader's own names that snippets use without defining them. Keep this short. */
const PRELUDE = `// The application's own names that documentation snippets use (see scripts/compile-snippets.mjs).
type Receiver = import('rack-webhooks').Receiver;
type AnyEvent = import('rack-webhooks').AnyWebhookEvent;

/** The request body exactly as received, and the request's headers. */
declare const rawBody: Buffer;
declare const headers: Record<string, string | undefined>;
declare const signatureHeader: string | undefined;
declare const req: import('node:http').IncomingMessage;
/** The receiver's keys, as the snippets after the first pass them. */
declare const secrets: string;
/** A receiver and an inbox built as earlier snippets show. */
declare const receiver: Receiver;
declare const inbox: import('rack-webhooks/inbox').Inbox;
/** What the application does with an event. */
declare function page(message: string): Promise<void>;
declare function reply(status: number, body: { error: string }): unknown;
declare function notifyOnCall(event: AnyEvent): void;
declare function audit(action: string): void;
declare function store(event: AnyEvent): void;
declare function report(error: unknown): void;
declare const metrics: { gauge(name: string, value: number): void };
/** A test's app (Fastify, for inject), its fetch handler, and supertest's request(). */
declare const app: import('fastify').FastifyInstance;
declare const handler: (request: Request) => Promise<Response>;
declare function request(app: unknown): {
  post(path: string): { set(headers: Record<string, string>): { send(body: string): { expect(status: number, body?: unknown): Promise<unknown> } } };
};
`;

/**
 * snippets: [{ file, code, locate? }]; `file` is a name such as `readme-line-34.ts`, and
 * `locate(line, column)` turns a position in it into the place a reader edits. Exits the process
 * with the compiler's errors when any snippet fails.
 */
export function compileSnippets(name, snippets) {
  const dir = join(tmp, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  // The package itself, by name: resolution goes through its package.json "exports" to dist/.
  symlinkSync(root, join(dir, 'node_modules', 'rack-webhooks'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  writeFileSync(join(dir, 'prelude.d.ts'), PRELUDE);
  // `export {}` keeps a snippet without imports a module of its own (its names do not collide
  // with another snippet's), and allows top-level await in every snippet.
  for (const snippet of snippets) writeFileSync(join(dir, snippet.file), `${snippet.code}\nexport {};\n`);
  const compilerOptions = {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'DOM'],
    types: ['node'],
    typeRoots: [join(root, 'node_modules/@types')],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  };
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions, files: ['prelude.d.ts', ...snippets.map((s) => s.file)] }, null, 2),
  );
  try {
    execFileSync(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json', '--pretty', 'false'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const byFile = new Map(snippets.map((s) => [s.file, s]));
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`.replace(/^([\w.-]+\.ts)\((\d+),(\d+)\)/gm, (whole, file, line, column) => {
      const snippet = byFile.get(file);
      return snippet?.locate === undefined ? whole : snippet.locate(Number(line), Number(column));
    });
    console.error(output.trim());
    console.error(`\n${name}: a TypeScript snippet does not compile against the built package (fix the snippet, or the API).`);
    process.exit(1);
  }
}
