// A measuring tool: where a server's main thread spends its time per request, by step of the
// request layer, from a `node --cpu-prof` profile of scripts/serve.mjs (or scripts/floor-server.mjs)
// (docs/performance.md, "The request layer against the floor"). Frames of the built route bundles
// are mapped back to their source files through the build's source maps; each sample goes to the
// step of its innermost frame that names one (a JSON.parse called by readJson is readJson's).
// Samples are wall time of the main thread: where the process waits for a core inside a system
// call (the socket writes), they count time that is not its CPU, so those are shown apart.
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof scripts/serve.mjs   (load it, then SIGTERM)
//   node scripts/profile-steps.mjs /tmp/prof/CPU.*.cpuprofile REQUESTS [--root DIR] [--drill STEP-REGEX]
//
// REQUESTS: the requests served while profiled (the app's "request" log lines; the floor server
// prints its count at exit). Samples before the first request (the boot) are left out.
import fs from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const [file, requestsArg] = process.argv.slice(2);
const requests = Number(requestsArg);
if (!file || !(requests > 0)) {
  console.error('usage: node scripts/profile-steps.mjs FILE.cpuprofile REQUESTS [--root DIR] [--drill STEP-REGEX]');
  process.exit(2);
}
const root = path.resolve(arg('root') ?? path.join(import.meta.dirname, '..'));
const drillInto = arg('drill') && new RegExp(arg('drill'));

const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
for (const n of profile.nodes) for (const child of n.children ?? []) nodes.get(child).parent = n;

const sourceMaps = new Map();
/** A frame of a built bundle, as its source file and line. */
function original(filename, line, column) {
  if (!filename.includes('/.next/server/')) return undefined;
  if (!sourceMaps.has(filename)) {
    try {
      sourceMaps.set(filename, new SourceMap(JSON.parse(fs.readFileSync(`${filename}.map`, 'utf8'))));
    } catch {
      sourceMaps.set(filename, undefined);
    }
  }
  const entry = sourceMaps.get(filename)?.findEntry(line, column);
  return entry?.originalSource
    ? { src: shorten(entry.originalSource.replace(/^(\.\.\/)+/, '')), line: entry.originalLine + 1 }
    : undefined;
}

