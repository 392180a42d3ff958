// `npm run bench -- --compare URL`: the same scenarios against this app and another Queen-compatible
// broker (the reference C++ one, ../shared/reference/queen-cpp), one loaded at a time, alternated
// for --rounds rounds; per scenario the medians of the rounds, the ratio, and the CPU per message of
// each broker's server process(es) and of its PostgreSQL backends, from /proc.
//
// The scenarios work against any broker of the contract and the reference's known quirks: an empty
// pop may answer 200 with no messages, an ack of an empty list may never answer (never sent), and
// every request has a client timeout.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const REQUEST_TIMEOUT_MS = 35_000;
const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

// ---------------------------------------------------------------------------------------------
// /proc

/** utime + stime of one process (all its threads), in seconds; undefined when it is gone. */
function cpuOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS; // utime, stime (fields 14 and 15)
  } catch {
    return undefined;
  }
}

function parentOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

const allPids = () =>
  fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);

/** `pid` and its descendants. */
function tree(pid) {
  const pids = allPids();
  const found = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of pids) {
      if (!found.has(p) && found.has(parentOf(p))) {
        found.add(p);
        grew = true;
      }
    }
  }
  return [...found];
}

/** The PostgreSQL backends connected to database `db` (titled `postgres: [cluster: ]user db host ...`). */
function backendsOf(db) {
  const out = [];
  for (const p of allPids()) {
    try {
      const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (/^postgres: (?:\S+: )?\S+ (\S+) /.exec(cmd)?.[1] === db) out.push(p);
    } catch {
      // gone
    }
  }
  return out;
}

/** CPU seconds of a set of processes, by pid. */
const cpuByPid = (pids) => new Map(pids.map((p) => [p, cpuOf(p) ?? 0]));

/** A CPU meter over the server's process tree and the backends of its database. */
function cpuMeter(serverPid, db) {
  const take = () => ({ server: cpuByPid(tree(serverPid)), pg: db ? cpuByPid(backendsOf(db)) : new Map() });
  const start = take();
  return () => {
    const end = take();
    // a process that appeared meanwhile counts from 0; one that ended meanwhile is lost (pools keep theirs)
    const delta = (a, b) => [...b].reduce((sum, [p, v]) => sum + v - (a.get(p) ?? 0), 0);
    return { server: delta(start.server, end.server), pg: delta(start.pg, end.pg) };
  };
}

/** VmRSS and VmHWM (peak) of a process, in MB. */
export function rssOf(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return { rss: Number.NaN, peak: Number.NaN };
  }
}

