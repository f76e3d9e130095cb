// A small, dependency-free harness: cases of one group are measured round-robin in the same
// process, so machine noise hits the floor and the candidates alike, and results are reported
// as ratios to the floor (median ns/op over many rounds).

const clocks = {
  wall: () => process.hrtime.bigint(),
  // CPU time of this process (user + system), in ns. On a shared machine a batch is often
  // preempted, and the wait lands on whichever case was running: wall-clock medians of two cases
  // doing the same work then differed by up to 2x under load, CPU-time medians by a few percent.
  // It also counts V8's helper threads (concurrent GC, compilers): work the case causes.
  cpu: () => {
    const { user, system } = process.cpuUsage();
    return BigInt(user + system) * 1000n;
  },
};

function timeBatch(fn, iterations, now) {
  const start = now();
  for (let i = 0; i < iterations; i++) fn();
  return Number(now() - start) / iterations;
}

async function timeBatchAsync(fn, iterations, now) {
  const start = now();
  for (let i = 0; i < iterations; i++) await fn();
  return Number(now() - start) / iterations;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * cases: [{ name, fn, async? }], the first is the floor.
 * Each round runs every case for `iterations` calls; the median of the rounds is kept.
 * clock: 'wall' (elapsed time) or 'cpu' (this process's CPU time, immune to preemption).
 */
export async function compare(
  cases,
  { rounds = 25, targetMs = 20, warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 300), clock = 'wall' } = {},
) {
  const now = clocks[clock];
  if (now === undefined) throw new Error(`unknown clock ${clock}`);
  // Warm-up: let the JIT settle on every case before anything is timed.
  for (const c of cases) {
    const until = performance.now() + warmupMs;
    while (performance.now() < until) {
      if (c.async) await timeBatchAsync(c.fn, 100, now);
      else timeBatch(c.fn, 100, now);
    }
  }
  const iterations = new Map();
  for (const c of cases) {
    // Calibrate so one batch takes about targetMs, after a warm-up.
    let n = 10;
    for (;;) {
      const perOp = c.async ? await timeBatchAsync(c.fn, n, now) : timeBatch(c.fn, n, now);
      if (perOp * n > (targetMs * 1e6) / 4 || n > 1e7) {
        iterations.set(c.name, Math.max(10, Math.round((targetMs * 1e6) / perOp)));
        break;
      }
      n *= 4;
    }
  }
  const samples = new Map(cases.map((c) => [c.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const c of cases) {
      const n = iterations.get(c.name);
      samples.get(c.name).push(c.async ? await timeBatchAsync(c.fn, n, now) : timeBatch(c.fn, n, now));
    }
  }
  const floor = median(samples.get(cases[0].name));
  return cases.map((c) => {
    const ns = median(samples.get(c.name));
    return { name: c.name, nsPerOp: ns, opsPerSec: 1e9 / ns, ratio: ns / floor };
  });
}

export function printTable(title, rows, extra = {}) {
  console.log(`\n### ${title}\n`);
  console.log(
    '| case | ns/op | ops/s | ratio to floor |' +
      Object.keys(extra)
        .map((k) => ` ${k} |`)
        .join(''),
  );
  console.log(
    '|---|---:|---:|---:|' +
      Object.keys(extra)
        .map(() => '---:|')
        .join(''),
  );
  for (const row of rows) {
    console.log(
      `| ${row.name} | ${row.nsPerOp.toFixed(0)} | ${Math.round(row.opsPerSec).toLocaleString('en-US')} | ${row.ratio.toFixed(2)}x |` +
        Object.values(extra)
          .map((f) => ` ${f(row)} |`)
          .join(''),
    );
  }
}

/** Bars are reported, not asserted in tests: a benchmark that fails a build on a noisy machine teaches nobody anything. */
export function checkBar(label, value, bar, comparison = '<=') {
  const ok = comparison === '<=' ? value <= bar : value >= bar;
  console.log(`${ok ? 'PASS' : 'MISS'}  ${label}: ${value.toFixed(2)} (bar ${comparison} ${bar})`);
  return ok;
}
