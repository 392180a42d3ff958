// A V8 code cache for the CommonJS modules the production server loads (Next.js, the build's
// chunks, their dependencies), for Node.js versions without `module.enableCompileCache()` (it came
// in 22.1; this project runs on 20 too). Compiling them was ~0.2 s of a boot's CPU on this 2-core
// machine, plus the functions the boot runs, CPU a rolling restart takes from the instances still
// serving (docs/performance.md, "Less of the boot"). The cache lives in the build's cache folder, in a
// folder per build, Node.js version and architecture, one file per module keyed by its path, size
// and mtime; V8 itself refuses data that does not fit its version, flags or the source (the module
// then compiles as usual and its cache is written again). It is written some seconds after the
// modules compiled without one, with the functions run meanwhile (the first requests' too); a
// folder that cannot be written just means no cache.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { log } from '../../lib/log.mjs';

const WRAPPER = '(function (exports, require, module, __filename, __dirname) {';
const MODULES_PER_TURN = 20;

/**
 * Compiles the CommonJS modules under `roots` with their cached code when `cacheDir` has it.
 * `start()`, once the boot is done, writes the cache of the modules compiled without one
 * `afterMs` later, and again `afterMs` after any module compiled later (a page's, at its first
 * request).
 * @param {{ cacheDir: string, buildId: string, roots: string[], afterMs: number }} options
 */
export function cachingCompiledCode({ cacheDir, buildId, roots, afterMs }) {
  const name = `${buildId}-${process.version}-${process.arch}`;
  const dir = path.join(cacheDir, name);
  const compile = Module.prototype._compile;
  /** the scripts compiled without usable data, by their cache file, until written */
  const unsaved = new Map();
  let started = false;
  let fromCache = 0;
  let timer;
  const later = () => {
    timer ??= setTimeout(save, afterMs);
    timer.unref();
  };

  Module.prototype._compile = function compileCached(content, filename, format) {
    // a module with `import()` compiles as usual: a vm.Script's import() needs a loader callback,
    // and the one that resolves as Node's own does is experimental in Node.js 20 (and warns)
    if (
      format === 'module' ||
      !roots.some((root) => filename.startsWith(root)) ||
      content.startsWith('#!') ||
      content.includes('import(')
    )
      return compile.call(this, content, filename, format);
    let file;
    try {
      const { size, mtimeMs } = fs.statSync(filename);
      file = path.join(dir, `${createHash('sha1').update(`${filename}\0${size}\0${mtimeMs}`).digest('hex')}.bin`);
    } catch {
      return compile.call(this, content, filename, format);
    }
    let cachedData;
    try {
      cachedData = fs.readFileSync(file);
    } catch {}
    let script;
    try {
      // the wrapper on a line of its own, which the line offset takes back: positions in stack
      // traces are the file's own
      script = new vm.Script(`${WRAPPER}\n${content}\n})`, { filename, lineOffset: -1, cachedData });
    } catch {
      // not CommonJS after all (ESM syntax): Node's own compile decides
      return compile.call(this, content, filename, format);
    }
    if (cachedData && !script.cachedDataRejected) fromCache++;
    else {
      unsaved.set(file, script);
      if (started) later();
    }
    const wrapper = script.runInThisContext();
    return Reflect.apply(wrapper, this.exports, [
      this.exports,
      requireOf(this),
      this,
      filename,
      path.dirname(filename),
    ]);
  };

  /** Writes the cache a few modules at a time: a serving instance answers requests in between. */
  function save() {
    timer = undefined;
    let written = 0;
    let cpuMs = 0;
    const step = () => {
      const began = process.cpuUsage();
      try {
        if (unsaved.size) fs.mkdirSync(dir, { recursive: true });
        let n = 0;
        for (const [file, script] of unsaved) {
          if (n++ === MODULES_PER_TURN) {
            const used = process.cpuUsage(began);
            cpuMs += (used.user + used.system) / 1000;
            return void setImmediate(step);
          }
          unsaved.delete(file);
          // instances booting from the same build write the same files: whole files only
          const temp = `${file}.${process.pid}.tmp`;
          fs.writeFileSync(temp, script.createCachedData());
          fs.renameSync(temp, file);
          written++;
        }
        // the caches of other builds and Node.js versions
        for (const other of fs.readdirSync(cacheDir)) {
          if (other !== name) fs.rmSync(path.join(cacheDir, other), { recursive: true, force: true });
        }
      } catch (err) {
        unsaved.clear();
        log('serve').debug({ dir, err: err.message }, 'code cache not written');
      }
      const used = process.cpuUsage(began);
      cpuMs += (used.user + used.system) / 1000;
      if (written) log('serve').debug({ dir, modules: written, cpuMs: Math.round(cpuMs) }, 'code cache written');
    };
    step();
  }

  return {
    start() {
      started = true;
      log('serve').debug({ dir, fromCache, compiled: unsaved.size }, 'modules compiled at boot');
      later();
    },
  };
}

/** The `require` a module's code gets, as Node's loader makes it (lib/internal/modules/helpers.js). */
function requireOf(mod) {
  const require = (id) => mod.require(id);
  require.resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
  require.resolve.paths = (request) => Module._resolveLookupPaths(request, mod);
  require.main = process.mainModule;
  require.extensions = Module._extensions;
  require.cache = Module._cache;
  return require;
}
