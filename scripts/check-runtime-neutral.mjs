// The core and the fetch adapter must load on Workers and in browsers: follow every import of
// dist/index.js, dist/web.js, dist/testing.js and dist/validate.js (and the chunks they pull in)
// and fail on any node: module or package. esbuild parses the files, so text that merely looks
// like an import (the message that tells a user to add `import 'rack-webhooks/validate'`) is not one.
import { build } from 'esbuild';
import { join } from 'node:path';
import { root } from './lib.mjs';

const BUILTINS = /^(node:|fs$|path$|crypto$|http$|https$|net$|os$|stream$|buffer$|child_process$|url$|util$)/;
const problems = [];
for (const entry of ['dist/index.js', 'dist/web.js', 'dist/testing.js', 'dist/validate.js']) {
  const { metafile } = await build({
    entryPoints: [join(root, entry)],
    absWorkingDir: root,
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'neutral',
    logLevel: 'silent',
    // Every bare specifier stays external, so that it shows up in the metafile instead of failing to resolve.
    plugins: [{ name: 'externals', setup: (b) => b.onResolve({ filter: /^[^./]/ }, (args) => ({ path: args.path, external: true })) }],
  });
  const files = Object.keys(metafile.inputs);
  for (const file of files) {
    for (const { path, external } of metafile.inputs[file].imports) {
      if (!external) continue;
      if (BUILTINS.test(path)) problems.push(`${entry}: ${file} imports ${path}`);
      else problems.push(`${entry}: ${file} imports the package ${path} (the core has no dependencies)`);
    }
  }
  console.log(`runtime-neutral: ${entry} and ${files.length - 1} chunk(s) import no node: module`);
}
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
