// npm run bench:http: requests per second over HTTP, per framework (Express 5, Fastify 5), of
//   - the bare route: the framework answering 200 after reading the body (context, no bar);
//   - the control: the same bare route plus one createHmac and timingSafeEqual, the least any
//     verifying receiver does (bench/servers/hmac-check.mjs);
//   - the adapter: the SDK's middleware or plugin on a receiver with the memory dedup store and a
//     no-op handler (bench/servers/adapter-*.mjs). Bar: at least 0.9x the control;
//   - the required-work control: the HMAC control plus JSON.parse, the body's SHA-256 and the two
//     claims in a MemoryDedupStore, inline (BARE_REQUIRED_WORK=1): the floor under any adapter
//     with replay protection, printed beside the bar as the ratio the runtime allows;
//   - the example (examples/<framework>.mjs), which prints a line per event: reported, no bar.
// Every request is a distinct, correctly signed delivery (a repeat would be a cheap `duplicate`).
// Servers run in their own processes; autocannon drives them from this one, on the same 2 cores,
// where other work comes and goes: the control and the adapter are measured ROUNDS times each,
// alternating, and the best run of each is kept. On Linux each run also reads the server's own CPU
// time (/proc/<pid>/stat), and the CPU per request (median of the runs) gives a second, steadier
// ratio: it does not depend on how much of the machine the server got during its run.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { signSync } from '../dist/index.js';

const DURATION = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
const WARM_UP_SECONDS = 2;
const ROUNDS = Number(process.env.BENCH_HTTP_ROUNDS ?? 3);
const CONNECTIONS = 32;
const BAR = 0.9;
const secret = randomBytes(32).toString('hex');

/**
 * Distinct signed deliveries: the on-call fixture with a unique service per request (a fresh replay
 * key each). `reserve` signs ahead, between runs, as many as the next run should need at the rate
 * reached so far; `take` never repeats one: past the reserve it signs on the fly (counted).
 */
class Deliveries {
  #base = JSON.parse(readFileSync(new URL('../test/fixtures/events/app.scale-override.toggled.json', import.meta.url), 'utf8'));
  #made = 0;
  #ready = [];
  signedOnTheFly = 0;

