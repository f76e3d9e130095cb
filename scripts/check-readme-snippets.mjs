// Compiles every ```ts / ```typescript block of README.md and docs/*.md, as they stand, against the BUILT package
// (run after the build): a snippet that stops compiling is a documentation bug and fails npm test.
// See compile-snippets.mjs for how, and for the application names a snippet may use undeclared.
// A block preceded by `<!-- snippet: skip -->` (a signature list, not code) is left out, and counted.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileSnippets } from './compile-snippets.mjs';
import { root } from './lib.mjs';

const SKIP_MARKER = '<!-- snippet: skip -->';

/** The user documentation: the README and every page under docs/ it links to. */
export const DOCUMENTATION_FILES = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** Every ts/typescript fenced block, with the line of its first line of code and whether it is skipped. */
export function extractSnippets(markdown, file = 'README.md') {
  const lines = markdown.split('\n');
  const snippets = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(ts|typescript)\s*$/.exec(lines[i]);
    if (open === null) {
      // Skip over other fenced blocks whole, so a ``` inside them is never taken for an opening.
      if (/^```/.test(lines[i])) while (++i < lines.length && !/^```\s*$/.test(lines[i]));
      continue;
    }
    let previous = i - 1;
    while (previous >= 0 && lines[previous].trim() === '') previous--;
    const skip = previous >= 0 && lines[previous].trim() === SKIP_MARKER;
    const line = i + 2;
    const body = [];
    while (++i < lines.length && !/^```\s*$/.test(lines[i])) body.push(lines[i]);
    if (i === lines.length) throw new Error(`${file}:${line - 1}: a \`\`\`${open[1]} block is never closed`);
    snippets.push({ line, code: body.join('\n'), skip });
  }
  return snippets;
}

const snippets = DOCUMENTATION_FILES.flatMap((file) =>
  extractSnippets(readFileSync(join(root, file), 'utf8'), file).map((snippet) => ({ ...snippet, file })),
);
const compiled = snippets.filter((s) => !s.skip);
for (const file of ['README.md', 'docs/inbox.md', 'docs/receiver.md']) {
  if (!compiled.some((s) => s.file === file)) throw new Error(`${file} has no TypeScript snippet to compile: was it moved?`);
}
compileSnippets(
  'readme-snippets',
  compiled.map((s) => ({
    file: `${s.file.replace(/[/.]/g, '-')}-line-${s.line}.ts`,
    code: s.code,
    locate: (line, column) => `${s.file}:${s.line + line - 1}:${column}`,
  })),
);
const perFile = DOCUMENTATION_FILES.map((file) => `${file} ${compiled.filter((s) => s.file === file).length}`).join(', ');
console.log(
  `Documentation snippets: ${compiled.length} TypeScript blocks compiled against the built package (${perFile}), ${snippets.length - compiled.length} skipped (${SKIP_MARKER}).`,
);