/** The pid listening on `port` (ss -ltnp), for a broker whose pid is not given otherwise. */
export function pidOnPort(port) {
  try {
    const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' });
    return Number(/pid=(\d+)/.exec(out)?.[1]) || undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// a client of one broker

function client(base) {
  const post = async (p, body) => {
    const res = await fetch(base + p, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${p} answered ${res.status}: ${text.slice(0, 200)}`);
    return text ? JSON.parse(text) : undefined;
  };
  /** The popped messages; [] for an empty pop (a 204, or the reference's 200 with success:false). */
  const pop = async (queue, query) => {
    const res = await fetch(`${base}/api/v1/pop/queue/${encodeURIComponent(queue)}?${query}`, {
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    if (res.status === 204) return [];
    if (res.status !== 200) throw new Error(`pop answered ${res.status}: ${text.slice(0, 200)}`);
    return JSON.parse(text).messages ?? [];
  };
  const ack = (group, messages) =>
    messages.length === 0
      ? undefined // the reference never answers an empty ack
      : post('/api/v1/ack/batch', {
          ...(group ? { consumerGroup: group } : {}),
          acknowledgments: messages.map((m) => ({
            transactionId: m.transactionId,
            partitionId: m.partitionId,
            leaseId: m.leaseId || null,
          })),
        });
  return { post, pop, ack };
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : Number.NaN;
};

/**
 * Runs `loops` (async functions of a worker's index, each returning when `until()` is false) and
 * waits for them, but not more than 5 s past the deadline (a long poll a broker holds on to).
 */
async function runLoops(deadline, loops) {
  const all = Promise.all(loops);
  let timer;
  await Promise.race([all, new Promise((r) => (timer = setTimeout(r, deadline - Date.now() + 5000)))]);
  clearTimeout(timer);
  all.catch(() => {});
}

/** Starts the CPU meter now and reads it at the deadline: what runs past it (a long poll's tail) is not counted. */
function meterUntil(measure, deadline) {
  const stop = measure();
  let cpu;
  const timer = setTimeout(() => (cpu = stop()), Math.max(0, deadline - Date.now()));
  return () => {
    clearTimeout(timer);
    cpu ??= stop();
    return cpu;
  };
}

/** One step of a loop, its failures counted (and paced) instead of ending the scenario. */
async function attempt(errors, fn) {
  try {
    return await fn();
  } catch (err) {
    errors.count++;
    errors.last = err?.message ?? String(err);
    await new Promise((r) => setTimeout(r, 100));
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// the scenarios: each `run({ api, seconds, tag, measure })` returns its rows; `measure()` starts the
// CPU meter and returns its stop function, so that set-up (filling a backlog) is not counted.

const payload = (n) => ({ seq: n, body: 'x'.repeat(64) });

/** `workers` loops pushing `size` items to `partitions(n)` for `seconds`: messages pushed. */
function pushLoops({ api, queue, workers, size, partitionOf, deadline, counter, errors }) {
  return Array.from({ length: workers }, async () => {
    while (Date.now() < deadline) {
      const n = counter.calls++;
      const items = Array.from({ length: size }, (_, i) => ({
        queue,
        partition: `p${partitionOf(n, i)}`,
        payload: payload(n * size + i),
      }));
      const done = await attempt(errors, () => api.post('/api/v1/push', { items }));
      if (done && Date.now() <= deadline) counter.pushed += size;
    }
  });
}

/** A push-only scenario. */
const pushScenario =
  (workers, size, partitionOf, partitions) =>
  async ({ api, seconds, tag, measure }) => {
    const queue = `cmp.push.${tag}`;
    if (partitions) await fill(api, queue, partitions, partitions);
    const counter = { calls: 0, pushed: 0 };
    const errors = { count: 0 };
    const deadline = Date.now() + seconds * 1000;
    const stop = meterUntil(measure, deadline);
    await runLoops(deadline, pushLoops({ api, queue, workers, size, partitionOf, deadline, counter, errors }));
    return [{ label: '', rate: counter.pushed / seconds, messages: counter.pushed, cpu: stop(), errors }];
  };

/** Pushes `total` messages over `partitions`, 1,000 items a call (set-up, not measured). */
async function fill(api, queue, partitions, total) {
  for (let sent = 0; sent < total; sent += 1000) {
    const items = Array.from({ length: Math.min(1000, total - sent) }, (_, i) => ({
      queue,
      partition: `p${(sent + i) % partitions}`,
      payload: payload(sent + i),
    }));
    await api.post('/api/v1/push', { items });
  }
}

/** Pop + ack from a backlog, 4 consumers, batch 100. */
const popAckScenario =
  (partitions) =>
  async ({ api, seconds, tag, measure }) => {
    const queue = `cmp.popack.${tag}`;
    await fill(api, queue, partitions, Math.min(200_000, 20_000 * seconds));
    const errors = { count: 0 };
    let consumed = 0;
    let lastUseful = 0;
    const started = performance.now();
    const deadline = Date.now() + seconds * 1000;
    const stop = meterUntil(measure, deadline);
    await runLoops(
      deadline,
      Array.from({ length: 4 }, async () => {
        while (Date.now() < deadline) {
          const messages = await attempt(errors, () =>
            api.pop(queue, 'consumerGroup=cmp&batch=100&wait=true&timeout=2000'),
          );
          if (!messages?.length) continue;
          if ((await attempt(errors, () => api.ack('cmp', messages))) !== undefined && Date.now() <= deadline) {
            consumed += messages.length;
            lastUseful = performance.now();
          }
        }
      }),
    );
    const elapsed = ((lastUseful || performance.now()) - started) / 1000;
    return [{ label: '', rate: consumed / elapsed, messages: consumed, cpu: stop(), errors }];
  };

/** 5,000 partitions × 1 message drained by 8 consumers, batch=10&partitions=1, pop + ack: rate and pop p99. */
async function wideScenario({ api, seconds, tag, measure }) {
  const queue = `cmp.wide.${tag}`;
  const total = 5000;
  await fill(api, queue, total, total);
  const errors = { count: 0 };
  const latencies = [];
  let consumed = 0;
  const stop = measure();
  const started = performance.now();
  const deadline = Date.now() + Math.max(seconds, 60) * 3000;
  await runLoops(
    deadline,
    Array.from({ length: 8 }, async () => {
      while (consumed < total && Date.now() < deadline) {
        const t = performance.now();
        const messages = await attempt(errors, () => api.pop(queue, 'consumerGroup=cmp&batch=10&partitions=1'));
        latencies.push(performance.now() - t);
        if (!messages?.length) continue;
        if ((await attempt(errors, () => api.ack('cmp', messages))) !== undefined) consumed += messages.length;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return [
    {
      label: '',
      rate: consumed / elapsed,
      messages: consumed,
      cpu: stop(),
      errors,
      note: { popP99: percentile(latencies, 0.99) },
    },
  ];
}

/**
 * Producers and consumers at once: `producers` connections pushing `size` items a call, each call to
 * one partition of `partitions` in turn; `groups` consumer groups of `perGroup` consumers each
 * (no group: queue mode), long polls of `batch`, auto-acked or acked. Rows: pushes, deliveries.
 */
const mixedScenario =
  ({ producers, size, partitions, groups, perGroup, batch, autoAck }) =>
  async ({ api, seconds, tag, measure }) => {
    const queue = `cmp.mixed.${tag}`;
    await fill(api, queue, partitions, partitions); // the partitions exist before the timed window
    const counter = { calls: 0, pushed: 0 };
    const errors = { count: 0 };
    let delivered = 0;
    const deadline = Date.now() + seconds * 1000;
    const stop = meterUntil(measure, deadline);
    const consumers = [];
    for (const group of groups) {
      const query = `${group ? `consumerGroup=${group}&` : ''}batch=${batch}&wait=true&timeout=2000${autoAck ? '&autoAck=true' : ''}`;
      for (let c = 0; c < perGroup; c++) {
        consumers.push(
          (async () => {
            while (Date.now() < deadline) {
              const messages = await attempt(errors, () => api.pop(queue, query));
              if (!messages?.length) continue;
              if (!autoAck && (await attempt(errors, () => api.ack(group, messages))) === undefined) continue;
              if (Date.now() <= deadline) delivered += messages.length;
            }
          })(),
        );
      }
    }
    const pushes = pushLoops({
      api,
      queue,
      workers: producers,
      size,
      partitionOf: (n) => n % partitions,
      deadline,
      counter,
      errors,
    });
    await runLoops(deadline, [...pushes, ...consumers]);
    return [
      { label: 'push', rate: counter.pushed / seconds, messages: counter.pushed, cpu: stop(), errors },
      { label: 'deliveries', rate: delivered / seconds, messages: delivered, unit: 'deliveries/s' },
    ];
  };

/** The scenarios of the comparison, in the order they run. */
export const compareScenarios = [
  {
    name: 'push-8x100',
    what: 'push, batches of 100 over 8 partitions, 8 connections',
    run: pushScenario(8, 100, (_n, i) => i % 8),
  },
  { name: 'popack-8p', what: 'pop + ack, batch 100, 4 consumers, 8 partitions', run: popAckScenario(8) },
  { name: 'popack-1p', what: 'pop + ack, batch 100, 4 consumers, 1 partition', run: popAckScenario(1) },
  {
    name: 'push-1x2000p',
    what: 'batch-1 pushes over 2,000 partitions (created before), 8 connections',
    run: pushScenario(8, 1, (n) => n % 2000, 2000),
  },
  {
    name: 'wide-5k-x1-p1',
    what: '5,000 partitions × 1, 8 consumers, batch=10&partitions=1, pop + ack',
    run: wideScenario,
  },
  {
    name: 'bp-10',
    what: "Queen's bench shape: 1,001 partitions, pushes of 10 over 50 connections, 50 autoAck long-poll consumers",
    run: mixedScenario({
      producers: 50,
      size: 10,
      partitions: 1001,
      groups: [undefined],
      perGroup: 50,
      batch: 100,
      autoAck: true,
    }),
  },
  {
    name: 'part-1',
    what: 'the same with pushes of 1',
    run: mixedScenario({
      producers: 50,
      size: 1,
      partitions: 1001,
      groups: [undefined],
      perGroup: 50,
      batch: 100,
      autoAck: true,
    }),
  },
  {
    name: 'fanout-5x2',
    what: 'fan-out: 5 groups × 2 consumers (pop batch 100 + ack), 16 push connections, pushes of 10 over 100 partitions',
    run: mixedScenario({
      producers: 16,
      size: 10,
      partitions: 100,
      groups: ['g1', 'g2', 'g3', 'g4', 'g5'],
      perGroup: 2,
      batch: 100,
      autoAck: false,
    }),
  },
];

export const compareScenarioNames = compareScenarios.map((s) => s.name);

/**
 * Runs the named scenarios once against one running broker: `pid` its server process, `db` the
 * database its backends use (for their CPU). Each row: rate, CPU µs per message of the server and
 * of PostgreSQL. Prints each as it finishes.
 */
export async function runScenariosOnce({ base, pid, db, seconds, tag, names, label = '' }) {
  const api = client(base);
  const rows = [];
  for (const scenario of compareScenarios) {
    if (!names.includes(scenario.name)) continue;
    const got = await scenario.run({
      api,
      seconds,
      tag: `${scenario.name}.${tag}`,
      measure: () => (pid ? cpuMeter(pid, db) : () => undefined),
    });
    for (const r of got) {
      const row = {
        scenario: scenario.name,
        label: r.label,
        rate: r.rate,
        unit: r.unit ?? 'msg/s',
        serverUs: r.cpu ? (r.cpu.server / r.messages) * 1e6 : undefined,
        pgUs: r.cpu && db ? (r.cpu.pg / r.messages) * 1e6 : undefined,
        popP99: r.note?.popP99,
        errors: r.errors?.count ?? 0,
      };
      rows.push(row);
      console.log(
        `${label}${`${scenario.name}${r.label ? ` ${r.label}` : ''}`.padEnd(24)} ${fmt(row.rate).padStart(8)} ${row.unit.padEnd(13)}` +
          `${row.serverUs !== undefined ? `  server ${fmt(row.serverUs, 1)} µs/msg` : ''}${row.pgUs !== undefined ? `  PostgreSQL ${fmt(row.pgUs, 1)} µs/msg` : ''}` +
          `${row.popP99 !== undefined ? `  pop p99 ${fmt(row.popP99, 1)} ms` : ''}${row.errors ? `  ${row.errors} failed requests (${r.errors.last})` : ''}`,
      );
    }
  }
  return rows;
}

const fmt = (n, digits = 0) =>
  n === undefined || Number.isNaN(n)
    ? '—'
    : n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });

const median = (values) => {
  const v = values.filter((x) => x !== undefined && !Number.isNaN(x)).sort((a, b) => a - b);
  if (!v.length) return undefined;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};

/** Runs a shell command to its end, its output on stderr; rejects when it fails. */
function sh(command, env) {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { stdio: ['ignore', 2, 2], env: { ...process.env, ...env } });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`\`${command}\` exited ${code}`))));
  });
}

