import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The folders under src/ are layers: every import runs down the tree (signature -> crypto -> shared),
 * never back up. A cycle between two folders means neither can be read, tested or bundled without
 * the other, so it fails here with the files that close it.
 */
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

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

/** folder -> folder it imports -> the `file: specifier` lines that do it. */
function folderGraph(files: readonly string[], read: (file: string) => string): FolderGraph {
  const graph: FolderGraph = new Map();
  for (const file of files) {
    const from = layerOf(file)!;
    for (const [, specifier] of read(file).matchAll(SPECIFIER)) {
      const to = layerOf(resolve(dirname(file), specifier!));
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