  #make() {
    const body = JSON.stringify({ ...this.#base, data: { ...this.#base.data, service: `svc-${this.#made++}` } });
    return { body, headers: { 'content-type': 'application/json', 'service-signature': signSync(body, { secrets: secret }) } };
  }

  reserve(count) {
    while (this.#ready.length < count) this.#ready.push(this.#make());
  }

  take() {
    const delivery = this.#ready.pop();
    if (delivery !== undefined) return delivery;
    this.signedOnTheFly++;
    return this.#make();
  }

  /** Drops what is left: signed with an older `t`, and memory the next server should not share. */
  clear() {
    this.#ready = [];
  }
}

/** User + system CPU seconds of a process so far, or undefined where /proc is not there. */
const TICKS_PER_SECOND = 100; // USER_HZ: the unit of /proc/<pid>/stat on Linux
function cpuSeconds(pid) {
  const path = `/proc/${pid}/stat`;
  if (!existsSync(path)) return undefined;
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // the name may hold spaces
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND; // utime, stime
}

function start(file, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], {
      env: { ...process.env, ...env, PORT: '0', RACK_WEBHOOK_SECRETS: secret },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) {
        child.stdout.removeAllListeners('data');
        child.stdout.resume(); // keep draining: the examples print a line per handled event
        resolve({
          pid: child.pid,
          url: match[1],
          stop: () =>
            new Promise((done) => {
              child.once('exit', done);
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code} before listening`)));
  });
}

const deliveries = new Deliveries();
let fastestRate = 20_000; // requests/s: a first guess, raised by every run

async function drive(url, seconds) {
  deliveries.reserve(Math.ceil(fastestRate * seconds * 1.2));
  const result = await autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ setupRequest: (request) => ({ ...request, ...deliveries.take() }) }],
  });
  fastestRate = Math.max(fastestRate, result.requests.total / seconds);
  return { rps: result.requests.average, non2xx: result.non2xx + result.errors + result.timeouts, total: result.requests.total };
}

async function measure(file, env = {}) {
  const server = await start(new URL(file, import.meta.url).pathname, env);
  try {
    await drive(server.url, WARM_UP_SECONDS);
    const cpuBefore = cpuSeconds(server.pid);
    const run = await drive(server.url, DURATION);
    const cpuAfter = cpuSeconds(server.pid);
    run.cpuMicros = cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) * 1e6) / run.total;
    return run;
  } finally {
    await server.stop();
    deliveries.clear();
  }
}

const fmt = (rps) => Math.round(rps).toLocaleString('en-US');
const cpu = (run) => (run.cpuMicros === undefined ? 'n/a' : `${run.cpuMicros.toFixed(1)} µs`);
const best = (runs) => Math.max(...runs.map((run) => run.rps));
const medianCpu = (runs) => {
  const values = runs
    .map((run) => run.cpuMicros)
    .filter((value) => value !== undefined)
    .sort((a, b) => a - b);
  return values.length === 0 ? undefined : values[Math.floor(values.length / 2)];
};
const frameworks = [
  ['Express 5', 'express'],
  ['Fastify 5', 'fastify'],
];
const summary = [];
let ok = true;

console.log(
  `\n### HTTP: requests/s (server CPU per request), ${CONNECTIONS} connections, ${WARM_UP_SECONDS} s warm-up + ${DURATION} s per run\n`,
);
console.log('| framework | run | HMAC-only control | required-work control | adapter + no-op handler |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, framework] of frameworks) {
  const bare = await measure(`./servers/bare-${framework}.mjs`);
  const control = [];
  const requiredWork = [];
  const adapter = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating order: a machine that slows down over the run charges every side alike.
    for (const kind of round % 2 === 0 ? ['control', 'required', 'adapter'] : ['adapter', 'required', 'control']) {
      if (kind === 'control') control.push(await measure(`./servers/bare-${framework}.mjs`, { BARE_VERIFY_HMAC: '1' }));
      else if (kind === 'required')
        requiredWork.push(await measure(`./servers/bare-${framework}.mjs`, { BARE_VERIFY_HMAC: '1', BARE_REQUIRED_WORK: '1' }));
      else adapter.push(await measure(`./servers/adapter-${framework}.mjs`));
    }
    console.log(
      `| ${name} | ${round + 1} | ${fmt(control[round].rps)} (${cpu(control[round])}) | ${fmt(requiredWork[round].rps)} (${cpu(requiredWork[round])}) | ${fmt(adapter[round].rps)} (${cpu(adapter[round])}) |`,
    );
  }
  const example = await measure(`../examples/${framework}.mjs`);
  const non2xx = [bare, ...control, ...requiredWork, ...adapter, example].reduce((sum, run) => sum + run.non2xx, 0);
  summary.push({ name, bare, control, requiredWork, adapter, example, non2xx });
}

console.log(
  `\n| framework | bare route (reads body) | HMAC-only control (best) | adapter + no-op handler (best) | adapter / control (bar >= ${BAR}) | by server CPU per request (median) | non-2xx |`,
);
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const row of summary) {
  const ratio = best(row.adapter) / best(row.control);
  const [controlCpu, adapterCpu] = [medianCpu(row.control), medianCpu(row.adapter)];
  row.ratio = ratio;
  // The bar is judged on server CPU per request where it can be read (Linux): requests/s on a
  // shared 2-core machine depend on how much of it the server got during its run.
  row.judged = controlCpu === undefined || adapterCpu === undefined ? ratio : controlCpu / adapterCpu;
  row.cpuText =
    controlCpu === undefined || adapterCpu === undefined
      ? 'n/a'
      : `${(controlCpu / adapterCpu).toFixed(2)} (${controlCpu.toFixed(1)} / ${adapterCpu.toFixed(1)} µs)`;
  console.log(
    `| ${row.name} | ${fmt(row.bare.rps)} | ${fmt(best(row.control))} | ${fmt(best(row.adapter))} | ${ratio.toFixed(2)} | ${row.cpuText} | ${row.non2xx} |`,
  );
}
console.log(
  `\n| framework | required-work control (best) | required work / HMAC-only control: the most an adapter with replay protection can reach | adapter / required-work control | the same by server CPU per request (median) |`,
);
console.log('|---|---:|---:|---:|---:|');
for (const row of summary) {
  const floor = best(row.requiredWork) / best(row.control);
  const [requiredCpu, adapterCpu, controlCpu] = [medianCpu(row.requiredWork), medianCpu(row.adapter), medianCpu(row.control)];
  const cpuText =
    requiredCpu === undefined || adapterCpu === undefined || controlCpu === undefined
      ? 'n/a'
      : `${(requiredCpu / adapterCpu).toFixed(2)} (${requiredCpu.toFixed(1)} / ${adapterCpu.toFixed(1)} µs; required work / control ${(controlCpu / requiredCpu).toFixed(2)})`;
  row.floorText = `required work / HMAC-only control ${floor.toFixed(2)}, adapter / required work ${(best(row.adapter) / best(row.requiredWork)).toFixed(2)}`;
  console.log(
    `| ${row.name} | ${fmt(best(row.requiredWork))} | ${floor.toFixed(2)} | ${(best(row.adapter) / best(row.requiredWork)).toFixed(2)} | ${cpuText} |`,
  );
}
for (const row of summary) {
  const pass = row.judged >= BAR && row.non2xx === 0;
  ok = ok && pass;
  console.log(
    `${pass ? 'PASS' : 'MISS'}  ${row.name} adapter / HMAC-only control, by server CPU per request: ${row.cpuText} (bar >= ${BAR}); by requests/s: ${row.ratio.toFixed(2)}; floor: ${row.floorText}${row.non2xx === 0 ? '' : `; ${row.non2xx} non-2xx answers`}`,
  );
}

console.log('\n### The examples (verify, parse, dedup, and handlers that print a line per event): no bar\n');
console.log('| framework | example | example / HMAC-only control (best) | server CPU per request |');
console.log('|---|---:|---:|---:|');
for (const row of summary)
  console.log(`| ${row.name} | ${fmt(row.example.rps)} | ${(row.example.rps / best(row.control)).toFixed(2)} | ${cpu(row.example)} |`);
console.log(
  `\n${deliveries.signedOnTheFly === 0 ? 'No' : deliveries.signedOnTheFly.toLocaleString('en-US')} deliveries signed on the fly (past the pool sized from the rate reached).`,
);
process.exitCode = ok ? 0 : 3;
