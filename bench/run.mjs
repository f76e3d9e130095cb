// npm run bench: builds, then measures every benchmark group against its floor in this process.
import { benchSignature } from './signature.mjs';

console.log(`# rack-webhooks benchmarks\n\nNode ${process.version}, ${process.platform}/${process.arch}, ${new Date().toISOString()}`);
const groups = [benchSignature];
let ok = true;
for (const group of groups) ok = (await group()).ok && ok;
console.log(ok ? '\nAll bars met.' : '\nSome bars were missed (see MISS lines).');
