// npm run bench: builds, then measures every benchmark group against its floor in this process.
import { benchEvents } from './events.mjs';
import { benchSignature } from './signature.mjs';

console.log(`# rack-webhooks benchmarks\n\nNode ${process.version}, ${process.platform}/${process.arch}, ${new Date().toISOString()}`);
const only = process.argv[2];
const groups = [benchSignature, benchEvents].filter((group) => only === undefined || group.name.toLowerCase().includes(only));
let ok = true;
for (const group of groups) ok = (await group()).ok && ok;
console.log(ok ? '\nAll bars met.' : '\nSome bars were missed (see MISS lines).');
