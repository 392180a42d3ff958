// The one logger of the server: JSON lines on stdout (pino), at LOG_LEVEL. Plain JavaScript so that
// scripts/serve.mjs, which is not bundled, shares it with the route handlers, which are: the first
// caller creates it and the globalThis slot hands the same instance to the other.
import fs from 'node:fs';
import pino from 'pino';
import { config } from './config.mjs';

/** @type {{ __queenLogger?: import('pino').Logger }} */
const slot = /** @type {any} */ (globalThis);

/**
 * Creates the process's logger, once; later calls return it. `stream` replaces the JSON
 * destination (scripts/serve.mjs passes pino-pretty's when stdout is a terminal or LOG_PRETTY asks).
 * @param {{ level?: string, stream?: import('pino').DestinationStream }} [options]
 */
export function initLogger(options = {}) {
  slot.__queenLogger ??= pino(
    {
      level: options.level ?? config().log.level,
      timestamp: pino.stdTimeFunctions.isoTime,
      base: { pid: process.pid },
      formatters: { level: (label) => ({ level: label }) },
      // every line, whoever writes it (Next's own errors included): no query parameters
      hooks: {
        logMethod(args, method) {
          return method.apply(this, /** @type {any} */ (args.map(withoutParamsIn)));
        },
      },
    },
    options.stream ?? stdoutInBatches(),
  );
  return slot.__queenLogger;
}

/** How long a line may wait to be written together with the lines after it. */
const BATCH_MS = 20;
/** Past this many characters waiting, they are written at once. */
const BATCH_CHARS = 64 * 1024;

/**
 * stdout for the log: written asynchronously, so that a slow reader of stdout never stalls a
 * request, and the lines of up to BATCH_MS together. An asynchronous write is a round trip to
 * libuv's thread pool; one per line was most of what a request's log line cost
 * (docs/performance.md, "The request layer against the floor"). The timer holds the process open
 * until its lines are handed on; what still waits at process.exit() is written synchronously.
 */
function stdoutInBatches() {
  const out = pino.destination({ dest: 1, sync: false });
  let waiting = '';
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const release = () => {
    clearTimeout(timer);
    timer = undefined;
    if (waiting === '') return;
    out.write(waiting);
    waiting = '';
  };
  // After pino's own exit handler (registered with the destination): what the destination holds,
  // then the lines still waiting, both written synchronously (an asynchronous write started now
  // would never land). Lost only on a death without an exit (SIGKILL, an abort): up to BATCH_MS.
  process.once('exit', () => {
    clearTimeout(timer);
    try {
      out.flushSync();
    } catch {
      // a write of the destination in flight, or stdout closed
    }
    try {
      if (waiting !== '') fs.writeSync(1, waiting);
    } catch {
      // stdout closed: nothing can be written
    }
    waiting = '';
  });
  return {
    /** @param {string} line */
    write(line) {
      waiting += line;
      if (waiting.length >= BATCH_CHARS) release();
      else timer ??= setTimeout(release, BATCH_MS);
    },
    /** @param {(err?: Error) => void} [cb] */
    flush(cb) {
      release();
      out.flush(cb);
    },
    flushSync() {
      release();
      out.flushSync();
    },
  };
}

/**
 * Drizzle's errors read `Failed query: <sql>\nparams: <values>`, and the values are payloads,
 * names and tokens: a log keeps the SQL and drops the values.
 * @param {string} text
 */
export const withoutParams = (text) => text.replace(/(^|\n|\s)params: [^\n]*/g, '$1params: (not logged)');

/** @param {unknown} arg */
function withoutParamsIn(arg) {
  if (typeof arg === 'string') return withoutParams(arg);
  if (arg instanceof Error) return { err: withoutParams(arg.stack ?? arg.message) };
  if (arg && typeof arg === 'object' && !Array.isArray(arg)) {
    /** @type {Record<string, unknown>} */
    const copy = {};
    for (const [k, v] of Object.entries(arg))
      copy[k] = typeof v === 'string' ? withoutParams(v) : v instanceof Error ? withoutParams(v.message) : v;
    return copy;
  }
  return arg;
}

/** @type {Map<string, import('pino').Logger>} */
const children = new Map();

/**
 * The logger of one part of the server (`component` on every line it writes).
 * @param {string} component
 */
export function log(component) {
  let child = children.get(component);
  if (!child) children.set(component, (child = (slot.__queenLogger ?? initLogger()).child({ component })));
  return child;
}

/** Writes out what the logger still buffers (before process.exit, which would drop it). */
export function flushLog() {
  const logger = slot.__queenLogger;
  if (!logger) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => resolve(undefined);
    setTimeout(done, 500).unref(); // a stream that never calls back (pino-pretty's) holds no exit
    try {
      logger.flush(done);
    } catch {
      done();
    }
  });
}
