// `npm run docs:figures`: the sizes the documentation quotes, measured from the BUILT package (run
// the build first) and written into README.md and docs/*.md, so that no page quotes a stale figure.
// `--check` (a step of npm test) writes nothing and fails when a page differs from what it would write.
//
// Two forms in the pages:
//   <!-- figures:start … -->…<!-- figures:end -->   the size table (docs/operating.md), rewritten whole;
//   <!-- figure:NAME -->…<!-- /figure -->             one figure inside a sentence (FIGURES below).
// And the console's start-up line quoted in a shell block ("page 17.1 KB gzip"), where a comment
// would show: it is rewritten by its pattern.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { KB, measureBundles } from './bundle-sizes.mjs';
import { root } from './lib.mjs';

const kB = (bytes) => `${(bytes / KB).toFixed(1)} kB`;
/** The console prints its page in KB of 1,024 bytes (src/cli/commands/console.ts); the docs quote it so. */
const consoleKB = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

/** The page as the console serves it (src/console/server/assets.ts): the HTML shell and the two built files, gzip level 9. */
function consolePageGzip() {
  const source = readFileSync(join(root, 'src/console/server/assets.ts'), 'utf8');
  const shell = /export const PAGE_HTML = `([^`]*)`;/.exec(source);
  if (shell === null) throw new Error('src/console/server/assets.ts: PAGE_HTML not found (a template literal without backticks)');
  const files = [Buffer.from(shell[1]), ...['console.js', 'console.css'].map((name) => readFileSync(join(root, 'dist/console', name)))];
  return files.reduce((total, body) => total + gzipSync(body, { level: 9 }).length, 0);
}

export async function measureFigures() {
  const { results } = await measureBundles();
  const [receiver, verify, validating] = results;
  const page = consolePageGzip();
  return {
    table: [
      '| what a user ships (esbuild, minified ESM, from `dist/`) | minified | gzip | `npm test` fails over |',
      '|---|---|---|---|',
      ...[receiver, verify, validating].map(
        (b) => `| ${b.docLabel} | ${kB(b.bytes)} | ${kB(b.gzip)} | ${b.limit === undefined ? '-' : kB(b.limit)} |`,
      ),
      `| the console's page (the HTML shell, \`console.js\` and \`console.css\`, as sent) | - | ${consoleKB(page)} | - |`,
    ].join('\n'),
    inline: {
      'receiver-bundle': kB(receiver.bytes),
      'verify-bundle': kB(verify.bytes),
      'validating-bundle': `${Math.round(validating.bytes / KB)} kB`,
      // What the validators add to a receiver: the validating bundle less the receiver's.
      'validators-share': `${Math.round((validating.bytes - receiver.bytes) / KB)} kB`,
      'console-page-gzip': consoleKB(page),
    },
  };
}

const BLOCK = /(<!-- figures:start[^>]*-->\n)[\s\S]*?(<!-- figures:end -->)/g;
const INLINE = /(<!-- figure:([a-z-]+) -->)[^<]*(<!-- \/figure -->)/g;
const CONSOLE_LINE = /(the token in that URL is the key to the page; page )\d+\.\d KB( gzip)/g;

/** The page with every figure in it current; throws on a figure name it does not know. */
export function withFigures(markdown, figures, file) {
  return markdown
    .replace(BLOCK, (_, start, end) => `${start}${figures.table}\n${end}`)
    .replace(INLINE, (_, open, name, close) => {
      if (!(name in figures.inline))
        throw new Error(`${file}: unknown figure "${name}" (known: ${Object.keys(figures.inline).join(', ')})`);
      return `${open}${figures.inline[name]}${close}`;
    })
    .replace(CONSOLE_LINE, (_, before, after) => `${before}${figures.inline['console-page-gzip']}${after}`);
}

const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const check = process.argv.includes('--check');
const figures = await measureFigures();
const stale = [];
let blocks = 0;
for (const file of pages) {
  const before = readFileSync(join(root, file), 'utf8');
  blocks += [...before.matchAll(BLOCK)].length;
  const after = withFigures(before, figures, file);
  if (after === before) continue;
  stale.push(file);
  if (!check) writeFileSync(join(root, file), after);
}
if (blocks === 0) throw new Error('no page holds the <!-- figures:start --> block (docs/operating.md should)');
if (check && stale.length > 0) {
  console.error(
    `docs:figures: ${stale.join(', ')} quote${stale.length === 1 ? 's' : ''} stale sizes: run npm run build && npm run docs:figures`,
  );
  process.exit(1);
}
console.log(
  `docs:figures: ${check ? 'current' : stale.length === 0 ? 'nothing to change' : `updated ${stale.join(', ')}`} (${Object.entries(
    figures.inline,
  )
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')})`,
);