const shorten = (p) => p.replace(/^.*\/node_modules\//, 'node_modules/').replace(`${root}/`, '');

/** A profile node's place: its source file (relative to the root, or node_modules/...) and line. */
function placeOf(n) {
  if (n.place) return n.place;
  const { url, lineNumber, columnNumber } = n.callFrame;
  const filename = url.replace(/^file:\/\//, '');
  n.place = original(filename, lineNumber, columnNumber) ?? { src: shorten(filename), line: lineNumber + 1 };
  return n.place;
}

// lib/http/route.ts holds both the route() wrapper and readJson, which starts at this line
const routeTs = fs.readFileSync(path.join(root, 'lib/http/route.ts'), 'utf8').split('\n');
const readJsonLine = routeTs.findIndex((l) => l.startsWith('export async function readJson')) + 1;

const BROKER =
  /^lib\/broker\/(pop|push|ack|waiters|conflicts|encryption-flags|holder-clients|crypto|shutdown|empty-reasons)\.ts$/;

/** The steps of a request, in the order a frame is tested against them. */
const STEPS = [
  [
    'request log line (pino, request-log.ts)',
    (s) => /node_modules\/(pino|sonic-boom)/.test(s) || s === 'lib/log.mjs' || s === 'lib/http/request-log.ts',
  ],
  ['request histogram (metrics)', (s) => s.startsWith('lib/metrics/') || s.includes('node_modules/prom-client')],
  [
    'validation (zod, pop query)',
    (s) => s.includes('node_modules/zod') || s === 'lib/broker/validate.ts' || s === 'lib/broker/pop-params.ts',
  ],
  [
    'access: route rule, Host, cross-site, auth',
    (s) => /^lib\/http\/(auth|host|origin|access|route-table)\.ts$/.test(s) || s.includes('node_modules/jose'),
  ],
  ['body read + JSON parse (readJson)', (s, line) => s === 'lib/http/route.ts' && line >= readJsonLine],
  ['route() wrapper', (s) => s === 'lib/http/route.ts'],
  [
    'pg driver + drizzle',
    (s) => /node_modules\/(pg|pg-[a-z]+|drizzle-orm|postgres-[a-z]+)\//.test(s) || s === 'db/pool.ts',
  ],
  [
    'serve.mjs: routing, dispatch, answer written',
    (s) => /^scripts\/(serve\.mjs|lib\/serve-routes\.mjs|lib\/routes\.mjs)$/.test(s),
  ],
  [
    'handler + broker (SQL arguments, answer JSON)',
    (s) =>
      BROKER.test(s) ||
      ['lib/http/pop-route.ts', 'lib/exact-json.ts', 'lib/uuid.ts'].includes(s) ||
      s.startsWith('app/'),
  ],
  ['floor server handler', (s) => s === 'scripts/floor-server.mjs'],
  ['Next.js runtime (its patched nextTick, Date)', (s) => s.startsWith('node_modules/next/')],
];

const stepOfPlace = ({ src, line }) => {
  for (const [step, test] of STEPS) if (test(src, line)) return step;
  if (src.startsWith('lib/') || src.startsWith('app/')) return `other app code (${src})`;
  if (src.startsWith('node_modules/')) return `other library (${src.split('/')[1]})`;
  return undefined;
};

const SOCKET_WRITES = /^(writev|writeBuffer|writeUtf8String|writeLatin1String|writeAsciiString)$/;

/** The step of one sample, from its stack (innermost frame first). */
function stepOf(n) {
  const name = n.callFrame.functionName;
  if (name === '(garbage collector)') return 'garbage collection';
  if (name === '(program)') return '(program: V8 and native code, unattributed)';
  const stack = [];
  for (let x = n; x; x = x.parent) stack.push(x);
  if (!n.callFrame.url && SOCKET_WRITES.test(name)) {
    if (stack.some((x) => x.callFrame.url.includes('/node_modules/pg/')))
      return 'socket write to PostgreSQL (wall time)';
    if (!stack.some((x) => /sonic-boom|pino/.test(x.callFrame.url))) return 'socket write of the answer (wall time)';
  }
  for (const x of stack) {
    const step = stepOfPlace(placeOf(x));
    if (step) return step;
  }
  return stack.some((x) => x.callFrame.url.startsWith('node:'))
    ? 'Node.js: HTTP parsing, sockets, timers, streams'
    : `(unattributed: ${name})`;
}

const servesRequest = (n) => {
  for (let x = n; x; x = x.parent) if (x.callFrame.functionName === 'parserOnHeadersComplete') return true;
  return false;
};
const first = Math.max(
  0,
  profile.samples.findIndex((id) => servesRequest(nodes.get(id))),
);

const byStep = new Map();
const drilled = new Map();
const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
let busy = 0;
for (let i = first; i < profile.samples.length; i++) {
  const n = nodes.get(profile.samples[i]);
  const us = profile.timeDeltas[i] ?? 0;
  if (n.callFrame.functionName === '(idle)') continue;
  busy += us;
  const step = stepOf(n);
  add(byStep, step, us);
  if (drillInto?.test(step)) {
    const { src, line } = placeOf(n);
    add(drilled, `${n.callFrame.functionName || '(anonymous)'} ${src}:${line}`, us);
  }
}

const perRequest = (us) => (us / requests).toFixed(1).padStart(8);
console.log(`${requests} requests, ${(busy / 1e6).toFixed(2)} s sampled busy: ${perRequest(busy).trim()} µs a request`);
for (const [step, us] of [...byStep].sort((a, b) => b[1] - a[1]))
  console.log(`${perRequest(us)} µs  ${((us / busy) * 100).toFixed(1).padStart(5)}%  ${step}`);
if (drillInto) {
  console.log(`\nleaf frames of ${drillInto}:`);
  for (const [where, us] of [...drilled].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`${perRequest(us)} µs  ${where}`);
}
