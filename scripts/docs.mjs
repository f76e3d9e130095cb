// `npm run docs`: the API reference (TypeDoc) of every public entry point, into docs/api/ (not
// committed). Warnings are errors, and an export without documentation is a warning, so npm test
// fails when a public name ships undocumented. Three rules TypeDoc cannot check are checked here on
// its JSON output: the main entry points carry an @example, every optional property of an exported
// *Options interface states its default with @defaultValue, and every @example compiles against
// the built package (run the build first), as the README's snippets do.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { compileSnippets } from './compile-snippets.mjs';
import { root, run, tmp } from './lib.mjs';

/** The functions a newcomer starts from, by module: each must show an @example. */
const NEEDS_EXAMPLE = {
  'rack-webhooks': ['createReceiver', 'verify', 'verifySync', 'sign', 'signSync', 'parseEvent', 'constructEvent', 'createRackState'],
  'rack-webhooks/inbox': ['createInbox'],
  'rack-webhooks/node': ['createNodeHandler'],
  'rack-webhooks/express': ['webhookMiddleware'],
  'rack-webhooks/fastify': ['rackWebhooks'],
  'rack-webhooks/web': ['createFetchHandler'],
  'rack-webhooks/testing': ['createRackEmulator', 'createSignedRequest', 'createSignedRequestSync', 'createTestEvent'],
};

// The entry points TypeDoc documents must be the ones tsup builds (tsup.config.ts `entries`), so a
// new subpath cannot ship without a reference.
const tsupConfig = readFileSync(join(root, 'tsup.config.ts'), 'utf8');
const entriesBlock = /export const entries = \{([^}]*)\}/.exec(tsupConfig);
if (entriesBlock === null) throw new Error('docs: tsup.config.ts no longer declares `export const entries = { ... }`');
const built = [...entriesBlock[1].matchAll(/'([^']+\.ts)'/g)].map((match) => match[1]).sort();
const typedocConfig = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8'));
const documented = [...typedocConfig.entryPoints].sort();
if (built.join() !== documented.join()) {
  throw new Error(`docs: typedoc.json "entryPoints" (${documented.join(', ')}) differ from tsup.config.ts entries (${built.join(', ')})`);
}

// `--check` (npm test): the same checks without writing the HTML, and without TypeDoc's own type
// check of the whole tsconfig program, which is a second `tsc --noEmit` (npm test runs that already).
const check = process.argv.includes('--check');
const jsonPath = join(tmp, 'typedoc.json');
run(join(root, 'node_modules/.bin/typedoc'), [
  ...['--options', 'typedoc.json', '--json', jsonPath],
  ...(check ? ['--skipErrorChecking'] : ['--out', 'docs/api']),
]);

const project = JSON.parse(readFileSync(jsonPath, 'utf8'));
const problems = [];
const hasTag = (comment, tag) => comment?.blockTags?.some((block) => block.tag === tag) ?? false;
const modules = new Map(project.children.map((module) => [module.name, module]));

for (const [moduleName, names] of Object.entries(NEEDS_EXAMPLE)) {
  const module = modules.get(moduleName);
  if (module === undefined) {
    problems.push(`module ${moduleName} is missing from the reference (is its entry point's @module tag right?)`);
    continue;
  }
  for (const name of names) {
    const reflection = module.children?.find((child) => child.name === name);
    const comments = [reflection?.comment, ...(reflection?.signatures ?? []).map((signature) => signature.comment)];
    if (reflection === undefined) problems.push(`${moduleName}: ${name} is not exported`);
    else if (!comments.some((comment) => hasTag(comment, '@example'))) problems.push(`${moduleName}: ${name} has no @example`);
  }
}

const INTERFACE = 256;
const PROPERTY = 1024;
for (const module of project.children) {
  for (const child of module.children ?? []) {
    if (child.kind !== INTERFACE || !child.name.endsWith('Options')) continue;
    for (const property of child.children ?? []) {
      // Inherited properties are checked on the interface that declares them (AdapterOptions, ...).
      if (
        property.kind === PROPERTY &&
        property.flags?.isOptional &&
        property.inheritedFrom === undefined &&
        !hasTag(property.comment, '@defaultValue')
      ) {
        problems.push(`${module.name}: ${child.name}.${property.name} is optional but states no @defaultValue`);
      }
    }
  }
}

if (problems.length > 0) {
  console.error(`docs: ${problems.length} problem(s) in the API reference:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}

/** Every ```ts block of every @example in the reference, wherever it sits (a function, a class, a member). */
function examplesOf(reflection, path, found) {
  const comments = [reflection.comment, ...(reflection.signatures ?? []).map((signature) => signature.comment)];
  for (const comment of comments) {
    for (const tag of comment?.blockTags ?? []) {
      if (tag.tag !== '@example') continue;
      const text = tag.content.map((part) => part.text).join('');
      for (const block of text.matchAll(/```(?:ts|typescript)\n([\s\S]*?)```/g)) {
        const source = reflection.sources?.[0];
        found.push({
          path,
          source: source === undefined ? '' : `${relative(root, join(root, source.fileName))}:${source.line}`,
          code: block[1],
        });
      }
    }
  }
  for (const child of reflection.children ?? []) examplesOf(child, `${path}.${child.name}`, found);
  return found;
}
const examples = project.children.flatMap((module) => examplesOf(module, module.name, []));
compileSnippets(
  'api-examples',
  examples.map((example, index) => ({
    file: `example-${index}.ts`,
    code: example.code,
    locate: (line, column) => `${example.path} @example (declared at ${example.source}), line ${line}:${column} of the example`,
  })),
);

const count = project.children.reduce((sum, module) => sum + (module.children?.length ?? 0), 0);
console.log(
  `docs: ${project.children.length} modules, ${count} documented exports, ${examples.length} @example blocks compiled against the built package${check ? '' : '; written to docs/api/'}`,
);
