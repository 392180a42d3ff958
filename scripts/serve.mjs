// The production server of the built app (`npm start`, the tests, the bench): one Next.js app in
// one Node.js process. Next.js serves the dashboard's pages; requests for a route handler (the
// broker's API, the dashboard's JSON routes, /health) go straight to the same compiled handlers,
// without Next's per-request routing, request stores and proxies: on this 2-core machine that took
// a trivial handler from ~2.7 ms to ~0.9 ms of CPU per request (docs/performance.md).
// Everything a direct dispatch does not know (pages, assets, a method a route does not export)
// goes to Next's own request handler. `npm start` (scripts/start.mjs) imports this module into its
// own process rather than running it as a child: one Node.js process serves.
//   HOST=127.0.0.1 PORT=6632 DATABASE_URL=... node scripts/serve.mjs
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import { format, stripVTControlCharacters } from 'node:util';
import { loadConfig } from '../lib/config.mjs';
import { initLogger, log } from '../lib/log.mjs';
import { yieldCpuWhileBooting } from './lib/boot-priority.mjs';
import { exit } from './lib/exit.mjs';
import { collectWhenIdle } from './lib/idle-collect.mjs';
import { logStream } from './lib/log-stream.mjs';
import { onStopSignals } from './lib/signals.mjs';
import { patternOf } from './lib/routes.mjs';
import { serveRoutes } from './lib/serve-routes.mjs';

const root = path.join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);

let cfg;
try {
  cfg = loadConfig();
} catch (err) {
  // no configuration to read a level from: say it at fatal, synchronously, and stop
  initLogger({ level: 'info', stream: (await import('pino')).default.destination({ dest: 1, sync: true }) });
  log('serve').fatal({ err: err.message }, 'invalid configuration');
  process.exit(1);
}
initLogger({ level: cfg.log.level, stream: await logStream(cfg) });
// Next.js is imported after this: most of the boot's CPU is its loading and the app's
const restorePriority = yieldCpuWhileBooting(cfg.bootNice);
const { default: next } = await import('next');
// Next.js writes its own lines with console ("✓ Running next.config.js ..."): they go through the
// logger too, so that stdout stays one JSON object per line for whatever collects it.
for (const [method, level] of [
  ['log', 'info'],
  ['info', 'info'],
  ['debug', 'debug'],
  ['warn', 'warn'],
  ['error', 'error'],
]) {
  console[method] = (...args) => log('next')[level](stripVTControlCharacters(format(...args)));
}

process.env.NEXT_TELEMETRY_DISABLED = '1';

// `npm run dev` (--dev): Next compiles on demand and hot-reloads; the same server, settings, headers
// and answers around it, every request through Next's handler (scripts/lib/serve-routes.mjs).
const dev = process.argv.includes('--dev');
const app = next({ dev, dir: root, hostname: cfg.host, port: cfg.port });
if (!dev) compileChunkCopiesOnce(path.join(root, '.next', 'server', 'chunks'));
await app.prepare();
// instrumentation.ts's boot (configuration, migrations, the push listener) must be done before
// the first request: Next may run it lazily. It runs once, whoever calls it first.
if (!dev) await require(path.join(root, '.next', 'server', 'instrumentation.js')).register();
const nextHandler = app.getRequestHandler();
// The headers next.config.js gives everything Next serves, and for the API's JSON a policy that
// allows nothing to run or frame it.
const securityHeaders = {
  ...Object.fromEntries(
    (await require('../next.config.js').headers())[0].headers.map((h) => [h.key.toLowerCase(), h.value]),
  ),
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};
const { routes, match, fastPath } = await serveRoutes({ root, dev, fastPath: cfg.serveFastPath });
if (!dev) {
  releaseChunkCopies(path.join(root, '.next', 'server', 'chunks'));
  // No forced full collection at boot (~0.1 s of its CPU): what the boot, and any load after it,
  // grew is given back in the first quiet interval (docs/performance.md, "Memory").
  collectWhenIdle();
}

