import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The README is a page of links into docs/: every relative link in the user documentation must
 * name a file that exists and, with a #fragment, a heading of that file (GitHub's anchor rule), so
 * that moving a section breaks this test instead of the reader's click.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  'examples/README.md',
  'bench/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside fenced code blocks (a `# comment` in a shell block is not a heading). */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (/^```/.test(line)) fenced = !fenced;
    return !fenced && !/^```/.test(line);
  });
}

/** GitHub's anchors: lower case, punctuation but `-` and `_` dropped, spaces to `-`, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const base = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  // Explicit anchors: <a id="..."></a>
  for (const [, id] of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id!);
  return anchors;
}

function linksOf(markdown: string): string[] {
  // Inline code is not a link: `[a](b)` in backticks is left out.
  const text = prose(markdown)
    .join('\n')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!);
}

describe('documentation links', () => {
  it('anchors follow GitHub: punctuation dropped, spaces to hyphens, repeats numbered', () => {
    expect([...anchorsOf('# Receiver and replay/duplicate protection\n## `rack-webhooks/inbox`\n## A\n## A\n')]).toEqual([
      'receiver-and-replayduplicate-protection',
      'rack-webhooksinbox',
      'a',
      'a-1',
    ]);
  });

  it.each(PAGES)('%s: every relative link names an existing file and heading', (page) => {
    const markdown = readFileSync(join(ROOT, page), 'utf8');
    const broken: string[] = [];
    for (const link of linksOf(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:
      const [path, fragment] = link.split('#') as [string, string | undefined];
      const target = path === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURI(path));
      if (!existsSync(target)) {
        broken.push(`${link}: ${relative(ROOT, target)} does not exist`);
        continue;
      }
      if (fragment === undefined || !target.endsWith('.md')) continue;
      if (!anchorsOf(readFileSync(target, 'utf8')).has(fragment))
        broken.push(`${link}: no heading #${fragment} in ${relative(ROOT, target)}`);
    }
    expect(broken).toEqual([]);
  });
});