export async function waitHealthy(base, seconds = 60) {
  for (let i = 0; i < seconds * 10; i++) {
    try {
      if ((await fetch(`${base}/health`, { signal: AbortSignal.timeout(2000) })).ok) return;
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${base} not healthy after ${seconds} s`);
}

/**
 * The comparison: `rounds` rounds, each running every scenario against this app (`ours`: start()
 * → { base, pid, db }, stop()) and the other broker (`other`: { base, start, stop, db, runDir }),
 * one loaded at a time, the order swapped every round. Prints the medians as a Markdown table.
 */
export async function compare({ ours, other, names, seconds, rounds, run }) {
  const results = { ours: [], other: [] };
  const memory = { ours: [], other: [] };
  const sides = {
    ours: {
      title: 'this app',
      up: async () => {
        const s = await ours.start();
        await waitHealthy(s.base);
        return s;
      },
      down: () => ours.stop(),
    },
    other: {
      title: other.base,
      up: async () => {
        if (other.start) await sh(other.start, { PORT: new URL(other.base).port });
        await waitHealthy(other.base);
        const pidFile = other.runDir && path.join(other.runDir, 'pid');
        const fromFile = pidFile && fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8')) : undefined;
        const pid = fromFile && cpuOf(fromFile) !== undefined ? fromFile : pidOnPort(new URL(other.base).port);
        if (!pid) console.warn(`[compare] no pid for ${other.base}: its CPU is not measured`);
        return { base: other.base, pid, db: other.db };
      },
      down: async () => {
        if (other.stop) await sh(other.stop, { PORT: new URL(other.base).port });
      },
    },
  };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['ours', 'other'] : ['other', 'ours'];
    for (const side of order) {
      const s = await sides[side].up();
      console.log(`\nround ${round + 1}/${rounds}: ${sides[side].title} (pid ${s.pid ?? '?'})`);
      const idle = s.pid ? rssOf(s.pid) : undefined;
      try {
        results[side].push(
          await runScenariosOnce({ base: s.base, pid: s.pid, db: s.db, seconds, tag: `${run}.${round}`, names }),
        );
        const after = s.pid ? rssOf(s.pid) : undefined;
        memory[side].push({ idle: idle?.rss, peak: after?.peak, end: after?.rss });
        console.log(
          `RSS: ${fmt(idle?.rss)} MB at start, ${fmt(after?.rss)} MB at the end, peak ${fmt(after?.peak)} MB`,
        );
      } finally {
        await sides[side].down();
      }
    }
  }
  const table = tableOf({ results, memory, seconds, rounds, otherTitle: other.base });
  console.log(`\n${table}`);
  return { results, memory, table };
}

/** The medians of the rounds, side by side, as a Markdown table. */
function tableOf({ results, memory, seconds, rounds }) {
  const keys = results.ours[0]?.map((r) => `${r.scenario}|${r.label}`) ?? [];
  const pick = (side, key, field) =>
    median(results[side].map((round) => round.find((r) => `${r.scenario}|${r.label}` === key)?.[field]));
  const ratio = (a, b) => (a !== undefined && b ? `×${(a / b).toFixed(2)}` : '—');
  const lines = [
    `Medians of ${rounds} round${rounds > 1 ? 's' : ''} of ${seconds} s per scenario, one broker loaded at a time. CPU: user + system time from /proc of the server process(es) and of the PostgreSQL backends of its database, per message (pushed, or consumed where nothing is pushed).`,
    '',
    '| scenario | this app | C++ | ratio | server CPU µs/msg (ours / C++) | PostgreSQL CPU µs/msg (ours / C++) |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const key of keys) {
    const [scenario, label] = key.split('|');
    const unit = results.ours[0].find((r) => `${r.scenario}|${r.label}` === key)?.unit;
    const a = pick('ours', key, 'rate');
    const b = pick('other', key, 'rate');
    const p99a = pick('ours', key, 'popP99');
    const p99b = pick('other', key, 'popP99');
    const sa = pick('ours', key, 'serverUs');
    const sb = pick('other', key, 'serverUs');
    const pa = pick('ours', key, 'pgUs');
    const pb = pick('other', key, 'pgUs');
    const p99 = (v) => (v !== undefined ? ` (pop p99 ${fmt(v, 1)} ms)` : '');
    lines.push(
      `| \`${scenario}\`${label ? ` ${label}` : ''} | ${fmt(a)} ${unit}${p99(p99a)} | ${fmt(b)}${p99(p99b)} | ${ratio(a, b)} | ${
        sa !== undefined ? `${fmt(sa, 1)} / ${fmt(sb, 1)} (${ratio(sa, sb)})` : '—'
      } | ${pa !== undefined ? `${fmt(pa, 1)} / ${fmt(pb, 1)} (${ratio(pa, pb)})` : '—'} |`,
    );
  }
  const mem = (side, field) => median(memory[side].map((m) => m[field]));
  lines.push(
    `| RSS at start / peak (MB) | ${fmt(mem('ours', 'idle'))} / ${fmt(mem('ours', 'peak'))} | ${fmt(mem('other', 'idle'))} / ${fmt(mem('other', 'peak'))} | ×${(mem('ours', 'peak') / mem('other', 'peak')).toFixed(1)} (peak) | — | — |`,
  );
  return lines.join('\n');
}