/**
 * The copies of one chunk (below) are compiled once: a chunk file whose text, its source-map
 * comment aside, is one already loaded gets that one's exports, the list of module factories that
 * Turbopack's runtime would skip anyway. The boot then compiles one copy of the shared chunk
 * instead of 46: its CPU (which a rolling restart takes from the instances still serving on the
 * same cores) and its peak heap fall (docs/performance.md, "Memory").
 */
function compileChunkCopiesOnce(chunksDir) {
  const load = Module._extensions['.js'];
  // the chunks loaded, by the length of their text before its source-map comment
  const loaded = new Map();
  // Read as bytes into two buffers reused for every file: decoding each copy into a string (two-byte,
  // ~0.9 MB) or allocating a buffer per file cost ~0.2 s of the boot's CPU (docs/performance.md).
  const buffers = [Buffer.alloc(0), Buffer.alloc(0)];
  const code = (filename, which) => {
    const fd = fs.openSync(filename, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      if (buffers[which].length < size) buffers[which] = Buffer.allocUnsafe(size * 2);
      const buffer = buffers[which];
      let read = 0;
      for (let n; read < size && (n = fs.readSync(fd, buffer, read, size - read)) > 0; ) read += n;
      const text = buffer.subarray(0, read);
      const comment = text.lastIndexOf('\n//# sourceMappingURL=');
      return comment < 0 ? text : text.subarray(0, comment);
    } finally {
      fs.closeSync(fd);
    }
  };
  Module._extensions['.js'] = (module, filename) => {
    if (!filename.startsWith(chunksDir + path.sep)) return load(module, filename);
    const text = code(filename, 0);
    const same = loaded.get(text.length) ?? [];
    const first = same.find((other) => code(other.filename, 1).equals(text));
    if (first) {
      module.exports = first.exports;
      return;
    }
    load(module, filename);
    same.push(module);
    loaded.set(text.length, same);
  };
}

/**
 * Turbopack writes the server's shared chunk once per route (here 43 files of 454 KB, the same
 * modules, differing only in their source-map comment), and Node keeps each file it required, with
 * its source text (two-byte, ~0.9 MB a copy), alive through the require cache. Turbopack's runtime
 * installs a module's factory from the first chunk that has it and remembers which chunk files it
 * loaded, so it never reads a loaded chunk's exports again: dropping them (from the cache and
 * from the runtime module's children) lets the copies go (36 MB of heap here,
 * docs/performance.md "Memory"). The runtime itself stays cached: a page
 * loaded later must find the same runtime and its modules.
 */
function releaseChunkCopies(chunksDir) {
  const released = new Set();
  for (const [file, mod] of Object.entries(require.cache)) {
    if (!file.startsWith(chunksDir) || path.basename(file).startsWith('[turbopack]')) continue;
    released.add(mod);
    delete require.cache[file];
  }
  // the runtime's Module lists each chunk it required among its children, exports and all
  for (const mod of Object.values(require.cache)) {
    if (mod?.children.some((child) => released.has(child)))
      mod.children = mod.children.filter((child) => !released.has(child));
  }
}

/** How long a connection whose request body was not read stays open after its answer, reading what still comes. */
const LINGER_MS = 30_000;

/**
 * The handler answered without reading the whole body (a 413, a refusal): the connection cannot
 * carry another request, so the answer says `Connection: close`. Destroying the socket while the
 * client is still sending would reset the connection, and a client that reads its answer only
 * after sending everything (Python's http.client) would never see it. So the rest of the body is
 * read and dropped, the answer is written, the write side is closed after it (FIN), and the socket
 * is destroyed when the client closes its side or after LINGER_MS.
 */
