// The core and the fetch adapter must load on Workers and in browsers: follow every import of
// dist/index.js and dist/web.js (and the chunks they pull in) and fail on any node: module.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { root } from './lib.mjs';

const IMPORT = /(?:import|export)\s*(?:[^'"]*?\sfrom\s*)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
const BUILTINS = /^(node:|fs$|path$|crypto$|http$|https$|net$|os$|stream$|buffer$|child_process$|url$|util$)/;
const problems = [];
for (const entry of ['dist/index.js', 'dist/web.js', 'dist/testing.js']) {
  const seen = new Set();
  const queue = [join(root, entry)];
  while (queue.length > 0) {
    const file = queue.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    const code = readFileSync(file, 'utf8');
    for (const match of code.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2];
      if (BUILTINS.test(specifier)) problems.push(`${entry}: ${file.slice(root.length + 1)} imports ${specifier}`);
      else if (specifier.startsWith('.')) queue.push(join(dirname(file), specifier));
      else problems.push(`${entry}: ${file.slice(root.length + 1)} imports the package ${specifier} (the core has no dependencies)`);
    }
  }
  console.log(`runtime-neutral: ${entry} and ${seen.size - 1} chunk(s) import no node: module`);
}
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
