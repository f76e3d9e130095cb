// Compiles every ```ts / ```typescript block of README.md, as it stands, against the BUILT package
// (run after the build): a snippet that stops compiling is a documentation bug and fails npm test.
// See compile-snippets.mjs for how, and for the application names a snippet may use undeclared.
// A block preceded by `<!-- snippet: skip -->` (a signature list, not code) is left out, and counted.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileSnippets } from './compile-snippets.mjs';
import { root } from './lib.mjs';

const SKIP_MARKER = '<!-- snippet: skip -->';

/** Every ts/typescript fenced block, with the README line of its first line of code and whether it is skipped. */
export function extractSnippets(markdown) {
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
    if (i === lines.length) throw new Error(`README.md:${line - 1}: a \`\`\`${open[1]} block is never closed`);
    snippets.push({ line, code: body.join('\n'), skip });
  }
  return snippets;
}

const snippets = extractSnippets(readFileSync(join(root, 'README.md'), 'utf8'));
const compiled = snippets.filter((s) => !s.skip);
if (compiled.length === 0) throw new Error('README.md has no TypeScript snippet to compile');
compileSnippets(
  'readme-snippets',
  compiled.map((s) => ({
    file: `readme-line-${s.line}.ts`,
    code: s.code,
    locate: (line, column) => `README.md:${s.line + line - 1}:${column}`,
  })),
);
console.log(
  `README snippets: ${compiled.length} TypeScript blocks compiled against the built package, ${snippets.length - compiled.length} skipped (${SKIP_MARKER}).`,
);