function closeAfterAnswer(req, res) {
  res.shouldKeepAlive = false;
  req.on('data', () => {});
  req.resume();
  const socket = req.socket;
  // Node's server calls destroySoon() once the last answer on a closing connection is written
  socket.destroySoon = function lingeringClose() {
    this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', () => this.destroy());
    this.resume();
  };
}

/** A caller's X-Request-Id is kept when it is a plain token of sane length (as lib/http/request-log.ts). */
const SANE_REQUEST_ID = /^[\w.:@+\/=-]{1,128}$/;

const requestIdOf = (req) => {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
};

/** Control characters out, length bounded: a header value the client chose, about to be logged. */
const headerValue = (v) => (typeof v === 'string' ? v.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 200) : undefined);

// The client's address for the route handlers' log line (lib/http/request-log.ts): the Request
// they get has none, and a header would be the client's to forge.
const clientAddresses = (globalThis.__queenClientAddress ??= new WeakMap());

/**
 * Why a request target cannot be served, if it cannot. The route, and so the access rule, is
 * chosen from the raw path alone (docs/decisions.md, "How a request's route and principal are
 * decided"), so nothing may read differently once normalized: a target that is not a path (an
 * absolute URL, `*`), a backslash or an encoded slash or backslash (read as a slash by URL
 * parsers), a dot-segment, plain or encoded (`..` climbs out of a parameter into another route).
 * Also a percent-encoding that is not UTF-8 (a stray %FF, a lone surrogate such as %ED%A0%80) or
 * U+0000, which Next.js answered with a 500.
 */
function pathProblem(pathname) {
  if (!pathname.startsWith('/')) return 'the request target must be a path starting with /';
  if (pathname.includes('\\')) return 'path: contains a backslash';
  if (/%(2f|5c)/i.test(pathname))
    return 'path: contains an encoded slash or backslash (%2F, %5C): a name holding one cannot be named in a path';
  if (/\/(\.|%2e){1,2}(\/|$)/i.test(pathname)) return 'path: contains a dot-segment (. or ..)';
  if (/%00/.test(pathname)) return 'path: contains the character U+0000, which PostgreSQL cannot store';
  try {
    decodeURIComponent(pathname);
  } catch {
    return 'malformed percent-encoding in the path';
  }
  return undefined;
}

/** An answer the server gives itself (400, 404, 405), in the one envelope, with its log line. */
function answer(req, res, started, { status, error, route, headers = {} }) {
  const body = JSON.stringify({ error });
  res
    .writeHead(status, {
      ...securityHeaders,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      ...headers,
    })
    .end(body);
  log('http').info(
    {
      requestId: res.getHeader('x-request-id'),
      route: route ?? 'unmatched',
      method: req.method,
      status,
      ms: Math.round((performance.now() - started) * 100) / 100,
      error,
      client: req.socket.remoteAddress,
      userAgent: headerValue(req.headers['user-agent']),
    },
    'request',
  );
}

/**
 * What the route handlers read of a web Request (lib/http: `headers.get`, `url`, `method`,
 * `signal`, `body`), over Node's request: a web Request with its Headers, its signal and its body
 * stream cost about a quarter of a hot request's CPU here (docs/performance.md). The body is
 * Node's request, iterated (lib/http/route.ts readJson); the signal is made when read.
 */
class HandlerRequest {
  #req;
  #controller;
  #aborted = false;
  #body;
  constructor(req, res, url, requestId) {
    this.#req = req;
    res.once('close', () => {
      if (res.writableFinished) return;
      this.#aborted = true;
      this.#controller?.abort();
    });
    this.url = url;
    this.method = req.method;
    const h = req.headers;
    this.headers = {
      get: (name) => {
        const key = name.toLowerCase();
        if (key === 'x-request-id') return requestId;
        const v = h[key];
        return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
      },
    };
  }
  get signal() {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }
  /** Whether the request may carry a body (what it left unread ends its connection: closeAfterAnswer). */
  get hasBody() {
    return this.method !== 'GET' && this.method !== 'HEAD';
  }
  get body() {
    if (!this.hasBody) return null;
    // not destroyed when a handler stops reading early (a 413): see closeAfterAnswer
    this.#body ??= this.#req.iterator({ destroyOnReturn: false });
    return this.#body;
  }
}

