import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The folders under src/ are layers: every import runs down the tree (signature -> crypto -> shared),
 * never back up. A cycle between two folders means neither can be read, tested or bundled without
 * the other, so it fails here with the files that close it. src/database (one driver per client, the
 * PGlite owner and guests, the inbox's errors) is the layer under src/inbox: it imports only
 * src/shared, so a driver can be read and tested without the inbox. The same holds for the folders
 * (and files) inside src/inbox, over a quarter of the code, and inside src/database; and the CLI and the
 * console, which operate an inbox, reach it through one door, src/inbox/facade/, so its layout can
 * change without them.
 */
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const INBOX = join(SRC, 'inbox');
const DATABASE = join(SRC, 'database');
const FACADE = join(INBOX, 'facade');
/** The console's page runs in a browser: its door, page.ts, reaches types that import nothing of Node. */
const PAGE = join(SRC, 'console', 'app');
const PAGE_DOOR = join(FACADE, 'page.ts');

/** A relative specifier in an import, an export ... from, a side-effect import or a dynamic import(). */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

type FolderGraph = Map<string, Map<string, string[]>>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The top-level folder of a path under src/, '(entry points)' for src/*.ts; undefined outside src/. */
function layerOf(path: string): string | undefined {
  const parts = relative(SRC, path).split(sep);
  if (parts[0] === '..') return undefined;
  return parts.length === 1 ? '(entry points)' : parts[0];
}

/** The folder, or file (`rows.ts` for `./rows.js`), directly under `dir` that holds a path; undefined outside it. */
function layerUnder(dir: string): (path: string) => string | undefined {
  return (path) => {
    const [first] = relative(dir, path).split(sep);
    return first === '..' || first === '' ? undefined : first!.replace(/\.js$/, '.ts');
  };
}
const inboxLayerOf = layerUnder(INBOX);

/** folder -> folder it imports -> the `file: specifier` lines that do it. */
function folderGraph(files: readonly string[], read: (file: string) => string, layer = layerOf): FolderGraph {
  const graph: FolderGraph = new Map();
  for (const file of files) {
    const from = layer(file)!;
    for (const [, specifier] of read(file).matchAll(SPECIFIER)) {
      const to = layer(resolve(dirname(file), specifier!));
      if (to === undefined || to === from) continue;
      if (!graph.has(from)) graph.set(from, new Map());
      const edges = graph.get(from)!;
      edges.set(to, [...(edges.get(to) ?? []), `${relative(SRC, file)}: ${specifier}`]);
    }
  }
  return graph;
}

/** The .ts file a relative specifier names (`./x.js` is `./x.ts`, a folder its index.ts); undefined for other files. */
function resolveSource(file: string, specifier: string): string | undefined {
  const base = resolve(dirname(file), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((candidate) => candidate.endsWith('.ts') && existsSync(candidate));
}

/**
 * file -> file it imports -> the specifiers. Type-only imports count: a cycle of types still means
 * neither file can be read without the other.
 */
function fileGraph(files: readonly string[], read: (file: string) => string, exists = resolveSource): FolderGraph {
  const graph: FolderGraph = new Map();
  for (const file of files) {
    const from = relative(SRC, file);
    for (const [, specifier] of read(file).matchAll(SPECIFIER)) {
      const target = exists(file, specifier!);
      if (target === undefined) continue;
      const to = relative(SRC, target);
      if (!graph.has(from)) graph.set(from, new Map());
      const edges = graph.get(from)!;
      edges.set(to, [...(edges.get(to) ?? []), `${from}: ${specifier}`]);
    }
  }
  return graph;
}

const inside = (dir: string, path: string) => path.startsWith(dir + sep);

/**
 * The imports of src/cli and src/console into the inbox that do not go through its facade, as
 * `file: specifier` lines. The public entry src/inbox.ts counts as the inbox: it is the users' door.
 */
function facadeBypasses(files: readonly string[], read: (file: string) => string, exists = resolveSource): string[] {
  const tools = [join(SRC, 'cli'), join(SRC, 'console')];
  const found: string[] = [];
  for (const file of files.filter((f) => tools.some((dir) => inside(dir, f)))) {
    for (const [, specifier] of read(file).matchAll(SPECIFIER)) {
      const target = exists(file, specifier!);
      if (target === undefined || !(inside(INBOX, target) || target === `${INBOX}.ts`)) continue;
      const allowed = inside(PAGE, file) ? target === PAGE_DOOR : inside(FACADE, target);
      if (!allowed) found.push(`${relative(SRC, file)}: ${specifier}`);
    }
  }
  return found;
}

/** The first cycle found by depth-first search, as the list of folders on it; undefined if none. */
function findCycle(graph: FolderGraph): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (state.get(next) === 'open') return [...stack.slice(stack.indexOf(next)), next];
      if (state.get(next) === undefined) {
        const found = visit(next);
        if (found !== undefined) return found;
      }
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of [...graph.keys()].sort()) {
    if (state.get(node) === undefined) {
      const found = visit(node);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function describeCycle(graph: FolderGraph, cycle: readonly string[]): string {
  return cycle
    .slice(1)
    .map((to, i) => `${cycle[i]} -> ${to}\n    ${graph.get(cycle[i]!)!.get(to)!.join('\n    ')}`)
    .join('\n');
}

describe('src/ folders form layers: no import cycle between them', () => {
  const graph = folderGraph(sourceFiles(SRC), (file) => readFileSync(file, 'utf8'));

  it('sees the imports it is meant to check (a parser that found nothing would pass anything)', () => {
    expect(graph.get('signature')?.has('crypto')).toBe(true);
    expect(graph.get('receiver')?.has('signature')).toBe(true);
    expect(graph.get('crypto')?.has('shared')).toBe(true);
  });

  it('has no cycle', () => {
    const cycle = findCycle(graph);
    expect(cycle === undefined ? 'no cycle' : `import cycle between src/ folders:\n${describeCycle(graph, cycle)}`).toBe('no cycle');
  });

  it('crypto imports nothing above it: only shared', () => {
    expect([...(graph.get('crypto')?.keys() ?? [])]).toEqual(['shared']);
  });

  it('database, the layer under the inbox, imports nothing above it: only shared', () => {
    expect(graph.get('inbox')?.has('database')).toBe(true);
    expect([...(graph.get('database')?.keys() ?? [])]).toEqual(['shared']);
  });

  it('reports a cycle, with the files that close it, when one exists', () => {
    const files = ['/signature/verify.ts', '/crypto/backend.ts', '/shared/hex.ts'].map((f) => join(SRC, f));
    const sources: Record<string, string> = {
      [files[0]!]: "import { x } from '../crypto/backend.js';",
      [files[1]!]: "import type { SigningKey } from '../signature/secrets.js';\nexport * from '../shared/hex.js';",
      [files[2]!]: "const lazy = () => import('./other.js');",
    };
    const synthetic = folderGraph(files, (file) => sources[file]!);
    const cycle = findCycle(synthetic);
    expect(cycle).toEqual(['crypto', 'signature', 'crypto']);
    expect(describeCycle(synthetic, cycle!)).toContain(`crypto${sep}backend.ts: ../signature/secrets.js`);
    expect(findCycle(folderGraph(files.slice(1), (file) => sources[file]!))).toBeUndefined();
  });
});

describe('src/ files import one another without a cycle', () => {
  const graph = fileGraph(sourceFiles(SRC), (file) => readFileSync(file, 'utf8'));

  it('sees the imports it is meant to check, type-only ones included', () => {
    expect(graph.get(join('receiver', 'types.ts'))?.has(join('receiver', 'inbox-contract.ts'))).toBe(true);
    expect(graph.get(join('cli', 'args.ts'))?.has(join('cli', 'parse-flags.ts'))).toBe(true);
  });

  it('has no cycle between two files, even in one folder', () => {
    const cycle = findCycle(graph);
    expect(cycle === undefined ? 'no cycle' : `import cycle between src/ files:\n${describeCycle(graph, cycle)}`).toBe('no cycle');
  });

  it('reports a cycle inside one folder, type imports included', () => {
    const files = ['cli/args.ts', 'cli/parse-flags.ts', 'cli/usage-error.ts'].map((f) => join(SRC, f));
    const sources: Record<string, string> = {
      [files[0]!]: "export { parseFlags } from './parse-flags.js';",
      [files[1]!]: "import type { Flags } from './args.js';\nimport { UsageError } from './usage-error.js';",
      [files[2]!]: 'export class UsageError extends Error {}',
    };
    const known = new Set(files);
    const exists = (file: string, specifier: string) => {
      const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
      return known.has(target) ? target : undefined;
    };
    const synthetic = fileGraph(files, (file) => sources[file]!, exists);
    expect(findCycle(synthetic)).toEqual([join('cli', 'args.ts'), join('cli', 'parse-flags.ts'), join('cli', 'args.ts')]);
    expect(findCycle(fileGraph(files.slice(1), (file) => sources[file]!, exists))).toBeUndefined();
  });
});

describe('the folders inside src/inbox form layers too', () => {
  const graph = folderGraph(sourceFiles(INBOX), (file) => readFileSync(file, 'utf8'), inboxLayerOf);

  it('sees the imports it is meant to check, its root files as layers of their own', () => {
    expect(graph.get('work')?.has('schema')).toBe(true);
    expect(graph.get('watch')?.has('operate')).toBe(true);
    expect(graph.get('health')?.has('operate')).toBe(true);
    expect(graph.get('create-inbox.ts')?.has('work')).toBe(true);
  });

  it('has no cycle', () => {
    const cycle = findCycle(graph);
    expect(cycle === undefined ? 'no cycle' : `import cycle between src/inbox folders:\n${describeCycle(graph, cycle)}`).toBe('no cycle');
  });

  it('operate, the statements over deliveries that health and watch share, imports neither: only the floors below', () => {
    expect([...(graph.get('operate')?.keys() ?? [])].sort()).toEqual(['rows.ts', 'schema', 'types.ts']);
  });

  it('reports a cycle between two of its folders, with the files that close it', () => {
    const files = ['operate/alerts.ts', 'watch/rules/lifecycle.ts', 'rows.ts'].map((f) => join(INBOX, f));
    const sources: Record<string, string> = {
      [files[0]!]: "import type { AlertRule } from '../watch/types.js';\nimport { inboxError } from '../../database/errors.js';",
      [files[1]!]: "import { listDeliveries } from '../../operate/read.js';\nimport { state } from '../../../state/fold.js';",
      [files[2]!]: "import type { Row } from '../database/driver.js';",
    };
    const synthetic = folderGraph(files, (file) => sources[file]!, inboxLayerOf);
    const cycle = findCycle(synthetic);
    expect(cycle).toEqual(['operate', 'watch', 'operate']);
    expect(describeCycle(synthetic, cycle!)).toContain(`${join('watch', 'rules', 'lifecycle.ts')}: ../../operate/read.js`);
    expect([...synthetic.keys()].sort()).toEqual(['operate', 'watch']); // rows.ts imports only outside src/inbox
    expect(findCycle(folderGraph([files[0]!, files[2]!], (file) => sources[file]!, inboxLayerOf))).toBeUndefined();
  });
});

describe('the folders inside src/database form layers too', () => {
  const graph = folderGraph(sourceFiles(DATABASE), (file) => readFileSync(file, 'utf8'), layerUnder(DATABASE));

  it('sees the imports it is meant to check: the drivers open PGlite directories through owner/', () => {
    expect(graph.get('pglite.ts')?.has('owner')).toBe(true);
    expect(graph.get('detect.ts')?.has('owner')).toBe(true);
  });

  it('has no cycle', () => {
    const cycle = findCycle(graph);
    expect(cycle === undefined ? 'no cycle' : `import cycle between src/database folders:\n${describeCycle(graph, cycle)}`).toBe(
      'no cycle',
    );
  });

  it('owner/, the PGlite owner and its guests, stands alone: it imports none of the drivers', () => {
    expect([...(graph.get('owner')?.keys() ?? [])]).toEqual([]);
  });
});

describe('the CLI and the console reach the inbox only through src/inbox/facade/', () => {
  const files = sourceFiles(SRC);
  const read = (file: string) => readFileSync(file, 'utf8');

  it('sees the imports it is meant to check', () => {
    const throughFacade = files.filter((file) => /inbox\/facade\/index\.js'/.test(read(file)));
    expect(throughFacade).toContain(join(SRC, 'cli', 'inbox-session.ts'));
    expect(throughFacade).toContain(join(SRC, 'console', 'server', 'router.ts'));
  });

  it('imports nothing else from src/inbox (add what a command needs to src/inbox/facade/index.ts)', () => {
    expect(facadeBypasses(files, read)).toEqual([]);
  });

  it('reports every import around the facade, the page through page.ts only', () => {
    const at = (f: string) => join(SRC, f);
    const sources: Record<string, string> = {
      [at('cli/commands/inbox/stats.ts')]:
        "import { readHistory } from '../../../inbox/operate/history.js';\nimport { formatTime } from '../../../inbox/facade/index.js';",
      [at('cli/open-database.ts')]: "import type { Inbox } from '../inbox.js';\nimport { oneLine } from './format.js';",
      [at('console/server/router.ts')]: "export type { Query } from '../../inbox/queries/query.js';",
      [at('console/app/types.ts')]:
        "import type { InboxStats } from '../../inbox/facade/page.js';\nimport type { DeliveryJson } from '../../inbox/facade/index.js';",
      [at('inbox/create-inbox.ts')]: "import { listDeliveries } from './queries/read.js';",
    };
    const exists = (file: string, specifier: string) => resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
    expect(facadeBypasses(Object.keys(sources), (file) => sources[file]!, exists)).toEqual([
      `${join('cli', 'commands', 'inbox', 'stats.ts')}: ../../../inbox/operate/history.js`,
      `${join('cli', 'open-database.ts')}: ../inbox.js`,
      `${join('console', 'server', 'router.ts')}: ../../inbox/queries/query.js`,
      `${join('console', 'app', 'types.ts')}: ../../inbox/facade/index.js`,
    ]);
  });

  it("the page's door reaches no node: module (the page is checked with browser types only)", () => {
    const graph = fileGraph(files, read);
    const reached = new Set([relative(SRC, PAGE_DOOR)]);
    for (const file of reached) for (const next of graph.get(file)?.keys() ?? []) reached.add(next);
    expect(reached.size).toBeGreaterThan(2);
    expect([...reached].filter((file) => /from\s*['"]node:/.test(read(join(SRC, file))))).toEqual([]);
  });
});
