// Gates the published shape: publint --strict and attw --pack on the packed tarball, then the
// emitted .d.ts compiled by a consumer on the oldest supported TypeScript 5.x and on the newest major.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { installedConsumer, pack, root, run, startLanes, tmp } from './lib.mjs';

// The optional peers' ranges are the versions the test suite runs: each caret range must hold the
// version installed for the tests (express 4 through its `express4` alias), and each tested
// version must fall in the range, so that bumping a devDependency out of range fails here.
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const TESTED_AS = { express: ['express', 'express4'] };
const parse = (version) => version.split('-')[0].split('.').map(Number);
const inCaret = (version, floor) => {
  const [v, f] = [parse(version), parse(floor)];
  const major = f[0] === 0 ? 2 : 1; // ^0.5.16 stays below 0.6.0
  for (let i = 0; i < major; i++) if (v[i] !== f[i]) return false;
  for (let i = major; i < 3; i++) if (v[i] !== f[i]) return v[i] > f[i];
  return true;
};
for (const [name, range] of Object.entries(manifest.peerDependencies)) {
  if (manifest.peerDependenciesMeta?.[name]?.optional !== true) throw new Error(`peer ${name} is not optional`);
  const carets = range.split('||').map((part) => part.trim());
  if (!carets.every((part) => /^\^\d+\.\d+\.\d+$/.test(part))) throw new Error(`peer ${name}: "${range}" is not a set of caret ranges`);
  const tested = (TESTED_AS[name] ?? [name]).map(
    (dir) => JSON.parse(readFileSync(join(root, 'node_modules', dir, 'package.json'), 'utf8')).version,
  );
  for (const version of tested) {
    if (!carets.some((caret) => inCaret(version, caret.slice(1))))
      throw new Error(`peer ${name}: the tests run ${version}, outside "${range}"`);
  }
  for (const caret of carets) {
    if (!tested.some((version) => inCaret(version, caret.slice(1)))) throw new Error(`peer ${name}: no test runs a version in ${caret}`);
  }
  console.log(`package: optional peer ${name} "${range}", tested with ${tested.join(' and ')}`);
}

const tarball = pack();
console.log(`package: checking ${tarball}`);
run('npx', ['publint', '--strict', tarball]);
run('npx', ['attw', '--pack', '.', '--profile', 'strict']);

// What an adapter user has installed next to the package (versions as in our own devDependencies).
const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies;
// The inbox's optional peers too, so consumer-inbox.ts checks context.transaction against each client's real types.
const consumer = installedConsumer(
  'consumer-types',
  tarball,
  ['@types/node', 'express', '@types/express', 'fastify', 'pg', '@types/pg', 'postgres', '@electric-sql/pglite', '@types/emscripten'].map(
    (name) => `${name}@${own[name]}`,
  ),
);
for (const file of ['consumer.ts', 'consumer-adapters.ts', 'consumer-inbox.ts'])
  copyFileSync(join(root, 'test/consumer', file), join(consumer, file));
copyFileSync(join(root, 'test/consumer/consumer.cts'), join(consumer, 'consumer.cts'));
// The oldest 5.x and the newest major are installed on the side (pinned here), so their `tsc`
// binaries never shadow the project's own compiler in node_modules/.bin.
function sideCompiler(version) {
  const dir = join(tmp, `typescript-${version}`);
  if (!existsSync(join(dir, 'node_modules/typescript/bin/tsc'))) {
    mkdirSync(dir, { recursive: true });
    run('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--silent', '--no-save', `typescript@${version}`]);
  }
  return join(dir, 'node_modules/typescript/bin/tsc');
}
const compilers = [
  ['TypeScript 5.0.4', sideCompiler('5.0.4'), { adapters: false }],
  ['TypeScript 5.9 (the project compiler)', join(root, 'node_modules/typescript/bin/tsc'), { adapters: true }],
  ['TypeScript 7.0.2', sideCompiler('7.0.2'), { adapters: true }],
];
const settings = [
  { dir: 'esm-nodenext', module: 'NodeNext', moduleResolution: 'NodeNext', type: 'module' },
  { dir: 'cjs-nodenext', module: 'NodeNext', moduleResolution: 'NodeNext', type: 'commonjs' },
  { dir: 'esm-bundler', module: 'ESNext', moduleResolution: 'Bundler', type: 'module' },
];
// Each setting in a folder of its own (its package.json says module or commonjs; the packages
// resolve from the consumer's node_modules above), and one tsconfig per compiler, so that the nine
// compiles run side by side, one a core: they are most of this step's time.
const compiles = [];
for (const setting of settings) {
  const dir = join(consumer, setting.dir);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${setting.dir}`, private: true, type: setting.type }));
  for (const file of ['consumer.ts', 'consumer-adapters.ts', 'consumer-inbox.ts', 'consumer.cts'])
    copyFileSync(join(consumer, file), join(dir, file));
  for (const [index, [label, tsc, { adapters }]] of compilers.entries()) {
    const files =
      setting.type === 'commonjs'
        ? ['consumer.cts']
        : adapters
          ? ['consumer.ts', 'consumer-adapters.ts', 'consumer-inbox.ts']
          : ['consumer.ts'];
    const tsconfig = join(dir, `tsconfig-${index}.json`);
    writeFileSync(
      tsconfig,
      JSON.stringify({
        compilerOptions: {
          noEmit: true,
          strict: true,
          target: 'ES2022',
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          // emscripten: PGlite's own .d.ts use its globals (a PGlite user with skipLibCheck off needs it too).
          types: adapters ? ['node', 'emscripten'] : ['node'],
          module: setting.module,
          moduleResolution: setting.moduleResolution,
          skipLibCheck: false,
        },
        files,
      }),
    );
    compiles.push({
      label: `${label}, module ${setting.module}/${setting.moduleResolution}, ${setting.type}`,
      commands: [['node', [tsc, '-p', tsconfig]]],
    });
  }
}
let failed = 0;
for (const result of await startLanes(compiles)) {
  console.log(`package: ${result.label} (${result.seconds.toFixed(1)} s)${result.status === 0 ? '' : `: FAILED, ${result.status}`}`);
  if (result.output.length > 0) process.stdout.write(result.output);
  if (result.status !== 0) failed++;
}
if (failed > 0) throw new Error(`${failed} of ${compiles.length} consumer type checks failed (their output is above)`);
console.log('package: publint, attw and consumer type checks passed');