// The text of a JSON answer, as lib/http/route.ts made it: written as is (on this path its Response has no body).
const responseTexts = (globalThis.__queenResponseText ??= new WeakMap());

// The route this server matched, handed to route() (lib/http/route.ts), which takes its access rule
// from it and from nothing else: by request on the fast path, by async context through Next's handler.
const dispatchedRoutes = (globalThis.__queenDispatchedRoute ??= new WeakMap());
const routedThroughNext = (globalThis.__queenRoutedThroughNext ??= new AsyncLocalStorage());

// The origin of the URL a handler sees: this server's configured address, never the client's Host
// (a Host of `h/health#` made the path of that URL /health). Next builds its own the same way.
const ownOrigin = `http://${cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host}:${cfg.port}`;

async function dispatch(handler, pattern, params, req, res) {
  const request = new HandlerRequest(req, res, ownOrigin + req.url, String(res.getHeader('x-request-id')));
  clientAddresses.set(request, req.socket.remoteAddress);
  dispatchedRoutes.set(request, pattern);
  const response = await handler(request, { params: Promise.resolve(params) });
  const unread = request.hasBody && !req.complete;
  const out = { ...securityHeaders };
  response.headers.forEach((value, key) => {
    if (key !== 'set-cookie') out[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) out['set-cookie'] = cookies;
  if (unread) {
    out.connection = 'close';
    closeAfterAnswer(req, res);
  }
  const text = responseTexts.get(response);
  if (text !== undefined) {
    res.writeHead(response.status, { ...out, 'content-length': Buffer.byteLength(text) }).end(text);
  } else if (!response.body) {
    res.writeHead(response.status, out).end();
  } else if (out['content-type']?.startsWith('text/event-stream')) {
    res.writeHead(response.status, out);
    res.flushHeaders();
    const reader = response.body.getReader();
    request.signal.addEventListener('abort', () => void reader.cancel().catch(() => {}), { once: true });
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) res.write(chunk.value);
    res.end();
  } else {
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, { ...out, 'content-length': body.length }).end(body);
  }
}

/** A route handler's request through Next's own handler, with the headers the fast path gives the API and its route. */
function throughNext(pattern, req, res) {
  for (const [key, value] of Object.entries(securityHeaders)) res.setHeader(key, value);
  return routedThroughNext.run(pattern, () => nextHandler(req, res));
}

let stopping = false;

/** Responses not yet begun: while shutting down, each one ends its connection. */
const open = new Set();

