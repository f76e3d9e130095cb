import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Pages that list things must not drift from them: CONTRIBUTING.md's repository layout names files
 * under src/ (it named a crypto/deferred-backend.ts that did not exist), and docs/operating.md's
 * contents list must name every section of the page.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** Every file under a folder, as paths relative to it. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

/** The layout block's entries: `src/<folder>/` and the text that describes it, up to the next entry. */
function layoutEntries(contributing: string): { folder: string; text: string }[] {
  const section = contributing.slice(contributing.indexOf('## Repository layout'));
  const block = /```\n([\s\S]*?)```/.exec(section)![1]!;
  const entries: { folder: string; text: string }[] = [];
  for (const line of block.split('\n')) {
    const entry = /^(src\/[\w-]+\/)\s+(.*)$/.exec(line);
    if (entry !== null) entries.push({ folder: entry[1]!, text: entry[2]! });
    else if (/^\S/.test(line))
      entries.push({ folder: '', text: '' }); // another top-level entry ends the last one
    else if (entries.length > 0) entries[entries.length - 1]!.text += ` ${line.trim()}`;
  }
  return entries.filter((entry) => entry.folder !== '');
}

describe('CONTRIBUTING.md repository layout', () => {
  const entries = layoutEntries(read('CONTRIBUTING.md'));

  it('describes the src/ folders', () => {
    expect(entries.map((entry) => entry.folder)).toEqual(expect.arrayContaining(['src/crypto/', 'src/receiver/', 'src/inbox/']));
  });

  it('names only files that exist in the folder it describes', () => {
    const missing: string[] = [];
    for (const { folder, text } of entries) {
      const files = filesUnder(join(ROOT, folder));
      // A name such as `steps/verify.ts` or `verify.ts` (any depth): it must be one of the folder's files.
      for (const [name] of text.matchAll(/[\w./-]+\.ts\b/g)) {
        const bare = name.replace(/^\.\//, '');
        if (bare.startsWith('src/') || bare.startsWith('test/')) {
          if (!existsSync(join(ROOT, bare))) missing.push(`${folder}: ${bare}`);
        } else if (!files.some((file) => file === bare || file.endsWith(`/${bare}`))) missing.push(`${folder}: ${bare}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('docs/operating.md contents', () => {
  it('lists every section of the page, in order', () => {
    const page = read('docs/operating.md');
    const sections = [...page.matchAll(/^## (.+)$/gm)].map((match) => match[1]!);
    const intro = page.slice(0, page.indexOf('\n## '));
    const listed = [...intro.matchAll(/^- \[([^\]]+)\]\(#/gm)].map((match) => match[1]!);
    expect(listed).toEqual(sections);
  });
});