const server = http.createServer((req, res) => {
  if (stopping) res.shouldKeepAlive = false;
  else {
    open.add(res);
    res.once('close', () => open.delete(res));
  }
  const started = performance.now();
  // every answer carries one, pages and the server's own errors too (docs/api.md)
  res.setHeader('x-request-id', requestIdOf(req));
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const pathname = q < 0 ? url : url.slice(0, q);
  const bad = pathProblem(pathname);
  if (bad) return void answer(req, res, started, { status: 400, error: bad });
  const found = match(pathname);
  const route = found ? patternOf(found.route) : undefined;
  const method = req.method ?? 'GET';
  const handler = found?.route.handlers[method];
  // HEAD and OPTIONS go through Next, which answers them from the GET (HEAD) or the exports; route()
  // refuses a HEAD whose GET is not a public read: a pop's GET takes a lease.
  if (found && !handler && method !== 'HEAD' && method !== 'OPTIONS') {
    const allow = Object.keys(found.route.handlers)
      .filter((m) => /^[A-Z]+$/.test(m) && found.route.handlers[m])
      .join(', ');
    return void answer(req, res, started, {
      status: 405,
      error: `method not allowed (allowed: ${allow})`,
      route,
      headers: { allow },
    });
  }
  if (!found && /^\/(api|streams\/v1)(\/|$)/.test(pathname)) {
    return void answer(req, res, started, { status: 404, error: 'no such API route (see /api/v1/openapi.json)' });
  }
  if (!found) return void nextHandler(req, res);
  if (!fastPath || !handler) return void throughNext(route, req, res);
  const params = Object.fromEntries(Object.entries(found.params).map(([k, v]) => [k, decodeURIComponent(v)]));
  dispatch(handler, route, params, req, res).catch((err) => {
    log('serve').error({ route, method: req.method, err: err?.message ?? String(err) }, 'dispatch failed');
    if (!res.headersSent)
      res
        .writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' })
        .end('{"error":"internal error"}');
    else res.destroy();
  });
});
server.keepAliveTimeout = 65_000; // longer than common load balancers' idle timeouts
// A port in use or not ours to bind: a process that serves nothing must not stay alive, or a
// supervisor never restarts it. Exit 1 at once, naming the address.
server.once('error', async (err) => {
  const why =
    err.code === 'EADDRINUSE' ? 'the port is in use' : err.code === 'EACCES' ? 'no permission to bind it' : err.message;
  log('serve').fatal(
    { host: cfg.host, port: cfg.port, code: err.code, err: err.message },
    `cannot listen on ${cfg.host}:${cfg.port}: ${why}`,
  );
  process.stderr.write(`[serve] cannot listen on ${cfg.host}:${cfg.port}: ${why} (${err.code ?? err.message})\n`);
  await exit(1);
});
// Thousands of long polls arriving together (issue 18): a deep accept queue (Node's default of 511
// overflowed into connection resets at 1,000 new connections a second; the kernel caps it at
// net.core.somaxconn), and a header timeout above the keep-alive one, else a keep-alive socket
// idle between the two is cut as the client reuses it. No cap on sockets (maxConnections unset).
server.headersTimeout = 66_000;
const priorityProblem = await restorePriority();
if (priorityProblem)
  log('serve').warn({ problem: priorityProblem }, 'serving at a lower CPU priority than it was started with');
server.listen({ port: cfg.port, host: cfg.host, backlog: 8192 }, () =>
  log('serve').info({ url: `http://${cfg.host}:${cfg.port}` }, 'broker and dashboard listening'),
);

/**
 * SIGTERM/SIGINT: stop accepting, answer every parked long poll 204 at once (new pops too, claiming
 * nothing), let requests in flight finish within SHUTDOWN_TIMEOUT_MS, close the push listener and
 * the pool, then what scripts/start.mjs started (the embedded PostgreSQL: scripts/lib/exit.mjs),
 * exit 0. Leases already handed out are left to be acked or to expire. The same signal arriving
 * again by another path (the process group, npm) is one delivery; a second signal after it exits
 * at once (scripts/lib/signals.mjs).
 */
async function stop(signal) {
  stopping = true;
  const started = Date.now();
  log('serve').info({ signal }, 'shutting down');
  const closed = new Promise((resolve) => server.close(resolve));
  // keep-alive connections close after the response they are waiting for, not at the next request
  for (const res of open) if (!res.headersSent) res.shouldKeepAlive = false;
  globalThis.__queenShutdown?.drain();
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), cfg.shutdownTimeoutMs);
  await closed;
  clearTimeout(force);
  await globalThis.__queenShutdown?.close().catch((err) => log('serve').error({ err: err.message }, 'closing failed'));
  log('serve').info({ ms: Date.now() - started }, 'stopped');
  await exit(0);
}
onStopSignals({
  first: (signal) => void stop(signal),
  again: (signal) => {
    log('serve').warn({ signal }, 'second signal: exiting now');
    void exit(1);
  },
});
